// `fecr recibidos import` against hostile input (issue 25), local mode (the service in process on FECR_DATA_DIR):
//  - the same supplier comprobante again with a UTF-8 BOM, with a trailing newline: one row; a second aceptar is
//    refused (one MensajeReceptor); the monthly summary counts its IVA once;
//  - a folder of hostile entries (a FIFO named p.xml and a symlink to it, a symlink to /dev/zero, a symlink to a file
//    outside the folder, a dangling symlink, a symlink loop, a folder named x.xml, a file over the 4 MiB limit) next
//    to two good invoices and a symlink to one of them: done in seconds, the good ones imported, one finding per bad
//    entry, the over-limit file stored as its sha256 and finding only;
//  - a FIFO or a device named on the command line, and stdin over the limit: refused, never read whole.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, mkdirSync, openSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../src/core/money.js';
import { startEmulator } from '../src/emulator/index.js';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const root = tempDir('fecr-recibidos-hostile-');
const work = join(root, 'work');
const env: Record<string, string> = { HOME: root, FECR_DATA_DIR: join(root, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[], opts: { stdin?: string | Buffer; env?: Record<string, string> } = {}) => runCli(args, { env: { ...env, ...opts.env }, cwd: work, ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}) });
const test = makeTestIssuer();
const LIMIT = 4 * 1024 * 1024;
const fifos: string[] = [];
let invoices: { clave: string; bytes: Buffer }[] = [];

/** Releases whoever blocked on opening or reading a FIFO (a reader that should never have opened it). */
function releaseFifos(): void {
  for (const f of fifos) {
    try {
      closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is reading it, as it should be.
    }
  }
}

/** The run, or a failure after `ms` (the FIFOs released so that a blocked reader does not outlive the test). */
async function within(ms: number, run: Promise<CliRun>): Promise<CliRun & { ms: number }> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      releaseFifos();
      reject(new Error(`the import took more than ${ms} ms`));
    }, ms);
  });
  try {
    const r = await Promise.race([run, timeout]);
    return { ...r, ms: Date.now() - t0 };
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  mkdirSync(env.FECR_DATA_DIR!, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  // The embedded emulator keeps its state in the data dir: its test suppliers issue into it before the CLI runs.
  const emu = await startEmulator({ dataFile: join(env.FECR_DATA_DIR!, 'emulator.db'), processingDelayMs: 10, validationThreads: 0 });
  try {
    const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ receptor: { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre }, cantidad: 4 }),
    });
    invoices = ((await res.json()) as { documentos: { clave: string; xml: string }[] }).documentos.map((d) => ({ clave: d.clave, bytes: Buffer.from(d.xml, 'base64') }));
    await emu.state.whenIdle();
  } finally {
    await emu.close();
  }
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 90_000);

afterAll(() => {
  releaseFifos();
  rmSync(root, { recursive: true, force: true });
});

const db = () => new SQLite(join(env.FECR_DATA_DIR!, 'fecr.db'), { readonly: true });

describe('the same comprobante in other bytes', () => {
  it('with a BOM and with a trailing newline: one row; a second aceptar is refused; resumen counts its IVA once', async () => {
    const { clave, bytes } = invoices[0]!;
    mkdirSync(join(work, 'dup'));
    writeFileSync(join(work, 'dup', 'a.xml'), bytes);
    writeFileSync(join(work, 'dup', 'a-bom.xml'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]));
    writeFileSync(join(work, 'dup', 'a-nl.xml'), Buffer.concat([bytes, Buffer.from('\n')]));

    const first = await fecr(['recibidos', 'import', 'dup/a.xml']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^${clave} pendiente: FE from`));
    const bom = await fecr(['recibidos', 'import', 'dup/a-bom.xml']);
    expect(bom.code, bom.stderr).toBe(0);
    expect(bom.stdout).toMatch(new RegExp(`^${clave} pendiente \\(already imported\\)`));
    expect(bom.stderr).toMatch(/warning: archivo: already imported from other bytes/);

    // Waits for Hacienda's verdict: resumen counts the IVA once Hacienda accepted the MensajeReceptor (issue 26).
    const acc = await fecr(['recibidos', 'aceptar', clave, '--json']);
    expect(acc.code, acc.stderr).toBe(0);
    // Imported again after the answer, then answered again: the case that sent a second MensajeReceptor.
    const nl = await fecr(['recibidos', 'import', 'dup/a-nl.xml']);
    expect(nl.code, nl.stderr).toBe(0);
    expect(nl.stdout).toMatch(new RegExp(`^${clave} aceptado \\(already imported\\)`));
    const again = await fecr(['recibidos', 'aceptar', clave, '--timeout', '0']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/ya fue respondido \(aceptado\) con el MensajeReceptor \d{20}/);

    const folder = await fecr(['recibidos', 'import', 'dup', '--json']);
    expect(folder.code, folder.stderr).toBe(0);
    expect((JSON.parse(folder.stdout) as { creado: boolean; clave: string }[]).map((x) => [x.clave, x.creado])).toEqual([
      [clave, false],
      [clave, false],
      [clave, false],
    ]);

    const list = JSON.parse((await fecr(['recibidos', 'list', '--json'])).stdout) as { clave: string }[];
    expect(list.filter((x) => x.clave === clave)).toHaveLength(1);
    const d = db();
    try {
      expect(d.prepare('SELECT count(*) AS n FROM recibidos WHERE clave = ?').get(clave)).toEqual({ n: 1 });
      expect(d.prepare("SELECT count(*) AS n FROM documents WHERE clave LIKE ? || '-%'").get(clave)).toEqual({ n: 1 });
    } finally {
      d.close();
    }
    const show = JSON.parse((await fecr(['recibidos', 'show', clave, '--json'])).stdout) as { fechaEmision: string; totalImpuesto: string };
    const resumen = await fecr(['recibidos', 'resumen', show.fechaEmision.slice(0, 7), '--issuer', test.issuer.identificacion, '--json']);
    const sum = JSON.parse(resumen.stdout) as { documentos: number; totales: { ivaAcreditable: string; impuesto: string } };
    expect(sum.documentos).toBe(1);
    expect(sum.totales.ivaAcreditable).toBe(dec(show.totalImpuesto).toFixed(5));
    expect(sum.totales.impuesto).toBe(dec(show.totalImpuesto).toFixed(5));
  }, 60_000);
});

describe('a folder of hostile entries', () => {
  it('finishes in seconds: the two good invoices imported, one finding per bad entry, the big file not stored', async () => {
    const dir = join(work, 'hostil');
    mkdirSync(dir);
    mkdirSync(join(work, 'afuera'));
    const [g1, g2] = [invoices[1]!, invoices[2]!];
    writeFileSync(join(dir, `${g1.clave}.xml`), g1.bytes);
    writeFileSync(join(dir, `${g2.clave}.xml`), g2.bytes);
    symlinkSync(`${g1.clave}.xml`, join(dir, 'dentro.xml')); // inside the folder: read (the same bytes: already imported)
    execFileSync('mkfifo', [join(dir, 'p.xml')]);
    fifos.push(join(dir, 'p.xml'));
    symlinkSync('p.xml', join(dir, 'tubo.xml')); // inside the folder, to a FIFO: opened non-blocking, refused by fstat
    symlinkSync('/dev/zero', join(dir, 'zero.xml'));
    writeFileSync(join(work, 'afuera', 'secreto.xml'), invoices[3]!.bytes);
    symlinkSync(join(work, 'afuera', 'secreto.xml'), join(dir, 'fuera.xml'));
    symlinkSync('no-existe.xml', join(dir, 'roto.xml'));
    symlinkSync('bucle.xml', join(dir, 'bucle.xml'));
    mkdirSync(join(dir, 'x.xml'));
    const big = Buffer.concat([Buffer.from('<?xml version="1.0" encoding="UTF-8"?><FacturaElectronica><!--'), Buffer.alloc(LIMIT + 1024 * 1024, 'x'), Buffer.from('--></FacturaElectronica>')]);
    writeFileSync(join(dir, 'grande.xml'), big);

    const r = await within(10_000, fecr(['recibidos', 'import', 'hostil', '--json']));
    console.log(`the hostile folder (11 entries, one of ${big.length} bytes) imported in ${r.ms} ms`);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toMatch(/internal error/);
    const results = JSON.parse(r.stdout) as { archivo: string; estado: string; creado: boolean; hallazgos: { path: string; message: string }[] }[];
    const by = new Map(results.map((x) => [x.archivo, x]));
    expect(results).toHaveLength(11);
    expect(by.get(`hostil/${g1.clave}.xml`)).toMatchObject({ estado: 'pendiente', creado: true });
    expect(by.get(`hostil/${g2.clave}.xml`)).toMatchObject({ estado: 'pendiente', creado: true });
    expect(by.get('hostil/dentro.xml')).toMatchObject({ estado: 'pendiente', creado: false });
    const refused = Object.fromEntries(results.filter((x) => x.estado === 'invalido').map((x) => [x.archivo.replace('hostil/', ''), x.hallazgos.map((h) => `${h.path}: ${h.message}`)]));
    expect(refused).toEqual({
      'bucle.xml': ['archivo: a symlink loop: not read'],
      'fuera.xml': ['archivo: a symlink to outside the folder: not read'],
      'grande.xml': [`archivo: ${big.length} bytes: over the limit of ${LIMIT} bytes for a comprobante (FECR_RECIBIDOS_MAX_BYTES); not read`],
      'p.xml': ['archivo: a FIFO (named pipe), not a regular file: not read'],
      'roto.xml': ['archivo: a dangling symlink (its target does not exist): not read'],
      'tubo.xml': ['archivo: a FIFO (named pipe), not a regular file: not read'],
      'x.xml': ['archivo: a folder, not a file: not read'],
      'zero.xml': ['archivo: a symlink to outside the folder: not read'],
    });
    const human = await within(10_000, fecr(['recibidos', 'import', 'hostil']));
    expect(human.stdout).toContain('imported 11 files: 3 valid, 8 refused (7 not read); 0 new, 3 already imported');
    expect(human.stderr).toMatch(/^error: 8 files were refused$/m);
    expect(human.stderr).toMatch(/^hostil\/p\.xml:\n {2}archivo: a FIFO/m);

    // The over-limit file: one row, its sha256 (of the limit + 1 bytes read) and finding, not its bytes.
    const d = db();
    try {
      const rows = d.prepare("SELECT sha256, length(xml) AS xml, estado FROM recibidos WHERE hallazgos_json LIKE '%over the limit%'").all();
      expect(rows).toEqual([{ sha256: createHash('sha256').update(big.subarray(0, LIMIT + 1)).digest('hex'), xml: 0, estado: 'invalido' }]);
      // No row holds more than an invoice.
      expect((d.prepare('SELECT max(length(CAST(xml AS BLOB))) AS n FROM recibidos').get() as { n: number }).n).toBe(Math.max(...invoices.slice(0, 3).map((i) => i.bytes.length)));
    } finally {
      d.close();
    }
    const dbBytes = ['fecr.db', 'fecr.db-wal'].map((f) => join(env.FECR_DATA_DIR!, f)).filter((f) => existsSync(f)).reduce((n, f) => n + statSync(f).size, 0);
    expect(dbBytes).toBeLessThan(big.length / 2);
  }, 60_000);

  it('a FIFO or a device named on the command line is refused at once; stdin is read up to the limit only', async () => {
    const fifo = join(work, 'sola.xml');
    execFileSync('mkfifo', [fifo]);
    fifos.push(fifo);
    const f = await within(10_000, fecr(['recibidos', 'import', 'sola.xml']));
    expect(f.code).toBe(1);
    expect(f.stderr).toBe('error: sola.xml was refused\narchivo: a FIFO (named pipe), not a regular file: not read\n');
    const z = await within(10_000, fecr(['recibidos', 'import', '/dev/zero']));
    expect(z.code).toBe(1);
    expect(z.stderr).toMatch(/archivo: a device, not a regular file: not read/);
    const s = await within(10_000, fecr(['recibidos', 'import', '-'], { stdin: Buffer.alloc(200_000, 'a'), env: { FECR_RECIBIDOS_MAX_BYTES: '65536' } }));
    expect(s.code).toBe(1);
    expect(s.stderr).toMatch(/archivo: more than 65536 bytes: over the limit of 65536 bytes for a comprobante/);
    const bad = await fecr(['recibidos', 'import', '-'], { stdin: '<x/>', env: { FECR_RECIBIDOS_MAX_BYTES: 'mucho' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/FECR_RECIBIDOS_MAX_BYTES must be a number of bytes/);
  }, 60_000);
});
