// `fecr recibidos` (issue 16), the whole loop through the CLI in both modes:
//  - local: the default profile, the service in process on FECR_DATA_DIR and its embedded emulator (whose state file
//    the emulator's test suppliers wrote their invoices into first);
//  - remote: a profile logged in to a real `fecr serve` child (pointed at an emulator of this test), with the
//    account's webhook on a receiver that verifies every delivery's Standard Webhooks signature.
// Three supplier invoices imported from a folder (progress and summary), imported again (idempotent), accepted /
// partially accepted / rejected, the three MensajeReceptor aceptado by the emulator, list/show/resumen/download, and a
// refused file with its reasons.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../src/core/money.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { PassThrough } from 'node:stream';
import { main } from '../src/cli/program.js';
import { runCli, tempDir } from './helpers/cli.js';
import { startWebhookReceiver, waitUntil, type WebhookReceiver } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const root = tempDir('fecr-recibidos-');
const test = makeTestIssuer();
const PASSWORD = 'clave-de-la-cuenta-2026';
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function supplierInvoices(emu: RunningEmulator, dir: string): Promise<string[]> {
  const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ receptor: { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre }, cantidad: 3 }),
  });
  const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string }[] };
  mkdirSync(dir, { recursive: true });
  for (const d of documentos) writeFileSync(join(dir, `${d.clave}.xml`), Buffer.from(d.xml, 'base64'));
  await emu.state.whenIdle();
  return documentos.map((d) => d.clave);
}

describe.each(['local', 'remote'] as const)('%s mode', (mode) => {
  const dir = join(root, mode);
  const work = join(dir, 'work');
  const env: Record<string, string> =
    mode === 'local' ? { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' } : { HOME: join(dir, 'home'), FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
  const fecr = (args: string[], opts: { stdin?: string } = {}) => runCli(args, { env, cwd: work, ...opts });
  let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;
  let emu: RunningEmulator | undefined;
  let hook: WebhookReceiver | undefined;
  let claves: string[] = [];

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
    if (mode === 'local') {
      // The embedded emulator keeps its state in the data dir: the suppliers issue into it before the CLI runs.
      mkdirSync(env.FECR_DATA_DIR!, { recursive: true });
      const local = await startEmulator({ dataFile: join(env.FECR_DATA_DIR!, 'emulator.db'), processingDelayMs: 10, validationThreads: 0 });
      claves = await supplierInvoices(local, join(work, 'entrada'));
      await local.close();
    } else {
      emu = await startEmulator({ processingDelayMs: 20 });
      claves = await supplierInvoices(emu, join(work, 'entrada'));
      hook = await startWebhookReceiver();
      const serverEnv = { HOME: join(dir, 'server-home'), FECR_DATA_DIR: join(dir, 'server-data'), FECR_NO_KEYCHAIN: '1' };
      const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin', '--webhook-url', hook.url], { env: serverEnv, stdin: `${PASSWORD}\n` });
      expect(acct.code, acct.stderr).toBe(0);
      hook.secret = acct.stdout.trim().split('\n').pop();
      serve = await spawnFecr(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--hacienda-url', emu.url], { env: serverEnv });
      for (const [k, v] of [
        ['authUrl', serve.ready.authUrl],
        ['baseUrl', serve.ready.baseUrl],
      ] as const) {
        expect((await fecr(['config', 'set', k, v])).code).toBe(0);
      }
      const login = await fecr(['login', '--base', 'acme', '--password-stdin'], { stdin: `${PASSWORD}\n` });
      expect(login.code, login.stderr).toBe(0);
    }
    const reg = await fecr(['emisor', 'register', 'issuer.json']);
    expect(reg.code, reg.stderr).toBe(0);
  }, 90_000);

  afterAll(async () => {
    await serve?.stop();
    await emu?.close();
    await hook?.close();
  });

  it('imports a folder of three supplier invoices, then again (idempotent)', async () => {
    const r = await fecr(['recibidos', 'import', 'entrada']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('imported 3 files: 3 valid, 0 refused; 3 new, 0 already imported');
    const again = await fecr(['recibidos', 'import', 'entrada', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const results = JSON.parse(again.stdout) as { creado: boolean; estado: string; haciendaEstado: string }[];
    expect(results.map((x) => [x.creado, x.estado, x.haciendaEstado])).toEqual(claves.map(() => [false, 'pendiente', 'aceptado']));
  }, 60_000);

  it('refuses a tampered file with its reasons, exit 1, nothing stored as valid', async () => {
    const xml = readFileSync(join(work, 'entrada', `${claves[0]}.xml`), 'utf8');
    writeFileSync(join(work, 'alterada.xml'), xml.replace(/<TotalComprobante>/, '<TotalComprobante>1'));
    const r = await fecr(['recibidos', 'import', 'alterada.xml']);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: alterada.xml was refused');
    expect(r.stderr).toMatch(/ResumenFactura\/TotalComprobante: expected/);
    expect(r.stderr).toMatch(/digest/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const list = JSON.parse((await fecr(['recibidos', 'list', '--estado', 'invalido', '--json'])).stdout) as { clave: string }[];
    expect(list.map((x) => x.clave)).toEqual([claves[0]]);
  });

  it('accepts one, partially accepts one, rejects one: all three MensajeReceptor aceptado', async () => {
    const [a, p, r] = claves as [string, string, string];
    const acc = await fecr(['recibidos', 'aceptar', a, '--json']);
    expect(acc.code, acc.stderr + acc.stdout).toBe(0);
    expect(JSON.parse(acc.stdout)).toMatchObject({ estado: 'aceptado', mensaje: 1, respuestaEstado: 'aceptado' });
    const par = await fecr(['recibidos', 'parcial', p, '--iva-acreditable', '1000', '--detalle', 'Parte del servicio no se prestó']);
    expect(par.code, par.stderr).toBe(0);
    expect(par.stdout).toMatch(/parcial: MensajeReceptor \d{8}06\d{10} \(Mensaje 2\), Hacienda: aceptado/);
    const rej = await fecr(['recibidos', 'rechazar', r, '--json']);
    expect(rej.code, rej.stderr).toBe(0);
    expect(JSON.parse(rej.stdout)).toMatchObject({ estado: 'rechazado', mensaje: 3, respuestaEstado: 'aceptado' });
    const list = JSON.parse((await fecr(['recibidos', 'list', '--json'])).stdout) as { clave: string; estado: string; respuestaEstado: string }[];
    const byClave = new Map(list.filter((x) => x.estado !== 'invalido').map((x) => [x.clave, x]));
    expect([a, p, r].map((c) => [byClave.get(c)?.estado, byClave.get(c)?.respuestaEstado])).toEqual([
      ['aceptado', 'aceptado'],
      ['parcial', 'aceptado'],
      ['rechazado', 'aceptado'],
    ]);
    const show = await fecr(['recibidos', 'show', p]);
    expect(show.stdout).toMatch(/^ivaAcreditable\s+1000\.00000$/m);
  }, 90_000);

  it('the monthly summary adds up; download gives the received XML, its MensajeHacienda and our MensajeReceptor', async () => {
    const [a, p] = claves as [string, string, string];
    const detA = JSON.parse((await fecr(['recibidos', 'show', a, '--json'])).stdout) as { fechaEmision: string; totalImpuesto: string; totalComprobante: string };
    const mes = detA.fechaEmision.slice(0, 7);
    const s = await fecr(['recibidos', 'resumen', mes, '--issuer', test.issuer.identificacion, '--json']);
    expect(s.code, s.stderr).toBe(0);
    const sum = JSON.parse(s.stdout) as { documentos: number; rechazados: number; totales: Record<string, string>; porTarifa: { ivaAcreditable: string; gastoAplicable: string }[] };
    expect(sum.documentos).toBe(2);
    expect(sum.rechazados).toBe(1);
    const iva = dec(detA.totalImpuesto).plus(1000);
    expect(sum.totales.ivaAcreditable).toBe(iva.toFixed(5));
    expect(sum.porTarifa.reduce((x, l) => x.plus(dec(l.gastoAplicable)), dec(0)).toFixed(5)).toBe(sum.totales.gastoAplicable);
    // Without --issuer (issue 36): a list, one summary per issuer, each what --issuer gives (here one).
    expect(JSON.parse((await fecr(['recibidos', 'resumen', mes, '--json'])).stdout)).toEqual([sum]);
    const table = await fecr(['recibidos', 'resumen', mes]);
    expect(table.stdout).toMatch(/^total\t/m);
    expect(table.stdout.split('\n')[0]).toBe(`emisor ${test.issuer.identificacion} ${test.issuer.nombre}`);

    for (const [type, marker] of [
      ['xml', '<FacturaElectronica'],
      ['respuesta', '<MensajeHacienda'],
      ['mensaje-receptor', '<MensajeReceptor'],
      ['respuesta-receptor', '<MensajeHacienda'],
    ] as const) {
      const d = await fecr(['download', p, '--type', type, '--out', '-']);
      expect(d.code, `${type}: ${d.stderr}`).toBe(0);
      expect(d.stdout).toContain(marker);
    }
    if (mode === 'local') expect(existsSync(join(env.FECR_DATA_DIR!, 'fecr.db'))).toBe(true);
  }, 60_000);

  if (mode === 'local') {
    it('a folder on a terminal: a progress bar redrawn in place; on a 0-column terminal (unknown width) plain lines', async () => {
      const onTerminal = async (columns: number) => {
        const stderr = Object.assign(new PassThrough(), { isTTY: true, columns });
        let err = '';
        stderr.on('data', (c: Buffer) => (err += c.toString()));
        const code = await main(['recibidos', 'import', 'entrada'], { io: { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env, cwd: work, stdoutIsTTY: false, stdinIsTTY: false } });
        return { code, err };
      };
      const wide = await onTerminal(100);
      expect(wide.code, wide.err).toBe(0);
      expect(wide.err).toMatch(/\r\[#+\] importing 3\/3/);
      const zero = await onTerminal(0);
      expect(zero.code, zero.err).toBe(0);
      expect(zero.err).not.toContain('\r');
      expect(zero.err).toContain('importing 3/3\n');
    });
  }

  if (mode === 'remote') {
    it('the account heard every import and decision, each delivery verified (Standard Webhooks)', async () => {
      await waitUntil(() => hook!.received.filter((w) => w.payload?.type === 'recibido.decidido').length >= 3, { timeoutMs: 20_000, label: 'the decision webhooks' });
      // The MensajeReceptor verdicts come as the usual document event, folioId <clave>-<consecutivoReceptor>.
      await waitUntil(() => hook!.received.filter((w) => /^[A-Za-z0-9]{50}-\d{20}$/.test(w.clave ?? '')).length >= 3, { timeoutMs: 20_000, label: 'the MensajeReceptor verdicts' });
      expect(hook!.received.every((w) => w.verified)).toBe(true);
      const imported = hook!.received.filter((w) => w.payload?.type === 'recibido.importado');
      expect(imported.filter((w) => w.payload.estado === 'pendiente').map((w) => w.clave).sort()).toEqual([...claves].sort());
      expect(imported.some((w) => w.payload.estado === 'invalido' && w.payload.hallazgos.length > 0)).toBe(true);
      const decided = hook!.received.filter((w) => w.payload?.type === 'recibido.decidido').map((w) => w.payload.decision);
      expect(decided.sort()).toEqual(['aceptado', 'parcial', 'rechazado']);
    }, 60_000);
  }
});
