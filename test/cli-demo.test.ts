// fecr demo, in-process with injected streams, a temp HOME and a temp working directory: on a machine with no
// config it creates the "demo" profile (local, own data dir), registers a test issuer with a generated .p12, sends
// one document of each kind to the embedded emulator, waits for the verdicts and writes XML, respuesta and PDF per
// document; a second run issues the next consecutivos; other profiles are left alone. The same expectations on a
// remote profile logged in to a real `fecr serve` child process.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentStatus } from '../src/client/backend.js';
import type { DemoResult } from '../src/commands/demo/run.js';
import { verifyXades } from '../src/core/sign/verify.js';
import { parseComprobanteXml } from '../src/core/xml/parse-comprobante.js';
import { parseMensajeHaciendaXml } from '../src/core/xml/parse-mensaje.js';
import { runCli, tempDir } from './helpers/cli.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

const home = tempDir('fecr-demo-');
const work = join(home, 'work');
const env = { HOME: home, FECR_NO_KEYCHAIN: '1' };
const demoData = join(home, '.local', 'share', 'fecr', 'demo');
const configFile = join(home, '.config', 'fecr', 'config.json');
const fecr = (args: string[], opts: { env?: Record<string, string>; tty?: boolean } = {}) => runCli(args, { env: { ...env, ...opts.env }, cwd: work, tty: opts.tty });

const KINDS = ['FE', 'FE exonerada', 'NC', 'TE', 'TE extranjero', 'ND', 'FEC', 'FEE', 'REP'];
const ROOTS: Record<string, string> = {
  FE: 'FacturaElectronica',
  'FE exonerada': 'FacturaElectronica',
  NC: 'NotaCreditoElectronica',
  TE: 'TiqueteElectronico',
  'TE extranjero': 'TiqueteElectronico',
  ND: 'NotaDebitoElectronica',
  FEC: 'FacturaElectronicaCompra',
  FEE: 'FacturaElectronicaExportacion',
  REP: 'ReciboElectronicoPago',
};
let first: { kind: string; consecutivo: string; estado: string; clave: string; files: string }[] = [];

/** Per document: the signed XML of its kind (valid XAdES; xmlsec1 agrees on the first), Mensaje 1, a PDF; the NC references the FE. */
function expectDemoFiles(out: string, rows: { kind: string; clave: string }[]): void {
  expect(rows.map((r) => r.kind)).toEqual(KINDS);
  for (const row of rows) {
    const xml = readFileSync(join(out, `${row.clave}.xml`), 'utf8');
    const v = verifyXades(xml, new Date());
    expect(v.ok, `${row.kind}: ${JSON.stringify(v.checks.filter((c) => !c.ok))}`).toBe(true);
    expect(xml).toContain(`<${ROOTS[row.kind]} `);
    expect(parseComprobanteXml(xml).clave).toBe(row.clave);
    const m = parseMensajeHaciendaXml(readFileSync(join(out, `${row.clave}_respuesta.xml`), 'utf8'));
    expect(m.clave).toBe(row.clave);
    expect(m.mensaje).toBe(1);
    expect(readFileSync(join(out, `${row.clave}.pdf`)).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  }
  const x = xmlsecVerify(readFileSync(join(out, `${rows[0]!.clave}.xml`), 'utf8'));
  expect(x.ok, x.output).toBe(true);
  const nc = parseComprobanteXml(readFileSync(join(out, `${rows[2]!.clave}.xml`), 'utf8'));
  expect(nc.informacionReferencia.map((ref) => ref.numero)).toEqual([rows[0]!.clave]);
  const nd = parseComprobanteXml(readFileSync(join(out, `${rows[5]!.clave}.xml`), 'utf8'));
  expect(nd.informacionReferencia.map((ref) => ref.numero)).toEqual([rows[0]!.clave]);
  // The FEC is issued by the buyer: the demo issuer is its Receptor, and its cédula is in the clave.
  const fec = parseComprobanteXml(readFileSync(join(out, `${rows[6]!.clave}.xml`), 'utf8'));
  expect(fec.receptor?.identificacion?.numero).toBe('3101123456');
  expect(rows[6]!.clave.slice(9, 21)).toBe('003101123456');
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  // A profile of the user's own that the demo must leave alone.
  const r = await fecr(['config', 'set', 'account', 'mine']);
  expect(r.code, r.stderr).toBe(0);
});

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('fecr demo (no config: the "demo" profile, local mode, the embedded emulator)', () => {
  it('first run: every kind aceptado; the table on stdout, progress on stderr; exit 0', async () => {
    const t0 = performance.now();
    const r = await fecr(['demo']);
    const ms = performance.now() - t0;
    expect(r.code, r.stderr).toBe(0);
    const [header, ...rows] = r.stdout.trim().split('\n');
    expect(header).toBe('kind\tnumeroConsecutivo\testado\tclave\tfiles');
    first = rows.map((l) => {
      const [kind, consecutivo, estado, clave, files] = l.split('\t') as [string, string, string, string, string];
      return { kind, consecutivo, estado, clave, files };
    });
    expect(first.map((x) => x.kind)).toEqual(KINDS);
    for (const row of first) {
      expect(row.estado, row.kind).toBe('aceptado');
      expect(row.clave).toMatch(/^506\d{6}003101123456\d{29}$/);
      expect(row.clave.slice(21, 41)).toBe(row.consecutivo);
      expect(row.files).toBe('xml respuesta pdf');
    }
    // The consecutivos: FE 1 and 2, NC 1, TE 1 and 2, ND, FEC, FEE, REP 1 (tipo 01, 03, 04, 02, 08, 09, 10 at positions 9-10).
    expect(first.map((x) => x.consecutivo)).toEqual([
      '00100001010000000001',
      '00100001010000000002',
      '00100001030000000001',
      '00100001040000000001',
      '00100001040000000002',
      '00100001020000000001',
      '00100001080000000001',
      '00100001090000000001',
      '00100001100000000001',
    ]);
    const err = r.stderr.trim().split('\n');
    expect(err[0]).toBe(`created profile "demo" in ${configFile}`);
    expect(err).toContain(`profile "demo": local, data dir ${demoData}, Hacienda: the embedded emulator`);
    // No keychain (FECR_NO_KEYCHAIN): the master key falls back to a 0600 file, with one warning line.
    expect(err.filter((l) => l.startsWith('warning:'))).toEqual([
      `warning: no OS keychain available: the master key is in ${join(demoData, 'master.key')} (mode 0600); set FECR_MASTER_KEY to keep it elsewhere`,
    ]);
    expect(statSync(join(demoData, 'master.key')).mode & 0o777).toBe(0o600);
    expect(err).toContain('registered test issuer 3101123456 SOFTWARE TICO SOCIEDAD ANONIMA with a generated certificate (fecr-demo/issuer.p12, PIN 1234)');
    for (const kind of KINDS) expect(err).toContain(`${kind}: aceptado`);
    expect(err.find((l) => l.startsWith('wrote '))).toMatch(/^wrote 27 files to fecr-demo\/ in \d+\.\d s: /);
    expect(err.at(-1)).toBe('see them again with: fecr documents list --profile demo');
    expect(r.stderr).not.toMatch(/error|^\s+at /m);
    console.log(`fecr demo (first run, in-process): ${Math.round(ms)} ms`);
  }, 90_000);

  it('writes the signed XML (valid XAdES, xmlsec1 agrees), the MensajeHacienda (Mensaje 1) and the PDF of each', () => {
    expectDemoFiles(join(work, 'fecr-demo'), first);
    // The generated certificate, kept beside the documents (0600).
    expect(statSync(join(work, 'fecr-demo', 'issuer.p12')).mode & 0o777).toBe(0o600);
  });

  it('created only the "demo" profile, with its own data dir; the user\'s profile is untouched', () => {
    const config = JSON.parse(readFileSync(configFile, 'utf8'));
    expect(config.profiles).toEqual({ default: { account: 'mine' }, demo: { mode: 'local', env: 'local', dataDir: demoData } });
    expect(existsSync(join(demoData, 'fecr.db'))).toBe(true);
    expect(existsSync(join(demoData, 'emulator.db'))).toBe(true);
  });

  it('a second run works: issuer kept, the next consecutivos, new claves; --json on stdout', async () => {
    const r = await fecr(['demo', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as DemoResult;
    expect(result).toMatchObject({ profile: 'demo', mode: 'local', dataDir: demoData, out: 'fecr-demo', issuer: { identificacion: '3101123456', registered: false, p12: null } });
    expect(result.documents.map((d) => [d.kind, d.estado, d.mensaje, d.numeroConsecutivo])).toEqual([
      ['FE', 'aceptado', 1, '00100001010000000003'],
      ['FE exonerada', 'aceptado', 1, '00100001010000000004'],
      ['NC', 'aceptado', 1, '00100001030000000002'],
      ['TE', 'aceptado', 1, '00100001040000000003'],
      ['TE extranjero', 'aceptado', 1, '00100001040000000004'],
      ['ND', 'aceptado', 1, '00100001020000000002'],
      ['FEC', 'aceptado', 1, '00100001080000000002'],
      ['FEE', 'aceptado', 1, '00100001090000000002'],
      ['REP', 'aceptado', 1, '00100001100000000002'],
    ]);
    for (const d of result.documents) {
      expect(first.map((x) => x.clave)).not.toContain(d.clave);
      expect(d.files).toEqual({ xml: `fecr-demo/${d.clave}.xml`, respuesta: `fecr-demo/${d.clave}_respuesta.xml`, pdf: `fecr-demo/${d.clave}.pdf` });
      for (const f of Object.values(d.files)) expect(existsSync(join(work, f))).toBe(true);
    }
    expect(r.stderr).toContain('issuer 3101123456 SOFTWARE TICO SOCIEDAD ANONIMA: already registered');
    expect(r.stderr).not.toContain('created profile');
    expect(r.stderr).not.toContain('warning:');
  });

  it('the demo profile is an ordinary profile afterwards: documents list shows the eighteen documents', async () => {
    const r = await fecr(['documents', 'list', '--profile', 'demo', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const docs = JSON.parse(r.stdout) as DocumentStatus[];
    expect(docs).toHaveLength(2 * KINDS.length);
    expect(new Set(docs.map((d) => d.estado))).toEqual(new Set(['aceptado']));
    expect(docs.map((d) => d.clave)).toEqual(expect.arrayContaining(first.map((x) => x.clave)));
  });

  it('a document Hacienda rejects: exit 3, the verdicts still in the table and the files (Mensaje 3)', async () => {
    // A clock three days ahead: FechaEmision is later than Hacienda's reception, which the emulator (as the real
    // Hacienda) rejects.
    const later = () => new Date(Date.now() + 3 * 86_400_000);
    const r = await runCli(['demo', '--json', '--out', 'rejected'], { env, cwd: work, now: later });
    expect(r.code, r.stderr).toBe(3);
    const result = JSON.parse(r.stdout) as DemoResult;
    expect(result.documents.map((d) => d.estado)).toEqual(KINDS.map(() => 'rechazado'));
    for (const d of result.documents) {
      expect(d.mensaje).toBe(3);
      expect(parseMensajeHaciendaXml(readFileSync(join(work, d.files.respuesta!), 'utf8')).mensaje).toBe(3);
    }
    expect(r.stderr.trim().split('\n').at(-1)).toBe(`error: not every document was accepted: ${KINDS.map((k) => `${k} rechazado`).join(', ')}`);
  }, 90_000);

  it('--out DIR, and an aligned table on a terminal', async () => {
    const r = await fecr(['demo', '--out', 'elsewhere'], { tty: true });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^kind +numeroConsecutivo +estado +clave +files$/);
    expect(lines[1]).toMatch(/^-+ {2}-+/);
    expect(lines).toHaveLength(2 + KINDS.length);
    expect(r.stdout).not.toContain('\t');
    const clave = lines[2]!.split(/ {2,}/)[3]!;
    expect(existsSync(join(work, 'elsewhere', `${clave}_respuesta.xml`))).toBe(true);
  });

  it('a profile on Hacienda sandbox is refused in one line (test documents only go to the emulator)', async () => {
    const set = await fecr(['config', 'set', 'env', 'sandbox', '--profile', 'real']);
    expect(set.code, set.stderr).toBe(0);
    const r = await fecr(['demo'], { env: { FECR_PROFILE: 'real' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: fecr demo sends test documents to the embedded Hacienda emulator; profile "real" uses Hacienda's sandbox/);
  });

  it('a bad --timeout is a usage error', async () => {
    const r = await fecr(['demo', '--timeout', 'soon']);
    expect(r.code).toBe(2);
  });
});

describe('fecr demo on a remote profile (logged in to a real fecr serve): the same expectations', () => {
  const rdir = join(home, 'remote');
  const renv = { HOME: join(rdir, 'home'), FECR_NO_KEYCHAIN: '1' };
  const rfecr = (args: string[], stdin?: string) => runCli(args, { env: renv, cwd: rdir, stdin });
  let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;

  beforeAll(async () => {
    mkdirSync(rdir, { recursive: true });
    const serverEnv = { HOME: join(rdir, 'server-home'), FECR_DATA_DIR: join(rdir, 'server-data'), FECR_NO_KEYCHAIN: '1' };
    const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: 'clave-demo-remota-2026\n' });
    expect(acct.code, acct.stderr).toBe(0);
    serve = await spawnFecr(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--emulator-delay', '50'], { env: serverEnv });
    for (const [k, v] of [
      ['authUrl', serve.ready.authUrl],
      ['baseUrl', serve.ready.baseUrl],
    ]) {
      const r = await rfecr(['config', 'set', k!, v!, '--profile', 'hosted']);
      expect(r.code, r.stderr).toBe(0);
    }
    const login = await rfecr(['login', '--profile', 'hosted', '--base', 'acme', '--password-stdin'], 'clave-demo-remota-2026\n');
    expect(login.code, login.stderr).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
  });

  it('--profile hosted: issuer registered on the service, every kind aceptado, the files; a second run the next consecutivos', async () => {
    const r = await rfecr(['demo', '--profile', 'hosted', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const one = JSON.parse(r.stdout) as DemoResult;
    expect(one).toMatchObject({ profile: 'hosted', mode: 'remote', dataDir: null, issuer: { identificacion: '3101123456', registered: true, p12: 'fecr-demo/issuer.p12' } });
    expect(one.documents.map((d) => [d.kind, d.estado, d.numeroConsecutivo])).toEqual([
      ['FE', 'aceptado', '00100001010000000001'],
      ['FE exonerada', 'aceptado', '00100001010000000002'],
      ['NC', 'aceptado', '00100001030000000001'],
      ['TE', 'aceptado', '00100001040000000001'],
      ['TE extranjero', 'aceptado', '00100001040000000002'],
      ['ND', 'aceptado', '00100001020000000001'],
      ['FEC', 'aceptado', '00100001080000000001'],
      ['FEE', 'aceptado', '00100001090000000001'],
      ['REP', 'aceptado', '00100001100000000001'],
    ]);
    expect(r.stderr).toContain(`profile "hosted": ${serve!.ready.baseUrl}`);
    expect(r.stderr).not.toContain('created profile');
    expectDemoFiles(join(rdir, 'fecr-demo'), one.documents);
    // Only the named profile was used: no "demo" profile, no local data dir on the client.
    expect(Object.keys(JSON.parse(readFileSync(join(renv.HOME, '.config', 'fecr', 'config.json'), 'utf8')).profiles)).toEqual(['hosted']);
    expect(existsSync(join(renv.HOME, '.local', 'share', 'fecr'))).toBe(false);

    const again = await rfecr(['demo', '--profile', 'hosted', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const two = JSON.parse(again.stdout) as DemoResult;
    expect(two.issuer.registered).toBe(false);
    expect(two.documents.map((d) => [d.estado, d.numeroConsecutivo.slice(8)])).toEqual([
      ['aceptado', '010000000003'],
      ['aceptado', '010000000004'],
      ['aceptado', '030000000002'],
      ['aceptado', '040000000003'],
      ['aceptado', '040000000004'],
      ['aceptado', '020000000002'],
      ['aceptado', '080000000002'],
      ['aceptado', '090000000002'],
      ['aceptado', '100000000002'],
    ]);
  }, 90_000);
});

describe('fecr demo as a real process (node bin/fecr.js; dist/ built by the globalSetup)', () => {
  it('fresh HOME: exit 0, nine aceptado (every kind); prints the wall time', () => {
    const fresh = tempDir('fecr-demo-proc-');
    try {
      const bin = new URL('../bin/fecr.js', import.meta.url).pathname;
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [bin, 'demo', '--json'], { env: { PATH: process.env.PATH ?? '', HOME: fresh, FECR_NO_KEYCHAIN: '1' }, cwd: fresh, encoding: 'utf8', timeout: 80_000 });
      const ms = performance.now() - t0;
      expect(r.status, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout) as DemoResult;
      expect(result.documents.map((d) => d.estado)).toEqual(KINDS.map(() => 'aceptado'));
      console.log(`fecr demo (fresh HOME, spawned): ${Math.round(ms)} ms`);
      expect(ms).toBeLessThan(30_000);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 90_000);
});
