// Emulator fidelity: documents signed by the core (issueComprobante) go through the real client and the
// emulator's full validation (XSD, XAdES, signer = issuer, clave, consecutivo, totals). Correct documents
// are accepted; each defect is rejected with its own reason in the MensajeHacienda.
import { createHash, randomBytes, sign as rsaSign } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExclusiveCanonicalization } from 'xml-crypto';
import { issueComprobante } from '../src/core/comprobante.js';
import { parseDocument } from '../src/core/document.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { NS_DS, NS_XADES } from '../src/core/sign/policy.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { buildMensajeReceptorXml } from '../src/core/xml/mensaje.js';
import type { Comprobante } from '../src/core/model.js';
import { partiesOf } from '../src/core/parties.js';
import { ReceptionClient, resolveEndpoints, type ReceptionStatus, type SubmitRequest } from '../src/hacienda/client/index.js';
import { CODIGOS, startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { FAST_RETRY } from './helpers/hacienda.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const names = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && !f.endsWith('.expected.json')).sort();
const body = (name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, unknown>;

let emu: RunningEmulator;
let rc: ReceptionClient;
let t: TestIssuer;
let seq = 0;
const NAME_FE = '01-fe-servicios-13.json';
const code = () => String(10_000_000 + seq++).slice(-8);
const newId = () => randomBytes(8).toString('hex');

beforeAll(async () => {
  t = makeTestIssuer();
  emu = await startEmulator({ processingDelayMs: 10 });
  rc = new ReceptionClient({
    endpoints: resolveEndpoints('local', { baseUrl: emu.url }),
    credentials: { username: t.issuer.usuarioHacienda, password: 'secreto' },
    retry: FAST_RETRY,
  });
});
afterAll(async () => {
  await rc.close();
  await emu.close();
});

function request(doc: Comprobante, xml: string, clave = doc.clave): SubmitRequest {
  // The POST's emisor is who issues the document: the Receptor of an FEC, which the buyer issues.
  const { issuer, counterpart: r } = partiesOf(doc);
  const req: SubmitRequest = {
    clave,
    fecha: doc.fechaEmision,
    emisor: { tipoIdentificacion: issuer!.tipo, numeroIdentificacion: issuer!.numero },
    comprobanteXml: xml,
  };
  // The reception JSON allows 12 characters (NOTES §4.3); longer foreign ids stay only in the XML.
  if (r && r.numero.length <= 12) req.receptor = { tipoIdentificacion: r.tipo, numeroIdentificacion: r.numero };
  return req;
}

async function verdict(req: SubmitRequest): Promise<ReceptionStatus> {
  const sent = await rc.submit(req);
  expect(sent.status).toBe('received');
  await emu.state.whenIdle();
  return rc.getStatus(req.clave);
}

function issue(name: string, mutate?: (b: Record<string, unknown>) => void, creds = t.creds) {
  const b = body(name);
  mutate?.(b);
  const r = issueComprobante(b, t.issuer, creds, { securityCode: code(), signingTime: new Date(), newId });
  if (!r.ok) throw new Error(`${name}: ${JSON.stringify(r.findings)}`);
  return r;
}

/** Unsigned canonical XML of a fixture, to alter before signing. */
function unsigned(name: string, mutate?: (b: Record<string, unknown>) => void) {
  const b = body(name);
  mutate?.(b);
  const p = parseDocument(b, t.issuer, { securityCode: code() });
  if (!p.ok) throw new Error(JSON.stringify(p.findings));
  return { doc: p.doc, xml: buildComprobanteXml(p.doc, p.totals) };
}

const sign = (xml: string) => signCanonical(xml, t.creds, { signingTime: new Date(), newId });
const codes = (st: ReceptionStatus) => [...new Set(st.mensaje?.errores.map((e) => e.codigo))];

describe('accepted: every signed fixture (FE, ND, NC, TE, FEC, FEE, REP)', () => {
  it.each(names)('%s → aceptado, Mensaje 1, totals echoed', async (name) => {
    const r = issue(name);
    const st = await verdict(request(r.doc, r.xml));
    expect(st.mensaje?.errores, st.mensaje?.detalleMensaje).toEqual([]);
    expect(st.estado).toBe('aceptado');
    expect(st.mensaje).toMatchObject({
      clave: r.doc.clave,
      mensaje: 1,
      estadoMensaje: 'Aceptado',
      // The answer names the comprobante's Emisor: an FEC's is the seller (the issuer is its Receptor).
      numeroCedulaEmisor: r.doc.emisor.identificacion.numero,
      totalFactura: r.totals.resumen.totalComprobante.toFixed(5),
    });
  });
});

describe('rejected, each with its specific reason', () => {
  const NAME = '01-fe-servicios-13.json';

  it('one byte changed after signing → the signature is not valid', async () => {
    const r = issue(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9001));
    const changed = r.xml.replace('Licencia anual', 'Licencia anuaL');
    expect(changed).not.toBe(r.xml);
    const st = await verdict(request(r.doc, changed));
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje?.mensaje).toBe(3);
    // Hacienda lists a signature failure as a plain sentence, without a code; the answer names no issuer.
    expect(codes(st)).toEqual([null]);
    expect(st.mensaje?.errores[0]?.mensaje).toMatch(/^La firma del comprobante electrónico no es válida \(/);
    expect(st.mensaje).toMatchObject({ nombreEmisor: 'DESCONOCIDO', numeroCedulaEmisor: '3101123456', totalFactura: '0' });
  });

  it('another policy hash (correctly re-signed) is accepted, as Hacienda accepts signatures with other policies', async () => {
    const r = issue(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9002));
    const wrong = createHash('sha256').update('otra política').digest('base64');
    const xml = resign(r.xml, (sp) => sp.replace('DWxin1xWOeI8OuWQXazh4VjLWAaCLAA954em7DMh0h8=', wrong));
    const st = await verdict(request(r.doc, xml));
    expect(st.mensaje?.errores, st.mensaje?.detalleMensaje).toEqual([]);
    expect(st.estado).toBe('aceptado');
  });

  it('no policy at all (correctly re-signed) → "La firma del documento no tiene el Policy Id"', async () => {
    const r = issue(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9010));
    const xml = resign(r.xml, (sp) => sp.replace(/<xades:SignaturePolicyIdentifier>[\s\S]*<\/xades:SignaturePolicyIdentifier>/, ''));
    const st = await verdict(request(r.doc, xml));
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje?.errores).toEqual([{ codigo: null, mensaje: 'La firma del documento no tiene el Policy Id', fila: null, columna: null, aviso: false }]);
  });

  it('certificate of another taxpayer → firmante ≠ emisor', async () => {
    const p12 = createTestP12({ id: '3101987654', type: '02', pin: '1234', name: 'DISTRIBUIDORA EL CAFETAL LIMITADA' });
    const other = loadP12(p12, '1234', new Date());
    const r = issue(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9003), other);
    const st = await verdict(request(r.doc, r.xml));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([-60]);
    expect(st.mensaje?.errores[0]?.mensaje).toBe('El contribuyente que firma la factura electrónica no es el emisor.');
  });

  it('consecutivo reused under a new clave → -99', async () => {
    const set = (b: Record<string, unknown>) => ((b as { numeroReferencia: number }).numeroReferencia = 9004);
    const first = issue(NAME, set);
    const second = issue(NAME, set);
    expect(second.doc.clave).not.toBe(first.doc.clave);
    expect(second.doc.numeroConsecutivo).toBe(first.doc.numeroConsecutivo);
    expect((await verdict(request(first.doc, first.xml))).estado).toBe('aceptado');
    const st = await verdict(request(second.doc, second.xml));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([-99]);
    expect(st.mensaje?.errores[0]?.mensaje).toMatch(
      new RegExp(`^La numeración consecutiva ${first.doc.numeroConsecutivo} del comprobante que se está utilizando para este archivo XML ya existe en nuestras bases de datos desde el día \\d{2}-\\d{2}-\\d{4} \\d{2}:\\d{2}:\\d{2} en la clave ${first.doc.clave}$`),
    );
  });

  it('TotalComprobante off by 1 colón → a sum of ResumenFactura, naming the figure (the emulator\'s own code)', async () => {
    const u = unsigned(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9005));
    const xml = u.xml.replace('<TotalComprobante>918125.00000</TotalComprobante>', '<TotalComprobante>918126.00000</TotalComprobante>');
    expect(xml).not.toBe(u.xml);
    const st = await verdict(request(u.doc, sign(xml)));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([CODIGOS.TOTALES]);
    expect(st.mensaje?.errores[0]?.mensaje).toContain('TotalComprobante');
  });

  it('clave date ≠ FechaEmision date → clave', async () => {
    const u = unsigned(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9006));
    const clave = u.doc.clave;
    expect(clave.slice(3, 9)).toBe('020326');
    const bad = clave.slice(0, 3) + '030326' + clave.slice(9);
    const xml = u.xml.replace(`<Clave>${clave}</Clave>`, `<Clave>${bad}</Clave>`);
    const st = await verdict(request(u.doc, sign(xml), bad));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([-405]);
    expect(st.mensaje?.errores[0]?.mensaje).toBe('La fecha de la clave númerica no concuerda con el campo Fecha Emisión del comprobante');
  });

  it('an XSD violation → esquema', async () => {
    const u = unsigned(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9007));
    const xml = u.xml.replace('<CodigoActividadEmisor>6201.0</CodigoActividadEmisor>', '<CodigoActividadEmisor>62010</CodigoActividadEmisor>');
    expect(xml).not.toBe(u.xml);
    const st = await verdict(request(u.doc, sign(xml)));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([-1]);
    expect(st.mensaje?.errores).toHaveLength(1);
    expect(st.mensaje?.detalleMensaje).toContain('CodigoActividadEmisor');
  });

  it('the emisor in the POST must be the XML emisor', async () => {
    const r = issue(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9008));
    const req = request(r.doc, r.xml);
    req.emisor = { tipoIdentificacion: '02', numeroIdentificacion: '3101987654' };
    const st = await verdict(req);
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toContain(CODIGOS.DATOS_ENVIO);
  });

  it('a MensajeReceptor signed by the receiver is accepted under clave-consecutivoReceptor; signed by someone else, rejected', async () => {
    const fe = issue(NAME, (b) => ((b as { numeroReferencia: number }).numeroReferencia = 9009));
    expect((await verdict(request(fe.doc, fe.xml))).estado).toBe('aceptado');
    const buyer = loadP12(createTestP12({ id: '3101987654', type: '02', pin: '1234' }), '1234', new Date());
    const mr = (consecutivo: string) =>
      buildMensajeReceptorXml({
        clave: fe.doc.clave,
        numeroCedulaEmisor: '3101123456',
        fechaEmisionDoc: '2026-03-03T08:00:00-06:00',
        mensaje: 1,
        montoTotalImpuesto: fe.totals.resumen.totalImpuesto,
        totalFactura: fe.totals.resumen.totalComprobante,
        numeroCedulaReceptor: '3101987654',
        numeroConsecutivoReceptor: consecutivo,
      });
    const post = (xml: string, consecutivo: string): SubmitRequest => ({
      clave: fe.doc.clave,
      fecha: '2026-03-03T08:00:00-06:00',
      emisor: { tipoIdentificacion: '02', numeroIdentificacion: '3101123456' },
      receptor: { tipoIdentificacion: '02', numeroIdentificacion: '3101987654' },
      consecutivoReceptor: consecutivo,
      comprobanteXml: xml,
    });
    const ok = post(signCanonical(mr('00100001050000000001'), buyer, { signingTime: new Date(), newId }), '00100001050000000001');
    const sent = await rc.submit(ok);
    expect(sent.statusKey).toBe(`${fe.doc.clave}-00100001050000000001`);
    await emu.state.whenIdle();
    const st = await rc.getStatus(sent.statusKey);
    expect(st.mensaje?.errores, st.mensaje?.detalleMensaje).toEqual([]);
    expect(st.estado).toBe('aceptado');

    const forged = post(signCanonical(mr('00100001050000000002'), t.creds, { signingTime: new Date(), newId }), '00100001050000000002');
    const sent2 = await rc.submit(forged);
    await emu.state.whenIdle();
    const st2 = await rc.getStatus(sent2.statusKey);
    expect(st2.estado).toBe('rechazado');
    expect(codes(st2)).toEqual([CODIGOS.FIRMANTE]);
    expect(CODIGOS.FIRMANTE).toBe(-60);
  });

  it('an accepted first-time issuer becomes a known taxpayer (/fe/ae)', () => {
    expect(emu.state.registry.getTaxpayer('3101123456')?.nombre).toBe('SOFTWARE TICO SOCIEDAD ANONIMA');
  });
});

describe('the kinds of issue 15 (ND, FEC, FEE, REP): one defect each, rejected with its reason', () => {
  const num = (n: number) => (b: Record<string, unknown>) => ((b as { numeroReferencia: number }).numeroReferencia = n);
  const without = (xml: string, element: string) => xml.replace(new RegExp(`<${element}>[\\s\\S]*?</${element}>`, 'g'), '');

  it('ND without InformacionReferencia → the schema (-1) names it', async () => {
    const u = unsigned('14-nd-ajuste-servicios.json', num(9101));
    const xml = without(u.xml, 'InformacionReferencia');
    expect(xml).not.toBe(u.xml);
    const st = await verdict(request(u.doc, sign(xml)));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([-1]);
    expect(st.mensaje?.detalleMensaje).toContain('InformacionReferencia');
  });

  it('ND TotalComprobante off by 1 → a sum of ResumenFactura (the emulator\'s own code)', async () => {
    const u = unsigned('16-nd-bienes-servicios.json', num(9102));
    const xml = u.xml.replace('<TotalComprobante>68365.00000</TotalComprobante>', '<TotalComprobante>68366.00000</TotalComprobante>');
    expect(xml).not.toBe(u.xml);
    const st = await verdict(request(u.doc, sign(xml)));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([CODIGOS.TOTALES]);
    expect(st.mensaje?.errores[0]?.mensaje).toContain('TotalComprobante');
  });

  it('REP without InformacionReferencia → the schema (-1) names it', async () => {
    const u = unsigned('23-rep-credito-90-dias.json', num(9103));
    const st = await verdict(request(u.doc, sign(without(u.xml, 'InformacionReferencia'))));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([-1]);
    expect(st.mensaje?.detalleMensaje).toContain('InformacionReferencia');
  });

  it('REP whose TotalComprobante adds the tax (it is TotalVenta in a recibo) → rejected naming TotalComprobante', async () => {
    const u = unsigned('23-rep-credito-90-dias.json', num(9104));
    const xml = u.xml.replace('<TotalComprobante>250000.00000</TotalComprobante>', '<TotalComprobante>282500.00000</TotalComprobante>');
    expect(xml).not.toBe(u.xml);
    const st = await verdict(request(u.doc, sign(xml)));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([CODIGOS.TOTALES]);
    expect(st.mensaje?.errores[0]?.mensaje).toContain('TotalComprobante');
  });

  it('REP line tax off by 1 → the product check names the line', async () => {
    const u = unsigned('25-rep-tarifa-reducida.json', num(9105));
    const xml = u.xml.replace('<Monto>4000.00000</Monto>', '<Monto>4001.00000</Monto>').replace(/<ImpuestoNeto>4000.00000</, '<ImpuestoNeto>4001.00000<')
      .replace('<MontoTotalLinea>104000.00000<', '<MontoTotalLinea>104001.00000<').replace(/<TotalMontoImpuesto>4000.00000</, '<TotalMontoImpuesto>4001.00000<')
      .replace('<TotalImpuesto>4000.00000<', '<TotalImpuesto>4001.00000<');
    const st = await verdict(request(u.doc, sign(xml)));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([CODIGOS.TOTALES]);
    expect(st.mensaje?.errores.map((e) => e.mensaje).join(' ')).toContain('LineaDetalle 1 Impuesto 01 Monto');
  });

  it('FEE to a Costa Rican receptor (02) → wrong receptor type (the emulator\'s own code)', async () => {
    const u = unsigned('20-fee-cafe-usd.json', num(9106));
    const xml = u.xml.replace('<Tipo>05</Tipo><Numero>US770123456</Numero>', '<Tipo>02</Tipo><Numero>3101987654</Numero>');
    expect(xml).not.toBe(u.xml);
    const req = request(u.doc, sign(xml));
    req.receptor = { tipoIdentificacion: '02', numeroIdentificacion: '3101987654' };
    const st = await verdict(req);
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([CODIGOS.TIPO_IDENTIFICACION]);
    expect(st.mensaje?.errores[0]?.mensaje).toContain('Extranjero No Domiciliado (tipo de identificación 05)');
  });

  it('FEC from a no contribuyente (06) without CondicionVenta 13 → wrong emisor type', async () => {
    const u = unsigned('19-fec-bienes-usados.json', num(9107));
    const xml = u.xml.replace('<CondicionVenta>13</CondicionVenta>', '<CondicionVenta>01</CondicionVenta>');
    expect(xml).not.toBe(u.xml);
    const st = await verdict(request(u.doc, sign(xml)));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([CODIGOS.TIPO_IDENTIFICACION]);
    expect(st.mensaje?.errores[0]?.mensaje).toContain('condición de venta 13');
  });

  it('FEC signed by the seller rather than the buyer who issues it → firmante ≠ emisor (-60)', async () => {
    const seller = loadP12(createTestP12({ id: '301230456', type: '01', pin: '1234' }), '1234', new Date());
    const r = issue('17-fec-agricultor.json', num(9108), seller);
    const st = await verdict(request(r.doc, r.xml));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([-60]);
  });

  it('REP 11 paying an FE this emulator accepted with CondicionVenta 01 → rejected; paying one with CondicionVenta 10 → aceptado', async () => {
    const contado = issue(NAME_FE, num(9110));
    const credito = issue(NAME_FE, (b) => Object.assign(b, { numeroReferencia: 9111, condicionVenta: '10', plazoCredito: 60 }));
    expect((await verdict(request(contado.doc, contado.xml))).estado).toBe('aceptado');
    expect((await verdict(request(credito.doc, credito.xml))).estado).toBe('aceptado');
    const pays = (fe: typeof contado, n: number) =>
      issue('23-rep-credito-90-dias.json', (b) => {
        num(n)(b);
        const ref = (b as { informacionReferencia: { numero: string; fechaEmision: string }[] }).informacionReferencia[0]!;
        ref.numero = fe.doc.clave;
        ref.fechaEmision = fe.doc.fechaEmision;
      });
    const wrong = pays(contado, 9112);
    const st = await verdict(request(wrong.doc, wrong.xml));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([CODIGOS.REFERENCIA]);
    expect(st.mensaje?.errores[0]?.mensaje).toBe(
      `El Recibo Electrónico de Pago con condición de venta 11 debe referirse a un comprobante con condición de venta 10; el comprobante ${contado.doc.clave} tiene condición de venta 01.`,
    );
    const right = pays(credito, 9113);
    const ok = await verdict(request(right.doc, right.xml));
    expect(ok.mensaje?.errores, ok.mensaje?.detalleMensaje).toEqual([]);
    expect(ok.estado).toBe('aceptado');
  });

  it('an ND adjusting a comprobante this emulator rejected → rejected (a clave it never received is not judged)', async () => {
    const bad = unsigned(NAME_FE, num(9114));
    const badXml = sign(bad.xml.replace('<TotalComprobante>918125.00000</TotalComprobante>', '<TotalComprobante>918126.00000</TotalComprobante>'));
    expect((await verdict(request(bad.doc, badXml))).estado).toBe('rechazado');
    const nd = issue('14-nd-ajuste-servicios.json', (b) => {
      num(9115)(b);
      (b as { informacionReferencia: { numero: string }[] }).informacionReferencia[0]!.numero = bad.doc.clave;
    });
    const st = await verdict(request(nd.doc, nd.xml));
    expect(st.estado).toBe('rechazado');
    expect(codes(st)).toEqual([CODIGOS.REFERENCIA]);
    expect(st.mensaje?.errores[0]?.mensaje).toBe(`El comprobante de referencia ${bad.doc.clave} fue rechazado por el Ministerio de Hacienda.`);
  });
});

/**
 * Alters xades:SignedProperties and signs again correctly (new SignedProperties digest over its exclusive
 * C14N in the document, new SignatureValue over the canonical SignedInfo), so that only the altered
 * property is wrong. Canonical forms come from xml-crypto on an xmldom tree, whatever the signer wrote.
 */
function resign(xml: string, alter: (signedProperties: string) => string): string {
  const spMatch = /<xades:SignedProperties[\s\S]*?<\/xades:SignedProperties>/.exec(xml);
  if (!spMatch) throw new Error('no SignedProperties');
  const sp = alter(spMatch[0]);
  if (sp === spMatch[0]) throw new Error('SignedProperties unchanged');
  let out = xml.replace(spMatch[0], () => sp);
  const digest = createHash('sha256').update(canonical(out, NS_XADES, 'SignedProperties'), 'utf8').digest('base64');
  out = out.replace(
    /(<ds:Reference[^>]*Type="http:\/\/uri\.etsi\.org\/01903#SignedProperties"[^>]*>[\s\S]*?<ds:DigestValue[^>]*>)([^<]*)(<\/ds:DigestValue>)/,
    (_m, a: string, _b: string, c: string) => a + digest + c,
  );
  const value = rsaSign('sha256', Buffer.from(canonical(out, NS_DS, 'SignedInfo'), 'utf8'), t.creds.privateKey).toString('base64');
  return out.replace(/(<ds:SignatureValue[^>]*>)([^<]*)(<\/ds:SignatureValue>)/, (_m, a: string, _b: string, c: string) => a + value + c);
}

function canonical(xml: string, ns: string, localName: string): string {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const el = doc.getElementsByTagNameNS(ns, localName)[0];
  if (!el) throw new Error(`no ${localName}`);
  return new ExclusiveCanonicalization().process(el as unknown as Element, {});
}
