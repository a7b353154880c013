// `fecr batch` in local mode (the service in-process, the embedded emulator), run in-process with a temp HOME:
// CSV (grouping, computed figures, a bad row), JSONL and JSON array inputs, --dry-run, the journal and --resume,
// and the streaming JSON array splitter on its own.
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitJsonArray } from '../src/client/batch/json-array.js';
import { bodyHash, documentKey } from '../src/client/batch/journal.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-batch-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => runCli(args, { env, cwd: work });
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/documents/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
const results = (file: string) =>
  readFileSync(join(work, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { row: number; numeroReferencia?: number; clave?: string; state: string; estado?: string; errors?: { path: string; message: string }[] })
    .sort((a, b) => a.row - b.row);

async function listed(): Promise<Array<{ clave: string; numeroConsecutivo: string; estado: string }>> {
  const r = await fecr(['documents', 'list', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Array<{ clave: string; numeroConsecutivo: string; estado: string }>;
}
const numeroOf = (consecutivo: string) => Number(consecutivo.slice(10));

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  const r = await fecr(['emisor', 'register', 'issuer.json']);
  expect(r.code, r.stderr).toBe(0);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fecr batch FILE.csv', () => {
  it('sends 2 documents, reports the bad one with its row, exit 1; the sent ones reach aceptado', async () => {
    copyFileSync(new URL('../fixtures/batch/example.csv', import.meta.url), join(work, 'example.csv'));
    const r = await fecr(['batch', 'example.csv', '--wait', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 3, sent: 2, invalid: 1, errors: 0, aceptado: 2, rechazado: 0, pending: 0, interrupted: false });
    const res = results('example.csv.results.jsonl');
    expect(res.map((x) => [x.row, x.numeroReferencia, x.state, x.estado])).toEqual([
      [2, 201, 'enviado', 'aceptado'],
      [4, 202, 'enviado', 'aceptado'],
      [5, 203, 'invalido', undefined],
    ]);
    expect(res[0]!.clave).toMatch(/^\d{50}$/);
    expect(res[2]!.errors).toEqual([{ path: 'row 6.cantidad', message: expect.stringContaining('got "tres"') }]);
    // The figures were computed from the rows (fixtures: the two-line FE is 105939.195 in total).
    const docs = await listed();
    const fe = docs.find((d) => d.clave === res[0]!.clave) as unknown as { totalComprobante: string; estado: string };
    expect(fe.totalComprobante).toBe('105939.19500');
    expect(fe.estado).toBe('aceptado');
    expect(docs.find((d) => d.clave === res[1]!.clave)?.estado).toBe('aceptado');
    // The journal: a start and a done record per submitted document.
    const journal = readFileSync(join(work, 'example.csv.journal'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(journal.filter((j) => 'bodyHash' in j)).toHaveLength(2);
    expect(journal.filter((j) => j.state === 'enviado').map((j) => j.clave).sort()).toEqual([res[0]!.clave, res[1]!.clave].sort());
  }, 60_000);

  it('a header that is not the layout is one line, exit 1, nothing sent', async () => {
    writeFileSync(join(work, 'bad-header.csv'), 'emisor,numeroRef,tipoDoc\n1,2,3\n');
    const r = await fecr(['batch', 'bad-header.csv']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: bad-header\.csv: unknown column "numeroRef"/);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('without --resume an existing journal is a usage error', async () => {
    const r = await fecr(['batch', 'example.csv']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('use --resume');
  });
});

describe('fecr batch FILE.jsonl / FILE.json', () => {
  it('JSONL: one body per line; a broken line is an invalid result with its line number', async () => {
    const a = { ...fixture('01-fe-servicios-13'), numeroReferencia: 301 };
    const b = { ...fixture('10-te-sin-receptor'), numeroReferencia: 302 };
    writeFileSync(join(work, 'docs.jsonl'), `${JSON.stringify(a)}\n\n{"emisor": "3101123456", oops\n${JSON.stringify(b)}\n`);
    const r = await fecr(['batch', 'docs.jsonl', '--out', 'out.jsonl']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('total\tsent\tinvalid\terrors\n3\t2\t1\t0\n');
    const res = results('out.jsonl');
    expect(res.map((x) => [x.row, x.state])).toEqual([
      [1, 'enviado'],
      [3, 'invalido'],
      [4, 'enviado'],
    ]);
    expect(res[1]!.errors![0]!.path).toBe('line 3');
    expect(res[1]!.errors![0]!.message).toMatch(/^invalid JSON/);
  }, 60_000);

  it('JSON array: element by element; a refused body carries the service findings', async () => {
    const a = { ...fixture('02-fe-bienes-servicios-descuentos'), numeroReferencia: 401 };
    const bad = { ...fixture('01-fe-servicios-13'), numeroReferencia: 402, codigoActividad: '12' };
    writeFileSync(join(work, 'docs.json'), JSON.stringify([a, bad], null, 2));
    const r = await fecr(['batch', 'docs.json', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 2, sent: 1, invalid: 1 });
    const res = results('docs.json.results.jsonl');
    expect(res[0]).toMatchObject({ row: 1, numeroReferencia: 401, state: 'enviado' });
    expect(res[1]).toMatchObject({ row: 2, numeroReferencia: 402, state: 'invalido' });
    expect(res[1]!.errors!.some((e) => e.path === 'codigoActividad')).toBe(true);
  }, 60_000);
});

describe('fecr batch --dry-run', () => {
  it('validates every document (rules, totals, XSD) and sends nothing', async () => {
    const before = (await listed()).length;
    const ok = { ...fixture('03-fe-tarifas-reducidas'), numeroReferencia: 501 };
    const wrongTotal: Record<string, any> = { ...fixture('01-fe-servicios-13'), numeroReferencia: 502 };
    (wrongTotal.resumenFactura as Record<string, unknown>).totalComprobante = '1.00';
    writeFileSync(join(work, 'dry.jsonl'), `${JSON.stringify(ok)}\n${JSON.stringify(wrongTotal)}\n`);
    const r = await fecr(['batch', 'dry.jsonl', '--dry-run']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('total\tvalid\tinvalid\terrors\n2\t1\t1\t0\n');
    const res = results('dry.jsonl.dry-run.results.jsonl');
    expect(res[0]).toEqual({ row: 1, numeroReferencia: 501, state: 'valido' });
    expect(res[1]!.errors).toEqual([{ path: 'resumenFactura.totalComprobante', message: expect.stringContaining('but the computed totalComprobante is 918125.00000') }]);
    expect((await listed()).length).toBe(before);
    expect(existsSync(join(work, 'dry.jsonl.journal'))).toBe(false);
  }, 60_000);

  it('CSV dry-run points findings at rows', async () => {
    const csv = readFileSync(new URL('../fixtures/batch/example.csv', import.meta.url), 'utf8').replace('3229100000000,Libro', '322910000000,Libro');
    writeFileSync(join(work, 'dry.csv'), csv);
    const r = await fecr(['batch', 'dry.csv', '--dry-run', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 3, sent: 1, invalid: 2 });
    const res = results('dry.csv.dry-run.results.jsonl');
    expect(res[1]!.errors).toEqual([{ path: 'row 4.codigo', message: 'must be a 13-digit CABYS code' }]);
    expect(res[2]!.errors!.map((e) => e.path)).toEqual(['row 6.cantidad']);
  }, 60_000);
});

describe('fecr batch --resume', () => {
  it('after a partial run, sends every document exactly once', async () => {
    const body = (n: number) => JSON.stringify({ ...fixture('01-fe-servicios-13'), numeroReferencia: n });
    // First run: documents 601-603 (the journal marks them finished).
    writeFileSync(join(work, 'resume.jsonl'), [601, 602, 603].map(body).join('\n') + '\n');
    expect((await fecr(['batch', 'resume.jsonl'])).code).toBe(0);
    // A crash after 604 was submitted but before its "done" record: started in the journal, stored by the service.
    writeFileSync(join(work, 'd604.json'), body(604));
    const sent604 = await fecr(['send', 'd604.json']);
    expect(sent604.code, sent604.stderr).toBe(0);
    const d604 = JSON.parse(body(604)) as unknown;
    appendFileSync(join(work, 'resume.jsonl.journal'), JSON.stringify({ row: 4, key: documentKey(d604), bodyHash: bodyHash(d604) }) + '\n');
    appendFileSync(join(work, 'resume.jsonl'), [604, 605, 606].map(body).join('\n') + '\n');

    const r = await fecr(['batch', 'resume.jsonl', '--resume', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 6, sent: 6, skipped: 3, invalid: 0, errors: 0 });
    const res = results('resume.jsonl.results.jsonl');
    expect(res.map((x) => x.row)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(res[3]!.clave).toBe(sent604.stdout.trim()); // the resubmission got the stored clave back

    const docs = (await listed()).filter((d) => numeroOf(d.numeroConsecutivo) >= 601 && numeroOf(d.numeroConsecutivo) <= 606);
    expect(docs).toHaveLength(6);
    expect(new Set(docs.map((d) => d.clave)).size).toBe(6);
    expect(new Set(res.map((x) => x.clave))).toEqual(new Set(docs.map((d) => d.clave)));
  }, 60_000);
});

describe('splitJsonArray', () => {
  async function split(chunks: string[]) {
    const out = [];
    for await (const e of splitJsonArray((async function* () {
      yield* chunks;
    })()))
      out.push(e);
    return out;
  }

  it('splits across chunk boundaries, with brackets, commas and escapes inside strings', async () => {
    const text = JSON.stringify([{ a: '[,]{"}' }, { b: [1, { c: 'x\\"y' }] }, 3, 'str', null]);
    for (const size of [1, 2, 7, text.length]) {
      const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      const els = await split(chunks);
      expect(els.map((e) => ('text' in e ? JSON.parse(e.text) : e))).toEqual([{ a: '[,]{"}' }, { b: [1, { c: 'x\\"y' }] }, 3, 'str', null]);
      expect(els.map((e) => e.index)).toEqual([1, 2, 3, 4, 5]);
    }
  });

  it('an empty array yields nothing; a torn array and trailing text are errors', async () => {
    expect(await split([' [ ] '])).toEqual([]);
    expect(await split(['[{"a":1}, {"b":'])).toEqual([{ index: 1, text: '{"a":1}' }, { index: 2, error: expect.stringContaining('unexpected end of file') }]);
    expect(await split(['[1] x'])).toEqual([{ index: 1, text: '1' }, { index: 2, error: expect.stringContaining('after the closing') }]);
    await expect(split(['{"a":1}'])).rejects.toThrow('not a JSON array');
  });
});
