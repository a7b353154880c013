// `fecr batch` as a real child process, interrupted for real: kill -9 at about half of a CSV, then `--resume`;
// and Ctrl-C (SIGINT), which finishes the documents in flight, exits 130 and leaves a journal `--resume` picks
// up. In both cases every row ends sent exactly once: one document per numeroReferencia in the service, and
// one reception per clave (with a single accepted POST) in the embedded emulator's own record.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const ENTRY = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');
const DOCS = 300;

const dir = tempDir('fecr-batch-crash-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };

interface Result {
  row: number;
  numeroReferencia?: number;
  clave?: string;
  state: string;
  estado?: string;
}

async function writeCsv(file: string, from: number, docs: number): Promise<void> {
  const out = createWriteStream(join(work, file));
  out.write('emisor,numeroReferencia,tipoDoc,fechaEmision,codigoActividad,receptorNombre,receptorTipo,receptorNumero,receptorCorreo,moneda,medioPago,condicionVenta,codigo,detalle,cantidad,unidadMedida,precioUnitario,descuento,codigoTarifa\n');
  for (let n = from; n < from + docs; n++) {
    const doc = `3101123456,${n},1,2026-03-02T09:15:00-06:00,6201.0,DISTRIBUIDORA EL CAFETAL LIMITADA,02,3101987654,compras@elcafetal.example.cr,CRC,04,01`;
    out.write(`${doc},8311200000000,Consultoría en gestión comercial,${1 + (n % 5)},h,50000,,08\n`);
    out.write(`${doc},4781400000000,Licencia de software,${1 + (n % 7)},Unid,1250.50,,08\n`);
  }
  await new Promise<void>((r) => out.end(r));
}

/** Documents the journal records as finished (a "state" record), or 0. */
function finishedInJournal(file: string): number {
  const path = join(work, `${file}.journal`);
  if (!existsSync(path)) return 0;
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"state"')).length;
}

/** Starts `fecr batch …` as a child; resolves when `until()` holds (checked every 20 ms), with the child. */
function startBatch(args: string[]) {
  // Its own process group, so that a Ctrl-C can be sent as a terminal sends it: to the whole group (fecr and
  // any child it runs, such as xmllint).
  const child = spawn(process.execPath, ['--import', TSX, ENTRY, 'batch', ...args], { cwd: work, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const when = async (until: () => boolean, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!until()) {
      if (child.exitCode !== null) throw new Error(`batch exited ${child.exitCode} early: ${stderr}`);
      if (Date.now() > deadline) throw new Error(`timed out; stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, exited, when, out: () => stdout, err: () => stderr };
}

function results(file: string): Result[] {
  return readFileSync(join(work, `${file}.results.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Result);
}

/** The embedded emulator's record: clave → POSTs that created it (the emulator keeps one row per clave). */
function emulatorReceptions(): Map<string, { acceptedPosts: number; duplicatePosts: number; estado: string }> {
  const db = new Database(join(env.FECR_DATA_DIR, 'emulator.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT key, data FROM receptions').all() as { key: string; data: string }[];
    return new Map(rows.map((r) => [r.key, JSON.parse(r.data) as { acceptedPosts: number; duplicatePosts: number; estado: string }]));
  } finally {
    db.close();
  }
}

/** The service's documents: numeroReferencia → claves stored for it (must be exactly one each). */
function serviceDocuments(): Map<number, string[]> {
  const db = new Database(join(env.FECR_DATA_DIR, 'fecr.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT clave FROM documents').all() as { clave: string }[];
    const byNumero = new Map<number, string[]>();
    for (const { clave } of rows) {
      const numero = Number(clave.slice(31, 41)); // the consecutivo's last 10 digits are the numeroReferencia
      byNumero.set(numero, [...(byNumero.get(numero) ?? []), clave]);
    }
    return byNumero;
  } finally {
    db.close();
  }
}

function expectExactlyOnce(res: Result[], from: number, docs: number): void {
  const sent = res.filter((r) => r.state === 'enviado');
  expect(sent.map((r) => r.numeroReferencia).sort((a, b) => a! - b!)).toEqual(Array.from({ length: docs }, (_, i) => from + i));
  expect(sent.every((r) => r.estado === 'aceptado'), JSON.stringify(sent.filter((r) => r.estado !== 'aceptado').slice(0, 3))).toBe(true);
  const claves = new Set(sent.map((r) => r.clave!));
  expect(claves.size).toBe(docs);
  const stored = serviceDocuments();
  for (let n = from; n < from + docs; n++) expect(stored.get(n), `numeroReferencia ${n}`).toHaveLength(1);
  const received = emulatorReceptions();
  for (const clave of claves) {
    const rec = received.get(clave);
    expect(rec, clave).toBeDefined();
    expect(rec!.acceptedPosts, clave).toBe(1);
  }
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  const r = await runCli(['emisor', 'register', 'issuer.json'], { env, cwd: work });
  expect(r.code, r.stderr).toBe(0);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fecr batch, interrupted for real', () => {
  it('kill -9 at about half, then --resume: every row sent exactly once, every document aceptado', async () => {
    await writeCsv('kill.csv', 1, DOCS);
    const first = startBatch(['kill.csv', '--concurrency', '8']);
    await first.when(() => finishedInJournal('kill.csv') >= DOCS / 2);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const before = finishedInJournal('kill.csv');
    expect(before).toBeGreaterThanOrEqual(DOCS / 2);
    expect(before).toBeLessThan(DOCS);

    const second = startBatch(['kill.csv', '--resume', '--wait', '--json']);
    const { code } = await second.exited;
    expect(code, second.err()).toBe(0);
    const summary = JSON.parse(second.out()) as { total: number; sent: number; skipped: number; aceptado: number };
    expect(summary.total).toBe(DOCS);
    expect(summary.sent).toBe(DOCS);
    expect(summary.aceptado).toBe(DOCS);
    expect(summary.skipped).toBeGreaterThanOrEqual(before);
    expectExactlyOnce(results('kill.csv'), 1, DOCS);
  }, 180_000);

  it('Ctrl-C finishes the documents in flight, exits 130 with one line, and --resume completes the rest', async () => {
    const from = 10_001;
    await writeCsv('int.csv', from, DOCS);
    const first = startBatch(['int.csv', '--concurrency', '8']);
    await first.when(() => finishedInJournal('int.csv') >= DOCS / 3);
    const t0 = Date.now();
    process.kill(-first.child.pid!, 'SIGINT'); // the terminal's Ctrl-C: the whole foreground process group
    const { code } = await first.exited;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(code).toBe(130);
    expect(first.err()).toMatch(/interrupted: \d+ documents processed; run the same command with --resume to continue/);
    expect(first.err()).not.toMatch(/\n\s+at /); // no stack trace

    const second = startBatch(['int.csv', '--resume', '--wait', '--json']);
    expect((await second.exited).code, second.err()).toBe(0);
    expectExactlyOnce(results('int.csv'), from, DOCS);
  }, 180_000);
});
