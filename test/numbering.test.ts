// Issue 27, point 2: numbering. In local mode a body may leave numeroReferencia out and fecr takes the next free number
// of its issuer, kind, sucursal and terminal; `fecr emisor numbers` shows and sets them. Real parts: a local profile's
// data dir (SQLite), the embedded emulator, and for the concurrent pair two real `fecr send` processes started
// together on that one data dir. The hosted API keeps the spec's 400 for a body without numeroReferencia.
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ctx } from '../src/cli/context.js';
import type { Backend } from '../src/client/backend.js';
import { openLocalBackend } from '../src/client/local-backend.js';
import { validInvoice } from './helpers/bodies.js';
import { runCli, tempDir } from './helpers/cli.js';
import { childEnv } from './helpers/hermetic-env.js';
import { makeTestIssuer } from './helpers/issuer.js';

const ENTRY = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');
const ISSUER_ID = '3101123456';

const root = tempDir('fecr-numbering-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A local profile of its own: HOME, data dir, work dir with the issuer registered. */
async function profile(name: string) {
  const dir = join(root, name);
  const work = join(dir, 'work');
  mkdirSync(work, { recursive: true });
  const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
  const fecr = (args: string[]) => runCli(args, { env, cwd: work });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
  const write = (file: string, body: unknown) => {
    writeFileSync(join(work, file), JSON.stringify(body));
    return file;
  };
  return { dir, work, env, fecr, write };
}

/** An invoice without numeroReferencia (the rest as a person writes it). */
function unnumbered(detalle = 'Consultoría en gestión estratégica'): Record<string, unknown> {
  const { numeroReferencia: _n, ...body } = validInvoice();
  (body.detalleServicio as { detalle: string }[])[0]!.detalle = detalle;
  return body;
}

/** `fecr …` as a real child process on the profile (its own HOME, no inherited FECR_ or XDG_ variables). */
function spawnFecr(args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX, ENTRY, ...args], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** The number in a clave: the consecutivo's last 10 digits (the clave's characters 32–41). */
const numberOf = (clave: string) => Number(clave.slice(31, 41));

/** numeroReferencia → claves stored in the profile's database. */
function stored(dataDir: string): Map<number, string[]> {
  const db = new Database(join(dataDir, 'fecr.db'), { readonly: true });
  try {
    const rows = db.prepare("SELECT clave, numero_referencia AS n FROM documents WHERE kind = 'FE'").all() as { clave: string; n: number }[];
    const out = new Map<number, string[]>();
    for (const r of rows) out.set(r.n, [...(out.get(r.n) ?? []), r.clave]);
    return out;
  } finally {
    db.close();
  }
}

/** The profile's local backend, in this process (the code path of `fecr send`). */
async function localBackend(env: Record<string, string>, cwd: string): Promise<Backend> {
  const stderr = new PassThrough();
  stderr.resume();
  const ctx = { io: { env, cwd, stderr }, debug: false, now: () => new Date(), randomBytes: (n: number) => new Uint8Array(n) } as unknown as Ctx;
  return openLocalBackend(ctx, { dataDir: env.FECR_DATA_DIR });
}

describe('fecr numbers a body without numeroReferencia (local mode)', () => {
  let p: Awaited<ReturnType<typeof profile>>;
  beforeAll(async () => {
    p = await profile('loop');
  }, 60_000);

  it('100 sends in a loop get 1..100, and fecr emisor numbers then shows 101', async () => {
    const b = await localBackend(p.env, p.work);
    const numbers: number[] = [];
    try {
      for (let i = 0; i < 100; i++) {
        const r = await b.submit(unnumbered(`Servicio número ${i + 1}`));
        expect(r.assigned).toBe(numberOf(r.clave));
        numbers.push(r.assigned!);
      }
    } finally {
      await b.close();
    }
    expect(numbers).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const n = await p.fecr(['emisor', 'numbers', ISSUER_ID, '--json']);
    expect(n.code, n.stderr).toBe(0);
    const fe = (JSON.parse(n.stdout) as { series: { kind: string; sucursal: number; terminal: number; last: number | null; next: number }[] }).series.find((s) => s.kind === 'FE');
    expect(fe).toEqual({ kind: 'FE', sucursal: 1, terminal: 1, last: 100, start: null, next: 101 });
    // The table: one line per kind, FE's next 101, the others 1.
    const table = await p.fecr(['emisor', 'numbers', ISSUER_ID]);
    expect(table.stdout.split('\n')[0]).toBe('kind\tsucursal\tterminal\tlast\tnext');
    expect(table.stdout).toContain('FE\t1\t1\t100\t101');
    expect(table.stdout).toContain('NC\t1\t1\t-\t1');
  }, 120_000);

  it('fecr send without numeroReferencia prints the number it took; the same body sent again with it → "already sent as CLAVE", exit 0', async () => {
    const first = await p.fecr(['send', p.write('new.json', unnumbered('Auditoría anual'))]);
    expect(first.code, first.stderr).toBe(0);
    const clave = first.stdout.trim();
    expect(numberOf(clave)).toBe(101);
    expect(first.stderr).toBe('numeroReferencia 101 (the next free number)\n');
    // "The same body": its canonical JSON (keys sorted, whitespace and key order aside) with the number fecr took.
    const again = await p.fecr(['send', p.write('again.json', { numeroReferencia: 101, ...unnumbered('Auditoría anual') })]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(clave);
    expect(again.stderr).toBe(`already sent as ${clave}\n`);
    const json = await p.fecr(['send', 'again.json', '--json']);
    // Every send's --json names the document's number (issue 36).
    expect(JSON.parse(json.stdout)).toEqual({ clave, numeroReferencia: 101, alreadySent: true });
    expect(stored(p.env.FECR_DATA_DIR).get(101)).toEqual([clave]);
  }, 60_000);

  it('a different body under a taken number is refused in one line naming the clave that holds it and the next free number', async () => {
    const holder = stored(p.env.FECR_DATA_DIR).get(7)![0]!;
    const r = await p.fecr(['send', p.write('taken.json', { ...unnumbered('Otra cosa'), numeroReferencia: 7 })]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `error: numeroReferencia 7 of FE (sucursal 1, terminal 1) is already used by ${holder}, whose body differs; the next free number is 102 (or leave numeroReferencia out and fecr takes it)\n`,
    );
    expect(stored(p.env.FECR_DATA_DIR).get(7)).toEqual([holder]);
  }, 60_000);

  it('a body that fails takes no number (no gap)', async () => {
    const bad = { ...unnumbered(), codigoActividad: 'xx' };
    const r = await p.fecr(['send', p.write('bad.json', bad)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: invalid document/);
    expect(r.stderr).not.toContain('numeroReferencia');
    const ok = await p.fecr(['send', p.write('ok.json', unnumbered('Después del error')), '--json']);
    expect(JSON.parse(ok.stdout)).toMatchObject({ numeroReferencia: 102 });
  }, 60_000);
});

describe('two fecr send processes started together on one profile', () => {
  it('get consecutive numbers, each stored once', async () => {
    const p = await profile('pair');
    // One document first: the pair continues after it (a profile with documents already sent).
    const first = await p.fecr(['send', p.write('n1.json', { ...unnumbered('Primero'), numeroReferencia: 1 })]);
    expect(first.code, first.stderr).toBe(0);
    p.write('a.json', unnumbered('Proceso A'));
    p.write('b.json', unnumbered('Proceso B'));
    const [a, b] = await Promise.all([spawnFecr(['send', 'a.json', '--json'], p.env, p.work), spawnFecr(['send', 'b.json', '--json'], p.env, p.work)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const na = (JSON.parse(a.stdout) as { numeroReferencia: number }).numeroReferencia;
    const nb = (JSON.parse(b.stdout) as { numeroReferencia: number }).numeroReferencia;
    expect([na, nb].sort()).toEqual([2, 3]);
    const docs = stored(p.env.FECR_DATA_DIR);
    expect([...docs.keys()].sort()).toEqual([1, 2, 3]);
    for (const claves of docs.values()) expect(claves).toHaveLength(1);
    const n = await p.fecr(['emisor', 'numbers', ISSUER_ID, '--json']);
    expect(JSON.parse(n.stdout).series[0]).toMatchObject({ kind: 'FE', last: 3, next: 4 });
  }, 120_000);
});

describe('fecr emisor numbers --set (an issuer coming from another system)', () => {
  let p: Awaited<ReturnType<typeof profile>>;
  beforeAll(async () => {
    p = await profile('set');
  }, 60_000);

  it('sets where a kind starts; the next body without numeroReferencia takes it', async () => {
    const set = await p.fecr(['emisor', 'numbers', ISSUER_ID, '--set', 'FE=1501', '--set', 'nc=42']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toBe('FE (sucursal 1, terminal 1): the next number is 1501\nNC (sucursal 1, terminal 1): the next number is 42\n');
    expect(set.stdout).toContain('FE\t1\t1\t-\t1501');
    const r = await p.fecr(['send', p.write('a.json', unnumbered()), '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ numeroReferencia: 1501 });
  }, 60_000);

  it('a series of another sucursal and terminal has its own numbers, listed once in use', async () => {
    const set = await p.fecr(['emisor', 'numbers', ISSUER_ID, '--set', 'FE=900', '--sucursal', '2', '--terminal', '3']);
    expect(set.code, set.stderr).toBe(0);
    const r = await p.fecr(['send', p.write('b.json', { ...unnumbered(), sucursal: 2, terminal: 3 }), '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ numeroReferencia: 900 });
    expect(JSON.parse(r.stdout).clave.slice(21, 31)).toBe('0020000301');
    const n = await p.fecr(['emisor', 'numbers', ISSUER_ID]);
    expect(n.stdout).toContain('FE\t1\t1\t1501\t1502');
    expect(n.stdout).toContain('FE\t2\t3\t900\t901');
  }, 60_000);

  it('refuses a start at or below a number already used, naming it (exit 1); nothing changes', async () => {
    const r = await p.fecr(['emisor', 'numbers', ISSUER_ID, '--set', 'FE=1000']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: FE (sucursal 1, terminal 1) has already used number 1501: it cannot start at 1000; the lowest start is 1502\n');
    const n = await p.fecr(['emisor', 'numbers', ISSUER_ID, '--json']);
    expect(JSON.parse(n.stdout).series[0]).toMatchObject({ kind: 'FE', last: 1501, start: 1501, next: 1502 });
    // A lower start above every number used is fine (it only moves where fecr goes on).
    const ok = await p.fecr(['emisor', 'numbers', ISSUER_ID, '--set', 'FE=1600']);
    expect(ok.code, ok.stderr).toBe(0);
  }, 60_000);

  it('usage mistakes exit 2; an unknown issuer exits 1 naming it', async () => {
    for (const args of [['--set', 'XX=1'], ['--set', 'FE=0'], ['--set', 'FE'], ['--sucursal', '2']]) {
      const r = await p.fecr(['emisor', 'numbers', ISSUER_ID, ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    }
    const r = await p.fecr(['emisor', 'numbers', '3101999999']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: issuer 3101999999 is not registered (fecr emisor register)\n');
  }, 60_000);
});

describe('fecr batch: JSONL rows without numeroReferencia', () => {
  let p: Awaited<ReturnType<typeof profile>>;
  const results = (file: string) =>
    readFileSync(join(p.work, file), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { row: number; numeroReferencia?: number; clave?: string; state: string });
  beforeAll(async () => {
    p = await profile('batch');
  }, 60_000);

  it('get the next free numbers; a run cut between a submission and its journal record resumes without taking new numbers', async () => {
    const rows = Array.from({ length: 6 }, (_, i) => JSON.stringify(unnumbered(`Fila ${i + 1}`)));
    writeFileSync(join(p.work, 'docs.jsonl'), rows.join('\n') + '\n');
    const r = await p.fecr(['batch', 'docs.jsonl', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const first = results('docs.jsonl.results.jsonl');
    expect(first.map((x) => [x.row, x.numeroReferencia, x.state])).toEqual(Array.from({ length: 6 }, (_, i) => [i + 1, i + 1, 'enviado']));
    expect(first.every((x) => numberOf(x.clave!) === x.numeroReferencia)).toBe(true);

    // A crash after rows 5 and 6 were stored but before their "done" records: only their "start" records remain.
    const journal = join(p.work, 'docs.jsonl.journal');
    const kept = readFileSync(journal, 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !(/"state"/.test(l) && /"row":[56],/.test(l)));
    writeFileSync(journal, kept.join('\n') + '\n');
    // Two more rows were added to the file meanwhile.
    appendFileSync(join(p.work, 'docs.jsonl'), [JSON.stringify(unnumbered('Fila 7')), JSON.stringify(unnumbered('Fila 8'))].join('\n') + '\n');

    const again = await p.fecr(['batch', 'docs.jsonl', '--resume', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ total: 8, sent: 8, skipped: 4, invalid: 0, errors: 0 });
    const second = results('docs.jsonl.results.jsonl').filter((x) => x.row >= 5);
    // Rows 5 and 6 got their documents back (same claves, same numbers); 7 and 8 the next numbers.
    expect(second.map((x) => [x.row, x.numeroReferencia])).toEqual([
      [5, 5],
      [6, 6],
      [7, 7],
      [8, 8],
    ]);
    expect(second.slice(0, 2).map((x) => x.clave)).toEqual(first.slice(4).map((x) => x.clave));
    const docs = stored(p.env.FECR_DATA_DIR);
    expect([...docs.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const claves of docs.values()) expect(claves).toHaveLength(1);
    const n = await p.fecr(['emisor', 'numbers', ISSUER_ID, '--json']);
    expect(JSON.parse(n.stdout).series[0]).toMatchObject({ kind: 'FE', last: 8, next: 9 });
  }, 120_000);

  it('--dry-run judges such rows as the service does (valid), taking no number', async () => {
    writeFileSync(join(p.work, 'dry.jsonl'), JSON.stringify(unnumbered('En seco')) + '\n');
    const r = await p.fecr(['batch', 'dry.jsonl', '--dry-run', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 1, sent: 1, invalid: 0 });
    expect(Math.max(...stored(p.env.FECR_DATA_DIR).keys())).toBe(8);
  }, 60_000);
});
