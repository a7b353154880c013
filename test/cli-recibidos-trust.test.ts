// Issue 25.2 through the CLI (local mode: the service in process on FECR_DATA_DIR, its embedded emulator): a supplier
// invoice signed with a self-signed certificate carrying the supplier's cédula is refused by `fecr recibidos import`
// with the chain finding (exit 1); a genuine one (the emulator's test supplier, fecr's test root) is imported;
// `aceptar` of the forged one is refused with that finding; `resumen` counts the genuine one only. The operator's
// CAs: FECR_RECIBIDOS_TRUST or the profile's recibidosTrust make a document under them valid; a setting that cannot
// be used is one error line naming it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestCa, createTestP12, type TestP12Options } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { startEmulator } from '../src/emulator/index.js';
import { supplierComprobante, TEST_SUPPLIERS } from '../src/emulator/suppliers.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const root = tempDir('fecr-recibidos-trust-');
afterAll(() => rmSync(root, { recursive: true, force: true }));
const test = makeTestIssuer();
const BUYER = { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre };
const cafetal = TEST_SUPPLIERS[0]!;
const work = join(root, 'work');
const env = { HOME: root, FECR_DATA_DIR: join(root, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra }, cwd: work });
let seq = 900;

/** An invoice of the supplier signed by fecr's signer with a certificate carrying the supplier's cédula. */
function forged(file: string, o: Partial<TestP12Options>): string {
  const creds = loadP12(createTestP12({ id: cafetal.identificacion, type: cafetal.tipoIdentificacion, pin: '1', name: cafetal.nombre, ...o }), '1', new Date());
  const { unsignedXml, doc } = supplierComprobante({ receptor: BUYER, kind: 'FE' }, cafetal, seq++, new Date());
  writeFileSync(join(work, file), signCanonical(unsignedXml, creds, { signingTime: new Date(), newId: () => Math.random().toString(16).slice(2, 10) }));
  return doc.clave;
}

let genuina = '';
let falsa = '';

beforeAll(async () => {
  mkdirSync(join(work, 'entrada'), { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  // The embedded emulator keeps its state in the data dir: its test supplier issues into it before the CLI runs.
  mkdirSync(env.FECR_DATA_DIR, { recursive: true });
  const emu = await startEmulator({ dataFile: join(env.FECR_DATA_DIR, 'emulator.db'), processingDelayMs: 10, validationThreads: 0 });
  const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receptor: BUYER, supplier: cafetal.identificacion }) });
  const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string }[] };
  genuina = documentos[0]!.clave;
  writeFileSync(join(work, 'entrada', `${genuina}.xml`), Buffer.from(documentos[0]!.xml, 'base64'));
  await emu.state.whenIdle();
  await emu.close();
  falsa = forged('falsa.xml', { selfSigned: true });
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 60_000);

describe('fecr recibidos: a forged supplier invoice', () => {
  it('import refuses it with the chain finding (exit 1); the genuine one is imported', async () => {
    const r = await fecr(['recibidos', 'import', 'falsa.xml']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error: falsa\.xml was refused\nds:Signature \(certificate\.chain\): not issued by a trusted CA: the signing certificate "DISTRIBUIDORA EL CAFETAL LIMITADA" is self-signed \(trust anchors: /,
    );
    const g = await fecr(['recibidos', 'import', 'entrada']);
    expect(g.code, g.stderr).toBe(0);
    expect(g.stdout).toMatch(new RegExp(`^${genuina} pendiente: FE from 3101987654`));
  });

  it('aceptar and parcial of it are refused with that finding; resumen counts the genuine one only', async () => {
    for (const args of [['aceptar', falsa], ['parcial', falsa, '--iva-acreditable', '1']]) {
      const a = await fecr(['recibidos', ...args, '--timeout', '0']);
      expect(a.code).toBe(1);
      expect(a.stderr).toMatch(/fue rechazado al importarlo; no se puede responder/);
      expect(a.stderr).toMatch(/ds:Signature \(certificate\.chain\): not issued by a trusted CA/);
    }
    // Waits for Hacienda's verdict: resumen counts the IVA once Hacienda accepted the MensajeReceptor (issue 26).
    const ok = await fecr(['recibidos', 'aceptar', genuina, '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    const mes = new Date().toLocaleDateString('sv-SE', { timeZone: 'America/Costa_Rica' }).slice(0, 7);
    const s = await fecr(['recibidos', 'resumen', mes, '--issuer', test.issuer.identificacion, '--json']);
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout)).toMatchObject({ documentos: 1, invalidos: 1 });
  });
});

describe("the operator's CAs: FECR_RECIBIDOS_TRUST, the profile's recibidosTrust", () => {
  it('a document under the operator\'s own CA is refused without it and imported with it', async () => {
    const propia = createTestCa({ name: 'CA PROPIA DEL OPERADOR', selfSigned: true });
    writeFileSync(join(work, 'ca-propia.pem'), propia.certificatePem);
    for (const f of ['propia-0.xml', 'propia-1.xml', 'propia-2.xml']) forged(f, { issuer: propia });
    // (Another file than those imported below: a file refused once is answered from its stored refusal.)
    const without = await fecr(['recibidos', 'import', 'propia-0.xml']);
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/its issuer CN=CA PROPIA DEL OPERADOR, O=PRUEBAS FECR, C=CR is not a trusted CA/);
    const byEnv = await fecr(['recibidos', 'import', 'propia-1.xml'], { FECR_RECIBIDOS_TRUST: join(work, 'ca-propia.pem') });
    expect(byEnv.code, byEnv.stderr).toBe(0);
    expect((await fecr(['config', 'set', 'recibidosTrust', 'ca-propia.pem'])).code).toBe(0);
    const byProfile = await fecr(['recibidos', 'import', 'propia-2.xml']);
    expect(byProfile.code, byProfile.stderr).toBe(0);
    expect((await fecr(['config', 'unset', 'recibidosTrust'])).code).toBe(0);
  });

  it('a setting that cannot be used: one error line naming it', async () => {
    const bad = await fecr(['recibidos', 'list'], { FECR_RECIBIDOS_TRUST: join(work, 'no-existe.pem') });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: FECR_RECIBIDOS_TRUST: cannot read .*no-existe\.pem \(ENOENT\)\n$/);
    expect((await fecr(['config', 'set', 'recibidosTrust', 'tampoco.pem'])).code).toBe(0);
    const viaProfile = await fecr(['recibidos', 'list']);
    expect(viaProfile.stderr).toMatch(/^error: recibidosTrust: cannot read .*tampoco\.pem \(ENOENT\)\n$/);
    expect((await fecr(['config', 'unset', 'recibidosTrust'])).code).toBe(0);
  });
});
