// Issue 25.2: forged supplier invoices. A comprobante signed with a certificate that carries the supplier's cédula
// but was issued by nobody we trust (self-signed; under an expired or non-CA "intermediate"; under a look-alike root)
// is refused at import with the chain finding, through the service and the API; it cannot be accepted (aceptar /
// parcial refused with that finding) nor counted by the monthly summary. A genuine one (the emulator's test suppliers,
// issued by fecr's test root, trusted in env local only) is imported. The shipped trust anchors are the certificates
// schemas/trust/SOURCES.md describes, and they chain as it says. The operator's setting (FECR_RECIBIDOS_TRUST) adds a
// CA; a row imported under a CA no longer trusted is checked again before it is accepted.
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import { dec } from '../src/core/money.js';
import { CHAIN_FINDING_PATH } from '../src/core/received/check.js';
import { loadP12, type SigningCredentials } from '../src/core/sign/p12.js';
import { createTestCa, createTestP12, type TestCaMaterial, type TestP12Options } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { supplierComprobante, TEST_SUPPLIERS } from '../src/emulator/suppliers.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { registerIssuer } from '../src/service/issuers.js';
import { decideRecibido } from '../src/service/recibidos/decide.js';
import { importRecibidos } from '../src/service/recibidos/import.js';
import { getRecibido, monthlySummary } from '../src/service/recibidos/queries.js';
import { checkTrustSetting, loadTrustStore, TrustSettingError } from '../src/service/recibidos/trust.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { FAST_WORKER, withTimeout } from './helpers/worker-docs.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { templateDocument, xmlsecSign, type Shape } from './helpers/xmlsec-sign.js';

const BUYER = { tipo: '02', numero: '3101123456', nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA' };
const cafetal = TEST_SUPPLIERS[0]!;
let emu: RunningEmulator;
let env: TestContext;
let accountId: number;
let seq = 700;

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  env = await makeServiceContext({ haciendaUrl: emu.url });
  accountId = (await createAccount(env.ctx, { base: 'confianza', password: 'una clave larga 789' })).account.id;
  await registerIssuer(env.ctx, accountId, makeTestIssuer().issuer);
});
afterAll(async () => {
  await env?.close();
  await emu?.close();
});

/** A certificate with the supplier's own cédula and name (what a forger can make), with these options. */
const supplierCreds = (o: Partial<TestP12Options> = {}): SigningCredentials =>
  loadP12(createTestP12({ id: cafetal.identificacion, type: cafetal.tipoIdentificacion, pin: '1', name: cafetal.nombre, ...o }), '1', new Date());
const unsigned = () => supplierComprobante({ receptor: BUYER, kind: 'FE' }, cafetal, seq++, new Date()).unsignedXml;
/** Signed by fecr's own signer (KeyInfo: the signing certificate alone). */
const signedBy = (creds: SigningCredentials) => Buffer.from(signCanonical(unsigned(), creds, { signingTime: new Date(), newId: () => Math.random().toString(16).slice(2, 10) }));
/** Signed by xmlsec1 with the issuing CA after the signing certificate in KeyInfo. */
const WITH_CHAIN: Shape = { c14n: 'exc', docTransform: 'enveloped', keyInfoReference: false, certDigest: 'sha256', signingTime: formatCr(new Date()), policy: 'v4.4', chain: true };
const signedWithChain = (creds: SigningCredentials) => Buffer.from(xmlsecSign(templateDocument(unsigned(), WITH_CHAIN, creds), creds));

async function genuine(): Promise<Buffer> {
  const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receptor: BUYER, supplier: cafetal.identificacion }) });
  const { documentos } = (await res.json()) as { documentos: { xml: string }[] };
  await emu.state.whenIdle();
  return Buffer.from(documentos[0]!.xml, 'base64');
}

const chainFinding = (r: { hallazgos: { path: string; message: string }[] }) => r.hallazgos.find((h) => h.path === CHAIN_FINDING_PATH)?.message ?? '';
/** The error a decision is refused with (it must be refused). */
async function refusal(p: Promise<unknown>): Promise<{ message: string; details: { path: string; message: string }[] }> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x as { message: string; details?: { path: string; message: string }[] },
  );
  expect(e, 'the decision should have been refused').toBeDefined();
  return { message: e!.message, details: e!.details ?? [] };
}

describe('the shipped trust anchors (schemas/trust/, SOURCES.md)', () => {
  const trustDir = fileURLToPath(new URL('../schemas/trust/', import.meta.url));
  const sources = readFileSync(join(trustDir, 'SOURCES.md'), 'utf8');
  const shipped = ['firma-digital', 'hacienda-production'].flatMap((d) => readdirSync(join(trustDir, d)).map((f) => ({ file: f, cert: new X509Certificate(readFileSync(join(trustDir, d, f))) })));

  it('every shipped certificate is in SOURCES.md with its SHA-256 fingerprint, and is a CA', () => {
    expect(shipped.length).toBe(10);
    for (const { file, cert } of shipped) {
      const fp = cert.fingerprint256.replace(/:/g, '').toLowerCase();
      expect(sources, file).toMatch(new RegExp(`\\| \`${file.replace(/[.]/g, '\\.')}\` \\|[^\\n]*\`${fp}\``));
      expect(cert.ca, file).toBe(true);
    }
  });

  it('chains as SOURCES.md says: every issuing CA to CA RAIZ NACIONAL - COSTA RICA v2 but the 2026 ones, whose policy CA is missing', () => {
    const byName = (re: RegExp) => shipped.filter((s) => re.test(s.file)).map((s) => s.cert);
    const [root] = byName(/^ca-raiz-nacional/);
    const [hacienda] = byName(/^ca-raiz-ministerio/);
    for (const r of [root!, hacienda!]) expect(r.checkIssued(r) && r.verify(r.publicKey)).toBe(true);
    const politicas = byName(/^ca-politica/);
    for (const p of politicas) expect(p.checkIssued(root!) && p.verify(root!.publicKey)).toBe(true);
    for (const { file, cert } of shipped.filter((s) => /^ca-sinpe/.test(s.file))) {
      const chained = politicas.some((p) => cert.checkIssued(p) && cert.verify(p.publicKey));
      expect(chained, file).toBe(!file.endsWith('-2026.pem'));
    }
  });

  it('production trusts the two real roots; sandbox the same (its CAs were not found); env local adds the test root', () => {
    const names = (e: 'production' | 'sandbox' | 'local') => loadTrustStore(e).anchors.map((a) => new X509Certificate(Buffer.from(a.der)).subject.split('\n').find((l) => l.startsWith('CN='))).sort();
    expect(names('production')).toEqual(['CN=CA RAIZ MINISTERIO DE HACIENDA', 'CN=CA RAIZ NACIONAL - COSTA RICA v2']);
    expect(names('sandbox')).toEqual(names('production'));
    expect(names('local')).toEqual(['CN=CA PERSONA JURIDICA - PRUEBAS FECR', ...names('production')].sort());
  });
});

describe('import refuses a forged supplier invoice with the chain finding; a genuine one is imported', () => {
  it('self-signed, with the supplier\'s cédula: refused, and for that reason alone', async () => {
    const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'falsa.xml', bytes: signedBy(supplierCreds({ selfSigned: true })) }]);
    expect(r!.estado).toBe('invalido');
    expect(r!.hallazgos.map((h) => h.path)).toEqual([CHAIN_FINDING_PATH]);
    expect(chainFinding(r!)).toMatch(/^not issued by a trusted CA: the signing certificate "DISTRIBUIDORA EL CAFETAL LIMITADA" is self-signed \(trust anchors: .*CA RAIZ NACIONAL - COSTA RICA v2/);
  });

  it('through an expired intermediate (in KeyInfo): refused', async () => {
    const vencida = createTestCa({ name: 'CA INTERMEDIA VENCIDA', notBefore: new Date('2019-01-01'), notAfter: new Date('2021-01-01') });
    const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'vencida.xml', bytes: signedWithChain(supplierCreds({ issuer: vencida })) }]);
    expect(r!.estado).toBe('invalido');
    expect(chainFinding(r!)).toMatch(/DISTRIBUIDORA EL CAFETAL LIMITADA → CA INTERMEDIA VENCIDA: "CA INTERMEDIA VENCIDA" expired at 2021-01-01/);
  });

  it('through a certificate that is not a CA (in KeyInfo): refused', async () => {
    const hoja = createTestCa({ name: 'CERTIFICADO DE FIRMA COMUN', ca: false });
    const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'no-ca.xml', bytes: signedWithChain(supplierCreds({ issuer: hoja })) }]);
    expect(r!.estado).toBe('invalido');
    expect(chainFinding(r!)).toMatch(/"CERTIFICADO DE FIRMA COMUN" is not a CA certificate \(basicConstraints\)/);
  });

  it('under a look-alike root named CA RAIZ NACIONAL - COSTA RICA v2: refused', async () => {
    const falsa = createTestCa({ name: 'CA RAIZ NACIONAL - COSTA RICA v2', selfSigned: true });
    const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'raiz-falsa.xml', bytes: signedWithChain(supplierCreds({ issuer: falsa })) }]);
    expect(r!.estado).toBe('invalido');
    expect(chainFinding(r!)).toMatch(/"CA RAIZ NACIONAL - COSTA RICA v2" is a self-signed CA that is not a trust anchor/);
  });

  it('genuine: the emulator\'s supplier (fecr\'s test root, env local) and one through a valid intermediate are imported', async () => {
    const [g] = await importRecibidos(env.ctx, accountId, [{ name: 'genuina.xml', bytes: await genuine() }]);
    expect(g!.hallazgos).toEqual([]);
    expect(g!.estado).toBe('pendiente');
    const buena = createTestCa({ name: 'CA INTERMEDIA DE PRUEBAS' });
    const [i] = await importRecibidos(env.ctx, accountId, [{ name: 'intermedia.xml', bytes: signedWithChain(supplierCreds({ issuer: buena })) }]);
    expect(i!.hallazgos).toEqual([]);
  });

  it('beyond env local the test root is not trusted: the same genuine test document is refused in production', async () => {
    const production: ServiceContext = { ...env.ctx, hacienda: { ...env.ctx.hacienda, environment: 'production' } };
    const [r] = await importRecibidos(production, accountId, [{ name: 'prueba-en-produccion.xml', bytes: await genuine() }]);
    expect(r!.estado).toBe('invalido');
    expect(chainFinding(r!)).toMatch(/its issuer CN=CA PERSONA JURIDICA - PRUEBAS FECR, .* is not a trusted CA/);
    expect(chainFinding(r!)).not.toMatch(/trust anchors: .*PRUEBAS FECR/);
  });
});

describe('a refused document is neither accepted nor counted', () => {
  it('aceptar and parcial are refused with the chain finding; the summary counts the genuine one only', async () => {
    const [f] = await importRecibidos(env.ctx, accountId, [{ name: 'falsa-2.xml', bytes: signedBy(supplierCreds({ selfSigned: true })) }]);
    const [g] = await importRecibidos(env.ctx, accountId, [{ name: 'genuina-2.xml', bytes: await genuine() }]);
    for (const input of [{ decision: 'aceptar' as const }, { decision: 'parcial' as const, ivaAcreditable: '1' }]) {
      const e = await refusal(decideRecibido(env.ctx, accountId, f!.clave!, input));
      expect(e.message).toMatch(/fue rechazado al importarlo; no se puede responder/);
      expect(e.details.map((d) => d.path)).toContain(CHAIN_FINDING_PATH);
    }
    const acc = await decideRecibido(env.ctx, accountId, g!.clave!, { decision: 'aceptar' });
    // Counted once Hacienda accepted the MensajeReceptor (issue 26).
    const worker = startWorker(env.ctx, FAST_WORKER);
    try {
      await withTimeout(
        (async () => {
          while ((await getRecibido(env.ctx, accountId, g!.clave!))?.respuestaEstado !== 'aceptado') await new Promise((res) => setTimeout(res, 50));
        })(),
        20_000,
        'the MensajeReceptor verdict',
      );
    } finally {
      await worker.stop();
    }
    const det = (await getRecibido(env.ctx, accountId, g!.clave!))!;
    const s = await monthlySummary(env.ctx, accountId, det.fechaEmision!.slice(0, 7));
    expect(s.documentos).toBe(1);
    expect(s.totales.ivaAcreditable).toBe(dec(acc.montoTotalImpuestoAcreditar!).toFixed(5));
    expect(s.invalidos).toBeGreaterThanOrEqual(1);
  });

  it('through the API: POST /api/recibidos refuses it with the finding; /decidir answers 400 with it; /resumen leaves it out', async () => {
    // The buyer's own account (a cédula is an issuer of one account of a service, issue 36): the summary compared with before.
    const app = buildApiApp(env.ctx, { authenticate: async () => ({ base: 'confianza' }) });
    const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url, headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    try {
      const mesAntes = /<FechaEmision>(\d{4}-\d{2})/.exec(signedBy(supplierCreds()).toString())![1];
      const antes = (await post('/api/recibidos/resumen', { mes: mesAntes, emisor: BUYER.numero })).json();
      const { documentos, invalidos } = (antes.data ?? antes) as { documentos: number; invalidos: number };
      const imp = await post('/api/recibidos', { documentos: [{ xml: signedBy(supplierCreds({ selfSigned: true })).toString('base64'), nombre: 'falsa.xml' }] });
      expect(imp.statusCode).toBe(200);
      const row = imp.json().data[0] as { clave: string; estado: string; hallazgos: { path: string; message: string }[] };
      expect(row.estado).toBe('invalido');
      expect(chainFinding(row)).toMatch(/self-signed/);
      const dec400 = await post('/api/recibidos/decidir', { clave: row.clave, decision: 'aceptar' });
      expect(dec400.statusCode).toBe(400);
      expect(JSON.stringify(dec400.json())).toContain(CHAIN_FINDING_PATH);
      const mes = /<FechaEmision>(\d{4}-\d{2})/.exec(signedBy(supplierCreds()).toString())![1];
      const res = await post('/api/recibidos/resumen', { mes, emisor: BUYER.numero });
      expect(res.statusCode).toBe(200);
      expect(res.json().data ?? res.json()).toMatchObject({ documentos, invalidos: invalidos + 1 });
    } finally {
      await app.close();
    }
  });
});

describe('the operator\'s trust setting (FECR_RECIBIDOS_TRUST)', () => {
  it('adds a CA; a row imported under it is checked again before it is accepted, once that CA is no longer trusted', async () => {
    const propia: TestCaMaterial = createTestCa({ name: 'CA PROPIA DEL OPERADOR', selfSigned: true });
    const pem = join(env.dir, 'ca-propia.pem');
    writeFileSync(pem, propia.certificatePem);
    const withOwn: ServiceContext = { ...env.ctx, recibidos: { trust: [pem] } };
    const bytes = signedBy(supplierCreds({ issuer: propia }));
    expect(chainFinding((await importRecibidos({ ...env.ctx }, accountId, [{ name: 'x.xml', bytes }]))[0]!)).toMatch(/issuer CN=CA PROPIA DEL OPERADOR/);
    // The same document, refused above (that row holds nothing), imported with the operator's CA: valid.
    const [r] = await importRecibidos(withOwn, accountId, [{ name: 'propia.xml', bytes: Buffer.concat([bytes, Buffer.from('\n')]) }]);
    expect(r!.hallazgos).toEqual([]);
    expect(r!.estado).toBe('pendiente');
    // The operator drops that CA: the row is not accepted, with the finding; a rejection is still possible.
    const e = await refusal(decideRecibido({ ...env.ctx }, accountId, r!.clave!, { decision: 'aceptar' }));
    expect(e.message).toMatch(/no está firmado con un certificado de una autoridad certificadora de confianza/);
    expect(e.details.map((d) => d.path)).toEqual([CHAIN_FINDING_PATH]);
    // (Forced: this test document was never sent to Hacienda, issue 26.)
    expect((await decideRecibido({ ...env.ctx }, accountId, r!.clave!, { decision: 'rechazar', forzar: true })).estado).toBe('rechazado');
  });

  it('a path that cannot be read, a file with no certificate, a certificate that is not a CA: an error naming the setting', () => {
    const none = join(env.dir, 'nada.pem');
    writeFileSync(none, 'no hay certificados aquí\n');
    const leaf = join(env.dir, 'hoja.pem');
    writeFileSync(leaf, `-----BEGIN CERTIFICATE-----\n${supplierCreds().certificateBase64}\n-----END CERTIFICATE-----\n`);
    expect(() => checkTrustSetting([join(env.dir, 'no-existe.pem')])).toThrow(/^FECR_RECIBIDOS_TRUST: cannot read .*no-existe\.pem \(ENOENT\)$/);
    expect(() => checkTrustSetting([none], '--recibidos-trust')).toThrow(/^--recibidos-trust: .*nada\.pem holds no certificate/);
    expect(() => checkTrustSetting([leaf])).toThrow(TrustSettingError);
    expect(() => checkTrustSetting([leaf])).toThrow(/"DISTRIBUIDORA EL CAFETAL LIMITADA" is not a CA certificate/);
    const folder = join(env.dir, 'cas');
    mkdirSync(folder);
    writeFileSync(join(folder, 'otra-hoja.crt'), readFileSync(leaf));
    writeFileSync(join(folder, 'notas.txt'), 'not read: not *.pem, *.crt, *.cer');
    expect(() => checkTrustSetting([folder])).toThrow(/otra-hoja\.crt: "DISTRIBUIDORA EL CAFETAL LIMITADA" is not a CA certificate/);
  });
});
