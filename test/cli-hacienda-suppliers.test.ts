// Issue 28, the buyer's side in CI: `fecr hacienda suppliers issue --to ID --count N --out DIR` makes supplier
// comprobantes that the emulator knows, written as CLAVE.xml, and returns once the emulator has decided them, so
// `fecr recibidos import DIR` and the answers work right after, offline. Spawned CLI (this checkout's bin/fecr.js)
// with its own HOME:
//  - through a local profile (env local: its embedded emulator, state in the profile's data dir): issue → import (no
//    "not accepted by Hacienda yet") → aceptar each at once (Hacienda accepts the MensajeReceptor) → resumen counts the
//    IVA of the three; an NC of the first (--tipo NC --referencia) is known too;
//  - against a running `fecr hacienda serve` (--url) with a slow verdict (--delay 1500): the verb waits for it; with
//    --timeout 0 it does not (recibido); a wait shorter than the verdict exits 8;
//  - mistakes: one `error:` line each, never a stack trace.
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../src/core/money.js';
import { parseComprobanteXml } from '../src/core/xml/parse-comprobante.js';
import { tempDir } from './helpers/cli.js';
import { childEnv } from './helpers/hermetic-env.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const root = new URL('..', import.meta.url).pathname;
const BIN = join(root, 'bin/fecr.js');
const home = tempDir('fecr-suppliers-');
const work = join(home, 'work');
const env = { HOME: home, FECR_NO_KEYCHAIN: '1', NO_COLOR: '1' };
const test = makeTestIssuer();
const BUYER = test.issuer.identificacion;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `fecr …` as a child process (the built bin), its own HOME, none of the developer's FECR_ or XDG_ variables. */
function fecr(args: string[]): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: work, env: childEnv(env), maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

interface Issued {
  clave: string;
  tipo: string;
  proveedor: { identificacion: string; nombre: string };
  estado: string;
  file?: string;
}

let emulator: Spawned<{ url: string }> | undefined;

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await emulator?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('fecr hacienda suppliers issue', () => {
  it("through the local profile's embedded emulator: issue → import → aceptar at once → resumen counts the IVA", async () => {
    const issued = await fecr(['hacienda', 'suppliers', 'issue', '--to', BUYER, '--count', '3', '--out', 'entrada', '--json']);
    expect(issued.code, issued.stderr).toBe(0);
    const docs = JSON.parse(issued.stdout) as Issued[];
    expect(docs).toHaveLength(3);
    // Decided before the verb returned: the files can be answered right away.
    expect(docs.map((d) => d.estado)).toEqual(['aceptado', 'aceptado', 'aceptado']);
    expect(readdirSync(join(work, 'entrada')).sort()).toEqual(docs.map((d) => `${d.clave}.xml`).sort());
    for (const d of docs) {
      expect(d.file).toBe(join(work, 'entrada', `${d.clave}.xml`));
      const c = parseComprobanteXml(readFileSync(d.file!, 'utf8'));
      expect(c.clave).toBe(d.clave);
      expect(c.receptor?.identificacion?.numero).toBe(BUYER);
    }

    const imp = await fecr(['recibidos', 'import', 'entrada']);
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stdout.trim()).toBe('imported 3 files: 3 valid, 0 refused; 3 new, 0 already imported');
    expect(imp.stderr).not.toMatch(/no record|not accepted/);

    let iva = dec(0);
    let mes = '';
    for (const d of docs) {
      const a = await fecr(['recibidos', 'aceptar', d.clave, '--json']);
      expect(a.code, a.stderr).toBe(0);
      expect((JSON.parse(a.stdout) as { respuestaEstado: string }).respuestaEstado).toBe('aceptado');
      const show = JSON.parse((await fecr(['recibidos', 'show', d.clave, '--json'])).stdout) as { totalImpuesto: string; fechaEmision: string; situacionIva: string };
      expect(show.situacionIva).toBe('acreditable');
      iva = iva.plus(dec(show.totalImpuesto));
      mes = show.fechaEmision.slice(0, 7);
    }
    expect(iva.gt(0)).toBe(true);
    const resumen = JSON.parse((await fecr(['recibidos', 'resumen', mes, '--issuer', BUYER, '--json'])).stdout) as { documentos: number; totales: { ivaAcreditable: string }; excluidos: unknown[] };
    expect(resumen.documentos).toBe(3);
    expect(resumen.totales.ivaAcreditable).toBe(iva.toFixed(5));
    expect(resumen.excluidos).toEqual([]);

    // An NC of the first one's supplier, about it: the emulator knows the referenced document.
    const nc = await fecr(['hacienda', 'suppliers', 'issue', '--to', BUYER, '--tipo', 'NC', '--referencia', docs[0]!.clave, '--out', 'notas']);
    expect(nc.code, nc.stderr).toBe(0);
    expect(nc.stdout).toMatch(new RegExp(`^${join(work, 'notas')}/\\d{50}\\.xml NC from ${docs[0]!.proveedor.identificacion} .*: aceptado\\n$`));
    const ncImp = await fecr(['recibidos', 'import', 'notas']);
    expect(ncImp.code, ncImp.stderr).toBe(0);
    expect(ncImp.stdout).toMatch(/^\d{50} pendiente: .* Hacienda aceptado$/m);
  }, 120_000);

  it('against a running fecr hacienda serve (--url): waits for the verdict; --timeout 0 does not; a shorter wait exits 8', async () => {
    emulator = await spawnFecr<{ url: string }>(['hacienda', 'serve', '--delay', '1500', '--validation-threads', '0'], { env });
    const url = emulator.ready.url;

    const waited = await fecr(['hacienda', 'suppliers', 'issue', '--url', url, '--to', BUYER, '--count', '2', '--proveedor', '3101987654', '--out', 'compartido', '--json']);
    expect(waited.code, waited.stderr).toBe(0);
    const docs = JSON.parse(waited.stdout) as Issued[];
    expect(docs.map((d) => [d.proveedor.identificacion, d.estado])).toEqual([
      ['3101987654', 'aceptado'],
      ['3101987654', 'aceptado'],
    ]);
    expect(waited.ms).toBeGreaterThan(1_400);
    expect(readdirSync(join(work, 'compartido')).sort()).toEqual(docs.map((d) => `${d.clave}.xml`).sort());
    const receptions = ((await (await fetch(`${url}/_emulator/receptions`)).json()) as { receptions: { clave: string; estado: string }[] }).receptions;
    for (const d of docs) expect(receptions.find((r) => r.clave === d.clave)?.estado).toBe('aceptado');

    const noWait = await fecr(['hacienda', 'suppliers', 'issue', '--url', url, '--to', BUYER, '--timeout', '0']);
    expect(noWait.code, noWait.stderr).toBe(0);
    expect(noWait.stdout).toMatch(/^\d{50} FE from \d+ .*: recibido\n$/);

    const short = await fecr(['hacienda', 'suppliers', 'issue', '--url', url, '--to', BUYER, '--timeout', '0.3']);
    expect(short.code).toBe(8);
    expect(short.stderr).toBe('1 of 1 not decided by the emulator within --timeout: an answer (fecr recibidos aceptar) is refused until it has\n');
  }, 60_000);

  it('mistakes: one error line, no stack trace', async () => {
    // A port nothing listens on.
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    const cases: [string[], number, RegExp][] = [
      [['--to', BUYER, '--tipo', 'NC'], 2, /^error: --tipo NC needs --referencia CLAVE/],
      [['--to', '12'], 2, /^error: --to must be an identificación/],
      [['--to', BUYER, '--tipo', 'XX'], 2, /^error: --tipo must be one of FE, NC, ND, FEC/],
      [['--to', BUYER, '--url', `http://127.0.0.1:${closed}`], 1, new RegExp(`^error: cannot reach the emulator at http://127\\.0\\.0\\.1:${closed}: connection refused by 127\\.0\\.0\\.1:${closed} \\(nothing listens there\\)\n$`)],
      [['--to', BUYER, '--proveedor', '999999999'], 1, /^error: the emulator's suppliers could not issue: no test supplier 999999999\n {2}proveedor: one of 3101987654, /],
    ];
    for (const [args, code, first] of cases) {
      const r = await fecr(['hacienda', 'suppliers', 'issue', ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(r.stderr, args.join(' ')).toMatch(first);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  }, 60_000);
});
