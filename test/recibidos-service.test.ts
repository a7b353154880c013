// The buyer's side through the service (issue 16), on a real store and the local emulator: suppliers' comprobantes
// signed by other signers than fecr's own code (xmlsec1 --sign, each real-world shape) are imported as valid with the
// policy warning; each kind of defect is refused with its reason and nothing is stored as valid; the loop (import,
// accept / partially accept / reject, the worker sends the MensajeReceptor, all aceptado) and the monthly summary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadP12, type SigningCredentials } from '../src/core/sign/p12.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { MemoryStore } from '../src/emulator/store.js';
import { SupplierBook, supplierComprobante, TEST_SUPPLIERS } from '../src/emulator/suppliers.js';
import { createAccount } from '../src/service/accounts.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { registerIssuer } from '../src/service/issuers.js';
import { decideRecibido } from '../src/service/recibidos/decide.js';
import { importRecibidos } from '../src/service/recibidos/import.js';
import { getRecibido, listRecibidos, monthlySummary, recibidoFile } from '../src/service/recibidos/queries.js';
import { dec } from '../src/core/money.js';
import { formatCr } from '../src/core/dates.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { buildApiApp } from '../src/server/api-app.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { FAST_WORKER, withTimeout } from './helpers/worker-docs.js';
import { templateDocument, xmlsecSign, type Shape } from './helpers/xmlsec-sign.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

const BUYER = { tipo: '02', numero: '3101123456', nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA' };
let emu: RunningEmulator;
let env: TestContext;
let accountId: number;
let t: TestIssuer;
const book = new SupplierBook(new MemoryStore(), Date.now);
const [cafetal, banco] = TEST_SUPPLIERS as [typeof TEST_SUPPLIERS[0], typeof TEST_SUPPLIERS[0]];
const credsOf = (s: (typeof TEST_SUPPLIERS)[number]): SigningCredentials => {
  const p = book.p12(s);
  return loadP12(p.p12, p.pin, new Date());
};
let seq = 100;
const unsigned = (over: Partial<Parameters<typeof supplierComprobante>[0]> = {}, supplier = cafetal) =>
  supplierComprobante({ receptor: BUYER, kind: 'FE', ...over }, supplier, seq++, new Date());

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  env = await makeServiceContext({ haciendaUrl: emu.url });
  accountId = (await createAccount(env.ctx, { base: 'comprador', password: 'una clave larga 123' })).account.id;
  t = makeTestIssuer();
  await registerIssuer(env.ctx, accountId, t.issuer);
});
afterAll(async () => {
  await env?.close();
  await emu?.close();
});

const SHAPES: Record<string, Shape> = {
  'inclusive C14N, three references, KeyValue (CRLibre)': {
    c14n: 'inc',
    docTransform: 'enveloped',
    docC14nTransform: false,
    keyInfoReference: true,
    keyValue: true,
    certDigest: 'sha256',
    signingTime: formatCr(new Date()),
    policy: 'v4.4',
    rootNamespaces: { ds: 'http://www.w3.org/2000/09/xmldsig#', xsd: 'http://www.w3.org/2001/XMLSchema', xsi: 'http://www.w3.org/2001/XMLSchema-instance' },
  },
  'XPath filter + exclusive C14N, two references (Hacienda, Anexo 2)': {
    c14n: 'exc',
    docTransform: 'xpath',
    keyInfoReference: false,
    certDigest: 'sha1',
    signingTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    policy: 'v4.4',
    haciendaIds: true,
  },
  'the v4.1-era policy identifier and hash': {
    c14n: 'exc',
    docTransform: 'enveloped',
    keyInfoReference: false,
    certDigest: 'sha256',
    signingTime: formatCr(new Date()),
    policy: 'v4.1',
  },
};

describe('import: signatures of other signers, in each real-world shape', () => {
  for (const [name, shape] of Object.entries(SHAPES)) {
    it(`${name} → imported as valid`, async () => {
      const creds = credsOf(cafetal);
      const signed = xmlsecSign(templateDocument(unsigned().unsignedXml, shape, creds), creds);
      expect(xmlsecVerify(signed).ok).toBe(true);
      const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'proveedor.xml', bytes: Buffer.from(signed) }]);
      expect(r!.hallazgos, JSON.stringify(r!.hallazgos)).toEqual([]);
      expect(r!.estado).toBe('pendiente');
      if (shape.policy === 'v4.1') expect(r!.avisos.map((a) => a.message).join('\n')).toMatch(/polic/i);
    });
  }
});

describe('import: a v4.3 document (old systems) is read with the checks that apply', () => {
  it('signature, signer, clave and receptor checked; XSD and totals not, said as warnings', async () => {
    const creds = credsOf(cafetal);
    const v43 = unsigned().unsignedXml.replace(/xml-schemas\/v4\.4\//g, 'xml-schemas/v4.3/');
    const xml = xmlsecSign(templateDocument(v43, SHAPES['the v4.1-era policy identifier and hash']!, creds), creds);
    const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'v43.xml', bytes: Buffer.from(xml) }]);
    expect(r!.hallazgos).toEqual([]);
    expect(r!.estado).toBe('pendiente');
    const warnings = r!.avisos.map((a) => `${a.path}: ${a.message}`).join('\n');
    expect(warnings).toMatch(/^version: v4\.3 document: Hacienda no longer accepts v4\.3/m);
    expect(warnings).toMatch(/^xsd: v4\.3 document: not validated/m);
    expect(warnings).toMatch(/^ResumenFactura: v4\.3 document: totals not recomputed/m);
    // A v4.3 document signed by someone else is still refused.
    const other = credsOf(banco);
    const forged = xmlsecSign(templateDocument(v43.replace(/<Detalle>[^<]*/, '<Detalle>Otro detalle'), SHAPES['the v4.1-era policy identifier and hash']!, other), other);
    const [f] = await importRecibidos(env.ctx, accountId, [{ name: 'v43-otro.xml', bytes: Buffer.from(forged) }]);
    expect(f!.estado).toBe('invalido');
    expect(f!.hallazgos.map((h) => h.path)).toContain('ds:Signature/ds:KeyInfo');
  });
});

describe('import: refusals, each with its reason, nothing stored as valid', () => {
  const good = () => {
    const creds = credsOf(cafetal);
    return xmlsecSign(templateDocument(unsigned().unsignedXml, SHAPES['XPath filter + exclusive C14N, two references (Hacienda, Anexo 2)']!, creds), creds);
  };
  const refused = async (bytes: Buffer | string, pattern: RegExp) => {
    const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'x.xml', bytes: Buffer.from(bytes) }]);
    expect(r!.estado).toBe('invalido');
    expect(r!.hallazgos.map((h) => `${h.path}: ${h.message}`).join('\n')).toMatch(pattern);
    if (r!.clave) expect((await listRecibidos(env.ctx, accountId, { estado: 'pendiente' })).some((x) => x.clave === r!.clave)).toBe(false);
    return r!;
  };

  it('one byte changed in the supplier XML', async () => {
    const xml = good();
    const i = xml.indexOf('<Detalle>') + '<Detalle>'.length;
    await refused(xml.slice(0, i) + (xml[i] === 'X' ? 'Y' : 'X') + xml.slice(i + 1), /digest/i);
  });

  it('a signature by a certificate that is not the Emisor\'s', async () => {
    const other = credsOf(banco);
    const xml = xmlsecSign(templateDocument(unsigned().unsignedXml, SHAPES['the v4.1-era policy identifier and hash']!, other), other);
    await refused(xml, /ds:KeyInfo: signed with the certificate of CPJ-4-000-001021, not of the Emisor 3101987654/);
  });

  it('a receptor that is not ours', async () => {
    const creds = credsOf(cafetal);
    const xml = xmlsecSign(templateDocument(unsigned({ receptor: { tipo: '02', numero: '3101555555', nombre: 'OTRA EMPRESA S.A.' } }).unsignedXml, SHAPES['the v4.1-era policy identifier and hash']!, creds), creds);
    await refused(xml, /Receptor\/Identificacion\/Numero: 3101555555 is not an issuer of this account/);
  });

  it('totals off by 1', async () => {
    const creds = credsOf(cafetal);
    const u = unsigned().unsignedXml;
    const total = /<TotalComprobante>([\d.]+)<\/TotalComprobante>/.exec(u)![1]!;
    const off = u.replace(`<TotalComprobante>${total}</TotalComprobante>`, `<TotalComprobante>${dec(total).plus(1).toFixed(5)}</TotalComprobante>`);
    const xml = xmlsecSign(templateDocument(off, SHAPES['the v4.1-era policy identifier and hash']!, creds), creds);
    await refused(xml, /ResumenFactura\/TotalComprobante: expected [\d.]+ by the ANEXOS v4.4 formulas, got [\d.]+ \(difference 1\.00000/);
  });

  it('not XSD-valid', async () => {
    const creds = credsOf(cafetal);
    const bad = unsigned().unsignedXml.replace('<CondicionVenta>01</CondicionVenta>', '<CondicionVenta>77</CondicionVenta>');
    const xml = xmlsecSign(templateDocument(bad, SHAPES['the v4.1-era policy identifier and hash']!, creds), creds);
    await refused(xml, /^xsd: not valid against FE v4.4: .*CondicionVenta/);
  });

  it('not XML', async () => {
    const r = await refused('esto no es XML, es una factura en PDF %PDF-1.7', /^xml: not well-formed XML/);
    expect(r.clave).toBeNull();
  });

  it('importing the same bytes twice is idempotent', async () => {
    const xml = good();
    const [a] = await importRecibidos(env.ctx, accountId, [{ name: 'a.xml', bytes: Buffer.from(xml) }]);
    const [b] = await importRecibidos(env.ctx, accountId, [{ name: 'b.xml', bytes: Buffer.from(xml) }]);
    expect(a!.creado).toBe(true);
    expect(b!.creado).toBe(false);
    expect(b!.id).toBe(a!.id);
    expect((await listRecibidos(env.ctx, accountId)).filter((x) => x.clave === a!.clave)).toHaveLength(1);
  });
});

describe('the loop: emulator suppliers → import → aceptar / parcial / rechazar → aceptado by Hacienda', () => {
  it('three invoices answered, all three MensajeReceptor aceptado, the monthly summary adds up', async () => {
    const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receptor: BUYER, cantidad: 3 }) });
    const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string }[] };
    await emu.state.whenIdle();
    const imported = await importRecibidos(
      env.ctx,
      accountId,
      documentos.map((d) => ({ name: `${d.clave}.xml`, bytes: Buffer.from(d.xml, 'base64') })),
    );
    expect(imported.map((r) => [r.estado, r.haciendaEstado, r.hallazgos])).toEqual(documentos.map(() => ['pendiente', 'aceptado', []]));
    expect((await recibidoFile(env.ctx, accountId, documentos[0]!.clave, 'RESPUESTA'))?.toString()).toContain('<MensajeHacienda');

    const [a, p, r] = documentos.map((d) => d.clave) as [string, string, string];
    const detA = (await getRecibido(env.ctx, accountId, a))!;
    const acc = await decideRecibido(env.ctx, accountId, a, { decision: 'aceptar' });
    expect(acc.montoTotalImpuestoAcreditar).toBe(dec(detA.totalImpuesto!).toFixed(5));
    expect(acc.consecutivoReceptor.slice(8, 10)).toBe('05');
    const par = await decideRecibido(env.ctx, accountId, p, { decision: 'parcial', ivaAcreditable: '1000', detalle: 'Parte del servicio no fue prestado' });
    expect(par.consecutivoReceptor.slice(8, 10)).toBe('06');
    const rej = await decideRecibido(env.ctx, accountId, r, { decision: 'rechazar', detalle: 'Mercadería no recibida' });
    expect(rej.consecutivoReceptor.slice(8, 10)).toBe('07');
    // Idempotent: the same decision again returns the same answer; another one is refused.
    expect((await decideRecibido(env.ctx, accountId, a, { decision: 'aceptar' })).consecutivoReceptor).toBe(acc.consecutivoReceptor);
    await expect(decideRecibido(env.ctx, accountId, a, { decision: 'rechazar' })).rejects.toThrow(/ya fue respondido/);

    const worker = startWorker(env.ctx, FAST_WORKER);
    try {
      await withTimeout(
        (async () => {
          for (;;) {
            const all = await Promise.all([a, p, r].map((c) => getRecibido(env.ctx, accountId, c)));
            if (all.every((x) => x?.respuestaEstado === 'aceptado' || x?.respuestaEstado === 'rechazado')) return all;
            await new Promise((res) => setTimeout(res, 50));
          }
        })(),
        20_000,
        'the MensajeReceptor verdicts',
      );
    } finally {
      await worker.stop();
    }
    for (const c of [a, p, r]) {
      const d = (await getRecibido(env.ctx, accountId, c))!;
      expect(d.respuestaEstado, d.decision?.respuestaDetalle ?? '').toBe('aceptado');
      expect((await recibidoFile(env.ctx, accountId, c, 'MENSAJE_RECEPTOR'))?.toString()).toContain('<MensajeReceptor');
      expect((await recibidoFile(env.ctx, accountId, c, 'RESPUESTA_MENSAJE_RECEPTOR'))?.toString()).toContain('<MensajeHacienda');
    }
    expect((await getRecibido(env.ctx, accountId, a))!.estado).toBe('aceptado');
    expect((await getRecibido(env.ctx, accountId, p))!.estado).toBe('parcial');
    expect((await getRecibido(env.ctx, accountId, r))!.estado).toBe('rechazado');

    const mes = detA.fechaEmision!.slice(0, 7);
    const s = await monthlySummary(env.ctx, accountId, mes);
    expect(s.documentos).toBe(2);
    expect(s.rechazados).toBe(1);
    const detP = (await getRecibido(env.ctx, accountId, p))!;
    const ivaEsperado = dec(acc.montoTotalImpuestoAcreditar!).plus(dec(par.montoTotalImpuestoAcreditar!));
    const gastoEsperado = dec(acc.montoTotalDeGastoAplicable!).plus(dec(par.montoTotalDeGastoAplicable!));
    expect(s.totales.ivaAcreditable).toBe(ivaEsperado.toFixed(5));
    expect(s.totales.gastoAplicable).toBe(gastoEsperado.toFixed(5));
    expect(s.porTarifa.reduce((x, l) => x.plus(dec(l.ivaAcreditable)), dec(0)).toFixed(5)).toBe(s.totales.ivaAcreditable);
    expect(dec(s.totales.impuesto).toFixed(5)).toBe(dec(detA.totalImpuesto!).plus(dec(detP.totalImpuesto!)).toFixed(5));
    expect(s.porTarifa.length).toBeGreaterThan(1);
  }, 60_000);
});

describe('POST /api/recibidos…: bad input is a 400 with the field named, never a 500', () => {
  it('malformed bodies, an unknown clave, a refused file as a result', async () => {
    const app = buildApiApp(env.ctx, { authenticate: async () => ({ base: 'comprador' }) });
    const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url, headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const bad = await post('/api/recibidos', { xml: 42 });
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json())).toMatch(/xml/);
    const notXml = await post('/api/recibidos', { documentos: [{ xml: Buffer.from('hola').toString('base64'), nombre: 'hola.txt' }] });
    expect(notXml.statusCode).toBe(200);
    expect(notXml.json().data[0]).toMatchObject({ archivo: 'hola.txt', estado: 'invalido' });
    expect((await post('/api/recibidos/decidir', { clave: '5'.repeat(50), decision: 'aceptar' })).statusCode).toBe(404);
    const d = await post('/api/recibidos/decidir', { clave: '5'.repeat(50), decision: 'quizas' });
    expect(d.statusCode).toBe(400);
    expect(JSON.stringify(d.json())).toMatch(/decision/);
    expect((await post('/api/recibidos/resumen', { mes: '2026-13' })).statusCode).toBe(400);
    expect((await post('/api/recibidos/archivo', { clave: 'corta' })).statusCode).toBe(400);
    await app.close();
  });
});
