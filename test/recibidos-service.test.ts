// The buyer's side through the service (issue 16), on a real store and the local emulator: suppliers' comprobantes
// signed by other signers than fecr's own code (xmlsec1 --sign, each real-world shape) are imported as valid with the
// policy warning; each kind of defect is refused with its reason and nothing is stored as valid; the loop (import,
// accept / partially accept / reject, the worker sends the MensajeReceptor, all aceptado) and the monthly summary.
import { createHash } from 'node:crypto';
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
import { ReceptionClient, resolveEndpoints } from '../src/hacienda/index.js';
import { formatCr } from '../src/core/dates.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { buildApiApp } from '../src/server/api-app.js';
import { RemoteRecibidos } from '../src/client/recibidos.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { FAST_WORKER, withTimeout } from './helpers/worker-docs.js';
import { templateDocument, xmlsecSign, type Shape } from './helpers/xmlsec-sign.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

const BUYER = { tipo: '02', numero: '3101123456', nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA' };

/** A supplier's signed comprobante POSTed to the emulator by its supplier, and accepted there. */
async function sentBySupplier(xml: Buffer): Promise<void> {
  const text = xml.toString('utf8');
  const clave = /<Clave>(\d{50})<\/Clave>/.exec(text)![1]!;
  const emisor = /<Emisor>[\s\S]*?<Tipo>(\d+)<\/Tipo>\s*<Numero>(\d+)<\/Numero>/.exec(text)!;
  const client = new ReceptionClient({ endpoints: resolveEndpoints('local', { baseUrl: emu.url }), credentials: { username: `proveedor-${emisor[2]}`, password: 'x' } });
  try {
    await client.submit({ clave, fecha: /<FechaEmision>([^<]+)</.exec(text)![1]!, emisor: { tipoIdentificacion: emisor[1]!, numeroIdentificacion: emisor[2]! }, receptor: { tipoIdentificacion: BUYER.tipo, numeroIdentificacion: BUYER.numero }, comprobanteXml: xml });
    await emu.state.whenIdle();
    const st = await client.getStatus(clave);
    expect(st.estado, st.mensaje?.detalleMensaje ?? '').toBe('aceptado');
  } finally {
    await client.close();
  }
}
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
    // A v4.3 document signed by someone else is still refused (another document: a copy of the clave above would be
    // "already imported", whatever its bytes).
    const other = credsOf(banco);
    const v43b = unsigned().unsignedXml.replace(/xml-schemas\/v4\.4\//g, 'xml-schemas/v4.3/');
    const forged = xmlsecSign(templateDocument(v43b.replace(/<Detalle>[^<]*/, '<Detalle>Otro detalle'), SHAPES['the v4.1-era policy identifier and hash']!, other), other);
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
    // Answered once: the same decision again is refused, as is another one, and nothing more is queued.
    await expect(decideRecibido(env.ctx, accountId, a, { decision: 'aceptar' })).rejects.toThrow(/ya fue respondido \(aceptado\) con el MensajeReceptor \d{20}/);
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

// Issue 25 (3): one row per document. The same comprobante in other bytes (a UTF-8 BOM, a trailing newline) is
// "already imported", in one batch or across imports; an altered copy is refused (never a second valid row); a refused
// copy does not block the genuine one; the unique indexes hold on the store itself; the document is answered once and
// counted once by the monthly summary.
describe('import: one row per document, whatever its bytes; answered once; counted once', () => {
  let acct: number;
  beforeAll(async () => {
    // The buyer's own account (a cédula is an issuer of one account of a service, issue 36): the summary is compared
    // with what it counted before.
    acct = accountId;
  });
  const signed = () => {
    const creds = credsOf(cafetal);
    return Buffer.from(xmlsecSign(templateDocument(unsigned().unsignedXml, SHAPES['XPath filter + exclusive C14N, two references (Hacienda, Anexo 2)']!, creds), creds));
  };
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
  const rowsOf = (clave: string) => env.ctx.store.db.selectFrom('recibidos').select(['id', 'estado', 'sha256', 'xml']).where('account_id', '=', acct).where('clave', '=', clave).execute();

  it('a BOM and a trailing newline: one row; a second aceptar is refused; the summary counts its IVA once', async () => {
    const xml = signed();
    // The supplier sent it to Hacienda (issue 26: an answer about a comprobante Hacienda has no record of is refused).
    await sentBySupplier(xml);
    const [plain] = await importRecibidos(env.ctx, acct, [{ name: 'a.xml', bytes: xml }]);
    const [bom] = await importRecibidos(env.ctx, acct, [{ name: 'a-bom.xml', bytes: Buffer.concat([BOM, xml]) }]);
    expect(plain!).toMatchObject({ estado: 'pendiente', creado: true });
    const before = await monthlySummary(env.ctx, acct, (await getRecibido(env.ctx, acct, plain!.clave!))!.fechaEmision!.slice(0, 7));
    expect(bom!).toMatchObject({ id: plain!.id, clave: plain!.clave, estado: 'pendiente', creado: false });
    expect(bom!.avisos.map((a) => a.message).join('\n')).toMatch(/already imported from other bytes .*: the stored copy is kept/);
    const acc = await decideRecibido(env.ctx, acct, plain!.clave!, { decision: 'aceptar' });
    // Imported again after the answer (the case that answered twice): still the one row, and no second answer.
    const [nl] = await importRecibidos(env.ctx, acct, [{ name: 'a-nl.xml', bytes: Buffer.concat([xml, Buffer.from('\n')]) }]);
    expect(nl!).toMatchObject({ id: plain!.id, estado: 'aceptado', creado: false });
    expect(await rowsOf(plain!.clave!)).toHaveLength(1);
    await expect(decideRecibido(env.ctx, acct, plain!.clave!, { decision: 'aceptar' })).rejects.toThrow(/ya fue respondido \(aceptado\)/);
    await expect(decideRecibido(env.ctx, acct, plain!.clave!, { decision: 'parcial', ivaAcreditable: '1' })).rejects.toThrow(/ya fue respondido/);
    const mr = await env.ctx.store.db.selectFrom('documents').select('clave').where('account_id', '=', acct).where('clave', 'like', `${plain!.clave}-%`).execute();
    expect(mr.map((d) => d.clave)).toEqual([acc.mensajeClave]);
    // Counted once Hacienda accepted the MensajeReceptor (issue 26), and once.
    const worker = startWorker(env.ctx, FAST_WORKER);
    try {
      await withTimeout(
        (async () => {
          while (!['aceptado', 'rechazado', 'error'].includes((await getRecibido(env.ctx, acct, plain!.clave!))?.respuestaEstado ?? '')) await new Promise((res) => setTimeout(res, 50));
        })(),
        20_000,
        'the MensajeReceptor verdict',
      );
    } finally {
      await worker.stop();
    }
    const det = (await getRecibido(env.ctx, acct, plain!.clave!))!;
    expect(det.respuestaEstado, det.decision?.respuestaDetalle ?? '').toBe('aceptado');
    const s = await monthlySummary(env.ctx, acct, det.fechaEmision!.slice(0, 7));
    expect(s.documentos).toBe(before.documentos + 1);
    expect(s.totales.ivaAcreditable).toBe(dec(before.totales.ivaAcreditable).plus(dec(det.totalImpuesto!)).toFixed(5));
  });

  it('in one batch: the first copy is stored, the others are already imported', async () => {
    const xml = signed();
    const rs = await importRecibidos(env.ctx, acct, [
      { name: 'b.xml', bytes: xml },
      { name: 'b-bom.xml', bytes: Buffer.concat([BOM, xml]) },
      { name: 'b-nl.xml', bytes: Buffer.concat([xml, Buffer.from('\r\n')]) },
    ]);
    expect(rs.map((r) => [r.archivo, r.estado, r.creado, r.id])).toEqual([
      ['b.xml', 'pendiente', true, rs[0]!.id],
      ['b-bom.xml', 'pendiente', false, rs[0]!.id],
      ['b-nl.xml', 'pendiente', false, rs[0]!.id],
    ]);
    expect(await rowsOf(rs[0]!.clave!)).toHaveLength(1);
  });

  it('two imports at once of two copies: one row', async () => {
    const xml = signed();
    const [[x], [y]] = await Promise.all([
      importRecibidos(env.ctx, acct, [{ name: 'c.xml', bytes: xml }]),
      importRecibidos(env.ctx, acct, [{ name: 'c-bom.xml', bytes: Buffer.concat([BOM, xml]) }]),
    ]);
    expect([x!.creado, y!.creado].sort()).toEqual([false, true]);
    expect(x!.id).toBe(y!.id);
    expect(await rowsOf(x!.clave!)).toHaveLength(1);
  });

  it('a refused copy is stored as its hash and findings, and does not block the genuine document', async () => {
    const xml = signed();
    const text = xml.toString('utf8');
    const i = text.indexOf('<Detalle>') + '<Detalle>'.length;
    const tampered = Buffer.from(text.slice(0, i) + (text[i] === 'X' ? 'Y' : 'X') + text.slice(i + 1));
    const [bad] = await importRecibidos(env.ctx, acct, [{ name: 'd-alterada.xml', bytes: tampered }]);
    expect(bad!.estado).toBe('invalido');
    const [good] = await importRecibidos(env.ctx, acct, [{ name: 'd.xml', bytes: xml }]);
    expect(good!).toMatchObject({ estado: 'pendiente', creado: true });
    // Altered after the genuine one was imported: refused as it is, naming the row kept; never a second valid row.
    const j = text.indexOf('<TotalComprobante>') + '<TotalComprobante>'.length;
    const [late] = await importRecibidos(env.ctx, acct, [{ name: 'd-alterada-2.xml', bytes: Buffer.from(text.slice(0, j) + '1' + text.slice(j)) }]);
    expect(late!.estado).toBe('invalido');
    expect(late!.hallazgos.map((h) => `${h.path}: ${h.message}`).join('\n')).toMatch(
      new RegExp(`^Clave: already imported from other bytes \\(received row ${good!.id}, pendiente\\); this copy fails its checks: refused, the stored one is kept$`, 'm'),
    );
    const rows = await rowsOf(good!.clave!);
    expect(rows.map((r) => [r.estado, r.xml.length > 0])).toEqual([
      ['invalido', false],
      ['pendiente', true],
      ['invalido', false],
    ]);
    // The store itself refuses a second valid row of the document (by clave, and by issuer + consecutivo).
    const row = await env.ctx.store.db.selectFrom('recibidos').selectAll().where('id', '=', good!.id).executeTakeFirstOrThrow();
    const { id: _id, ...copy } = row;
    await expect(env.ctx.store.db.insertInto('recibidos').values({ ...copy, sha256: 'f'.repeat(64) }).execute()).rejects.toThrow(/unique/i);
    const otherClave = `${row.clave!.slice(0, 42)}${row.clave!.slice(42) === '00000000' ? '11111111' : '00000000'}`;
    await expect(env.ctx.store.db.insertInto('recibidos').values({ ...copy, sha256: 'e'.repeat(64), clave: otherClave }).execute()).rejects.toThrow(/unique/i);
    await env.ctx.store.db.insertInto('recibidos').values({ ...copy, sha256: 'd'.repeat(64), estado: 'invalido' }).execute();
  });
});

// Issue 25 (6): the upload route's size limit. A document over 4 MiB is refused unread and not stored (its sha256 and
// finding are), as is one a client declares larger (`tamano`: its bounded read); the route takes one document of the
// limit in base64 (other routes: 1 MiB); a body larger than that is a 413.
describe('POST /api/recibidos: the size limit of a received comprobante', () => {
  it('over 4 MiB refused unread and not stored whole; 1.5 MB taken; declared size; 413 beyond the route limit', async () => {
    const app = buildApiApp(env.ctx, { authenticate: async () => ({ base: 'comprador' }) });
    const post = (payload: unknown) => app.inject({ method: 'POST', url: '/api/recibidos', headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    try {
      const big = Buffer.alloc(4 * 1024 * 1024 + 10, '<');
      const t0 = Date.now();
      const over = await post({ documentos: [{ xml: big.toString('base64'), nombre: 'grande.xml' }] });
      expect(over.statusCode, over.body.slice(0, 300)).toBe(200);
      expect(Date.now() - t0).toBeLessThan(5_000);
      const r = over.json().data[0];
      expect(r).toMatchObject({ archivo: 'grande.xml', estado: 'invalido', clave: null });
      expect(r.hallazgos).toEqual([{ path: 'archivo', message: '4194314 bytes: over the limit of 4194304 bytes for a comprobante (FECR_RECIBIDOS_MAX_BYTES); not read' }]);
      const row = await env.ctx.store.db.selectFrom('recibidos').select(['sha256', 'xml']).where('id', '=', r.id).executeTakeFirstOrThrow();
      expect(row.xml).toBe('');
      expect(row.sha256).toBe(createHash('sha256').update(big).digest('hex'));

      const mid = await post({ xml: Buffer.alloc(1_500_000, 'a').toString('base64'), nombre: 'mediano.xml' });
      expect(mid.statusCode).toBe(200);
      expect(mid.json().data[0]).toMatchObject({ estado: 'invalido', hallazgos: [{ path: 'xml' }] });

      const declared = await post({ documentos: [{ xml: Buffer.from('<x/>').toString('base64'), nombre: 'cortado.xml', tamano: 50_000_000 }] });
      expect(declared.json().data[0].hallazgos[0].message).toMatch(/^50000000 bytes: over the limit of 4194304 bytes/);

      const huge = await post({ xml: Buffer.alloc(6 * 1024 * 1024).toString('base64') });
      expect(huge.statusCode).toBe(413);
      // Other routes keep their 1 MiB.
      expect((await app.inject({ method: 'POST', url: '/api/recibidos/consultar', headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, payload: JSON.stringify({ x: 'a'.repeat(1024 * 1024) }) })).statusCode).toBe(413);
    } finally {
      await app.close();
    }
  });

  it('the remote client sends a file read only up to the limit with its size (tamano), others without', async () => {
    const bodies: { documentos: { nombre: string; tamano?: number }[] }[] = [];
    const remote = new RemoteRecibidos(async <T,>(_path: string, body: unknown) => {
      bodies.push(body as (typeof bodies)[number]);
      return { data: [] } as T;
    });
    await remote.import([
      { name: 'grande.xml', bytes: Buffer.alloc(10), size: 99 },
      { name: 'normal.xml', bytes: Buffer.alloc(5) },
    ]);
    expect(bodies[0]!.documentos.map((d) => [d.nombre, d.tamano])).toEqual([
      ['grande.xml', 99],
      ['normal.xml', undefined],
    ]);
  });
});
