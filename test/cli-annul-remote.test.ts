// Issue 30 in hosted mode: `fecr documents annul|payment|replace` and `fecr status` against a profile logged in to a
// real `fecr serve` child process (its own data dir and emulator), over fecr's own routes (src/server/api-documentos.ts):
// the same results as local mode (test/cli-annul-replace-payment.test.ts has the figures), and the refusals as one line.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseComprobanteXml } from '../src/core/xml/parse-comprobante.js';
import { fixtureBody } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const root = tempDir('fecr-annul-remote-');
const work = join(root, 'work');
const env: Record<string, string> = { HOME: join(root, 'home'), FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
const fecr = (args: string[], opts: { stdin?: string } = {}) => runCli(args, { env, cwd: work, ...opts });
const PASSWORD = 'clave-de-la-cuenta-2026';
const issuer = makeTestIssuer();
let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;
let n = 800;

async function send(body: Record<string, unknown>): Promise<{ clave: string; estado: string }> {
  const file = join(work, `body-${n}.json`);
  writeFileSync(file, JSON.stringify({ ...body, numeroReferencia: n++ }));
  const r = await fecr(['send', file, '--wait', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { clave: string; estado: string };
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  const serverEnv = { HOME: join(root, 'server-home'), FECR_DATA_DIR: join(root, 'server-data'), FECR_NO_KEYCHAIN: '1' };
  const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: `${PASSWORD}\n` });
  expect(acct.code, acct.stderr).toBe(0);
  serve = await spawnFecr(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--emulator-delay', '50'], { env: serverEnv });
  for (const [k, v] of [
    ['authUrl', serve.ready.authUrl],
    ['baseUrl', serve.ready.baseUrl],
  ] as const) expect((await fecr(['config', 'set', k, v])).code).toBe(0);
  const login = await fecr(['login', '--base', 'acme', '--password-stdin'], { stdin: `${PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(issuer.issuer));
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 90_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('remote mode', () => {
  it('annul: FE aceptado → NC aceptado with code 01 and the FE\'s figures; status names it; a second annul refused', async () => {
    const fe = await send(fixtureBody('02-fe-bienes-servicios-descuentos'));
    expect(fe.estado).toBe('aceptado');
    const r = await fecr(['documents', 'annul', fe.clave, '--wait', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const nc = JSON.parse(r.stdout) as { clave: string; estado: string };
    expect(nc.estado).toBe('aceptado');
    const xml = async (clave: string) => parseComprobanteXml((await fecr(['download', clave, '--out', '-'])).stdout);
    const [feXml, ncXml] = [await xml(fe.clave), await xml(nc.clave)];
    expect(ncXml.resumen).toEqual(feXml.resumen);
    expect(ncXml.lineas).toEqual(feXml.lineas);
    expect(ncXml.informacionReferencia).toEqual([{ tipoDocIR: '01', numero: fe.clave, fechaEmisionIR: feXml.fechaEmision, codigo: '01', razon: 'Anula documento de referencia' }]);
    const s = JSON.parse((await fecr(['status', fe.clave, '--json'])).stdout);
    expect(s.referenciadoPor).toEqual([expect.objectContaining({ clave: nc.clave, tipo: 'NC', estado: 'aceptado', codigoReferencia: '01' })]);
    expect(s.saldo).toBe('0.00000');
    const again = await fecr(['documents', 'annul', fe.clave]);
    expect(again.code).toBe(1);
    expect(again.stderr.trimEnd().split('\n')).toEqual([`error: ${fe.clave} is already annulled by ${nc.clave} (aceptado)`]);
  }, 90_000);

  it('payments: a credit FE of 100 000 + IVA paid in two REPs → balance 0; a third refused; replace of an accepted FE refused', async () => {
    const body = fixtureBody('01-fe-servicios-13');
    body.condicionVenta = '10';
    body.plazoCredito = 60;
    body.resumenFactura = { codigoTipoMoneda: { codigoMoneda: 'CRC' } };
    body.detalleServicio = [
      { numeroLinea: 1, codigo: '8311500000000', detalle: 'Consultoría en gestión comercial', cantidad: 1, unidadMedida: 'Sp', precioUnitario: '100000.00', subTotal: '100000.00', montoTotal: '100000.00', impuestoNeto: 13000, montoTotalLinea: 113000, impuesto: [{ codigo: '01', codigoTarifa: '08', tarifa: '13', monto: '13000.00' }] },
    ];
    const fe = await send(body);
    expect(fe.estado).toBe('aceptado');
    for (const amount of ['56500', '56500']) {
      const r = await fecr(['documents', 'payment', fe.clave, '--amount', amount, '--wait', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).estado).toBe('aceptado');
    }
    expect(JSON.parse((await fecr(['status', fe.clave, '--json'])).stdout).saldo).toBe('0.00000');
    const third = await fecr(['documents', 'payment', fe.clave, '--amount', '10']);
    expect(third.code).toBe(1);
    expect(third.stderr.trimEnd().split('\n')).toEqual([`error: ${fe.clave} is paid in full (balance 0.00000 CRC)`]);
    writeFileSync(join(work, 'corrected.json'), JSON.stringify(fixtureBody('01-fe-servicios-13')));
    const rep = await fecr(['documents', 'replace', fe.clave, 'corrected.json']);
    expect(rep.code).toBe(1);
    expect(rep.stderr.trimEnd().split('\n')).toEqual([`error: ${fe.clave} is aceptado: only a comprobante Hacienda rejected is replaced (CodigoReferencia 16)`]);
  }, 90_000);
});
