// `fecr batch` in local mode (the service in-process, the embedded emulator), run in-process with a temp HOME:
// CSV (grouping, computed figures, a bad row; the new kinds ND, FEC, FEE and REP to aceptado and their malformed rows
// found at row and column), JSONL and JSON array inputs, --dry-run, the journal and --resume,
// and the streaming JSON array splitter on its own.
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
    // The receptor mails come after the verdicts, and the batch ends when each had its attempt (none left queued).
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 3, sent: 2, invalid: 1, errors: 0, aceptado: 2, rechazado: 0, pending: 0, interrupted: false, mailsLeft: 0 });
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
    // The FE's receptor got its mail (the TE of row 4 has no receptor, hence no mail).
    expect((fe as unknown as { correo: unknown }).correo).toMatchObject({ estado: 'enviado', destinatarios: ['compras@elcafetal.example.cr'] });
    expect(readdirSync(join(dir, 'data', 'outbox')).filter((f) => f.endsWith('.eml'))).toEqual([`${res[0]!.clave}-1.eml`]);
    // Written after the batch's last verdict (a batch mails after its verdicts).
    const lastVerdict = Math.max(...docs.map((d) => Date.parse((d as unknown as { decidedAt: string }).decidedAt)));
    expect(statSync(join(dir, 'data', 'outbox', `${res[0]!.clave}-1.eml`)).mtimeMs).toBeGreaterThanOrEqual(lastVerdict);
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

  it('without --resume or --restart an earlier run is a usage error', async () => {
    const r = await fecr(['batch', 'example.csv']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'error: example.csv.journal and example.csv.results.jsonl exist from an earlier run: pass --resume to continue it, or --restart to move them aside and start over',
    );
  });
});

describe('fecr batch FILE.csv: the new kinds (ND 2, FEC 8, FEE 9, REP 10)', () => {
  const header = readFileSync(new URL('../fixtures/batch/new-kinds.csv', import.meta.url), 'utf8').split('\n')[0]!;
  const columns = header.split(',');
  const quote = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const csvOf = (rows: Record<string, string>[]) => [header, ...rows.map((r) => columns.map((c) => quote(r[c] ?? '')).join(','))].join('\n') + '\n';
  const doc = { emisor: '3101123456', codigoActividad: '6201.0', fechaEmision: '2026-03-21T09:00:00-06:00', moneda: 'CRC', medioPago: '04' };
  const bncr = { receptorNombre: 'BANCO NACIONAL DE COSTA RICA', receptorTipo: '02', receptorNumero: '4000001021' };
  const service = { codigo: '8313200000100', detalle: 'Consultoría en TI', cantidad: '1', unidadMedida: 'Sp', precioUnitario: '25000', codigoTarifa: '08' };
  const ref = { referenciaTipoDocIR: '01', referenciaNumero: '50605032600310112345600100001010000000102148213570', referenciaFechaEmision: '2026-03-05T14:20:00-06:00', referenciaCodigo: '02', referenciaRazon: 'Ajuste de precio' };
  const nd = { ...doc, tipoDoc: '2', ...bncr, ...service, ...ref };
  const fec = {
    ...doc, tipoDoc: '8', proveedorNombre: 'Juan Agricultor Mora', proveedorTipo: '01', proveedorNumero: '301230456',
    referenciaTipoDocIR: '14', referenciaNumero: 'RE-2026-0042', referenciaFechaEmision: '2026-03-22T07:00:00-06:00', referenciaCodigo: '04', referenciaRazon: 'Compra de café',
    codigo: '0161001020000', detalle: 'Café cereza', cantidad: '200', unidadMedida: 'Kg', precioUnitario: '1850', codigoTarifa: '02',
  };
  const fee = {
    ...doc, tipoDoc: '9', receptorNombre: 'GREEN BEANS IMPORTS INC', receptorTipo: '05', receptorNumero: 'US770123456', receptorOtrasSenasExtranjero: '1200 Harbor Boulevard, Long Beach, CA 90802',
    codigo: '0161099020000', detalle: 'Café verde', cantidad: '500', unidadMedida: 'Kg', precioUnitario: '6.40', codigoTarifa: '01', partidaArancelaria: '090111000000',
  };
  const rep = {
    ...doc, tipoDoc: '10', ...bncr, condicionVenta: '11', detalle: 'Pago de la cuota 1 de 2', montoPagado: '250000', codigoTarifa: '08',
    referenciaTipoDocIR: '01', referenciaNumero: '50601032600310112345600100001010000000120110000120', referenciaFechaEmision: '2026-03-01T10:00:00-06:00', referenciaCodigo: '17', referenciaRazon: 'Pago de la cuota 1 de 2',
  };

  it('one document of each new kind, from fixtures/batch/new-kinds.csv: all aceptado, totals computed from the rows', async () => {
    copyFileSync(new URL('../fixtures/batch/new-kinds.csv', import.meta.url), join(work, 'new-kinds.csv'));
    const r = await fecr(['batch', 'new-kinds.csv', '--wait', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 5, sent: 5, invalid: 0, errors: 0, aceptado: 5, rechazado: 0, pending: 0 });
    const res = results('new-kinds.csv.results.jsonl');
    expect(res.map((x) => [x.row, x.numeroReferencia, x.state, x.estado])).toEqual([
      [2, 211, 'enviado', 'aceptado'],
      [4, 212, 'enviado', 'aceptado'],
      [5, 213, 'enviado', 'aceptado'],
      [6, 214, 'enviado', 'aceptado'],
      [8, 215, 'enviado', 'aceptado'],
    ]);
    // The clave's tipo (consecutivo positions 9-10) is each row's kind; an FEC's clave holds the buyer's (the issuer's) cédula.
    expect(res.map((x) => x.clave!.slice(29, 31))).toEqual(['02', '08', '08', '09', '10']);
    expect(res[1]!.clave!.slice(9, 21)).toBe('003101123456');
    const docs = (await listed()) as unknown as Array<{ clave: string; totalComprobante: string }>;
    const total = (i: number) => docs.find((d) => d.clave === res[i]!.clave)?.totalComprobante;
    // fixtures/documents 16 (ND), 17 and 18 (FEC), 22 less its other charge (FEE), 24 (REP: TotalComprobante = TotalVenta).
    expect([0, 1, 2, 3, 4].map(total)).toEqual(['68365.00000', '373700.00000', '1288.20000', '4375000.00000', '2300.50000']);
  }, 90_000);

  it('malformed rows of the new kinds: findings name the row and the column, the good ones are sent, nothing crashes', async () => {
    const rows: Array<[Record<string, string>, string[]]> = [
      [{ ...nd, referenciaTipoDocIR: '', referenciaNumero: '', referenciaFechaEmision: '', referenciaCodigo: '', referenciaRazon: '' }, ['referenciaTipoDocIR']],
      [{ ...nd, referenciaNumero: '12345' }, ['referenciaNumero']],
      [{ ...nd, referenciaFechaEmision: '' }, ['referenciaFechaEmision']],
      [{ ...nd, referenciaCodigo: '' }, ['referenciaCodigo']],
      [{ ...nd, receptorTipo: '05', receptorNumero: 'US770123456' }, ['receptorTipo']],
      [{ ...fec, receptorNombre: 'BANCO NACIONAL DE COSTA RICA', receptorTipo: '02', receptorNumero: '4000001021' }, ['receptorNombre']],
      [{ ...fec, proveedorNombre: '', proveedorTipo: '', proveedorNumero: '' }, ['proveedorNombre']],
      [{ ...fec, proveedorNumero: '12' }, ['proveedorNumero']],
      [{ ...fec, proveedorTipo: '05', proveedorNumero: 'US881234567' }, ['proveedorOtrasSenasExtranjero']],
      [{ ...fec, proveedorProvincia: '2' }, ['proveedorCanton', 'proveedorDistrito', 'proveedorDireccion']],
      [{ ...fee, receptorTipo: '02', receptorNumero: '3101987654' }, ['receptorTipo']],
      [{ ...fee, partidaArancelaria: '' }, ['partidaArancelaria']],
      [{ ...fee, partidaArancelaria: '0901110000' }, ['partidaArancelaria']],
      [{ ...rep, cantidad: '1', precioUnitario: '250000' }, ['cantidad', 'precioUnitario']],
      [{ ...rep, montoPagado: '' }, ['montoPagado']],
      [{ ...rep, baseImponible: '300000' }, ['baseImponible']],
      [{ ...rep, montoPagado: 'mucho' }, ['montoPagado']],
      [{ ...rep, condicionVenta: '01' }, ['condicionVenta']],
      [{ ...rep, referenciaTipoDocIR: '09' }, ['referenciaTipoDocIR']],
      [{ ...rep, tipoDoc: '5' }, ['tipoDoc', 'montoPagado', 'cantidad', 'precioUnitario']],
      [{ ...service, ...doc, ...bncr, tipoDoc: '1', partidaArancelaria: '090111000000' }, ['partidaArancelaria']],
      [{ ...service, ...doc, ...bncr, tipoDoc: '1', montoPagado: '100' }, ['montoPagado']],
      [{ ...nd }, []],
    ];
    const lines: Record<string, string>[] = rows.map(([r], i) => ({ ...r, numeroReferencia: String(901 + i) }));
    // An ND of two rows, each with its own reference: the bad second one is found on the second row.
    lines.push({ ...nd, numeroReferencia: '950' }, { ...nd, numeroReferencia: '950', referenciaNumero: '999', detalle: 'Segunda línea' });
    writeFileSync(join(work, 'bad-kinds.csv'), csvOf(lines));
    const expected = [...rows.map(([, cols], i) => cols.map((c) => `row ${i + 2}.${c}`)), ['row 26.referenciaNumero']];

    for (const dry of [true, false]) {
      const r = await fecr(['batch', 'bad-kinds.csv', '--json', ...(dry ? ['--dry-run'] : [])]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(JSON.parse(r.stdout)).toMatchObject({ total: 24, sent: 1, invalid: 23, errors: 0 });
      const res = results(dry ? 'bad-kinds.csv.dry-run.results.jsonl' : 'bad-kinds.csv.results.jsonl');
      const paths = res.map((x) => (x.errors ?? []).map((e) => e.path).filter((p) => p !== '').sort());
      expect(paths, JSON.stringify(res, null, 1)).toEqual(expected.map((e) => [...e].sort()));
      for (const x of res) for (const e of x.errors ?? []) expect(e.message.length).toBeGreaterThan(5);
    }
  }, 90_000);

  it("docs/batch-csv.md's one-row example of each new kind is a valid document as written", async () => {
    const docs = readFileSync(new URL('../docs/batch-csv.md', import.meta.url), 'utf8');
    const blocks = [...docs.matchAll(/```csv\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks).toHaveLength(4);
    const kinds: string[] = [];
    for (const [i, block] of blocks.entries()) {
      writeFileSync(join(work, `doc-example-${i}.csv`), block);
      const r = await fecr(['batch', `doc-example-${i}.csv`, '--dry-run', '--json']);
      expect(r.code, `${block}\n${r.stdout}${r.stderr}${readFileSync(join(work, `doc-example-${i}.csv.dry-run.results.jsonl`), 'utf8')}`).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ total: 1, sent: 1, invalid: 0 });
      kinds.push(block.split('\n')[1]!.split(',')[2]!);
    }
    expect(kinds).toEqual(['2', '8', '9', '10']);
  }, 60_000);

  it('a file of recibos de pago only needs no goods columns; a header with neither is refused before anything is sent', async () => {
    const cols = ['emisor', 'numeroReferencia', 'tipoDoc', 'fechaEmision', 'codigoActividad', 'receptorNombre', 'receptorTipo', 'receptorNumero', 'condicionVenta', 'medioPago',
      'referenciaTipoDocIR', 'referenciaNumero', 'referenciaFechaEmision', 'referenciaCodigo', 'referenciaRazon', 'detalle', 'codigoTarifa', 'montoPagado', 'baseImponible'];
    const row = { ...rep, numeroReferencia: '960', montoPagado: '100000', baseImponible: '50000' } as Record<string, string>;
    writeFileSync(join(work, 'rep-only.csv'), `${cols.join(',')}\n${cols.map((c) => quote(row[c] ?? '')).join(',')}\n`);
    const ok = await fecr(['batch', 'rep-only.csv', '--dry-run', '--json']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ total: 1, sent: 1, invalid: 0 });
    const noPayment = cols.filter((c) => c !== 'montoPagado' && c !== 'baseImponible');
    writeFileSync(join(work, 'no-lines.csv'), `${noPayment.join(',')}\n`);
    const bad = await fecr(['batch', 'no-lines.csv']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: no-lines\.csv: missing columns codigo, cantidad, unidadMedida, precioUnitario \(see docs\/batch-csv\.md; a file of recibos de pago only has montoPagado instead of the goods columns\)$/m);
  }, 60_000);
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
    // FILE:LINE:COLUMN of the syntax error (the file as the command named it).
    expect(res[1]!.errors![0]!.path).toBe('docs.jsonl:3:26');
    expect(res[1]!.errors![0]!.message).toBe('Expected double-quoted property name');
  }, 60_000);

  it('JSONL takes a body of any kind: an ND, FEC, FEE and REP of fixtures/documents to aceptado', async () => {
    const names = ['14-nd-ajuste-servicios', '17-fec-agricultor', '20-fee-cafe-usd', '23-rep-credito-90-dias'];
    writeFileSync(join(work, 'kinds.jsonl'), names.map((n, i) => JSON.stringify({ ...fixture(n), numeroReferencia: 321 + i })).join('\n') + '\n');
    const r = await fecr(['batch', 'kinds.jsonl', '--wait', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 4, sent: 4, aceptado: 4 });
    expect(results('kinds.jsonl.results.jsonl').map((x) => x.clave!.slice(29, 31))).toEqual(['02', '08', '09', '10']);
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
    expect(await split(['[{"a":1}, {"b":'])).toEqual([{ index: 1, text: '{"a":1}', line: 1, column: 2 }, { index: 2, error: expect.stringContaining('unexpected end of file') }]);
    expect(await split(['[1] x'])).toEqual([{ index: 1, text: '1', line: 1, column: 2 }, { index: 2, error: expect.stringContaining('after the closing') }]);
    // Where each element starts, across chunks and lines (for its syntax errors' FILE:LINE:COLUMN).
    expect(await split(['[\n  {"a"', ':1},\n', '\n    {"b":2}]'])).toEqual([
      { index: 1, text: '{"a":1}', line: 2, column: 3 },
      { index: 2, text: '{"b":2}', line: 4, column: 5 },
    ]);
    await expect(split(['{"a":1}'])).rejects.toThrow('not a JSON array');
  });
});
