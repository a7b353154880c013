// The emulator answers as the real sandbox does (issue 19, NOTES §6.3): for every code of the table, a document
// that triggers it gets Hacienda's code and text, as a warning (the document stands) or a rejection; signature
// failures are Hacienda's plain sentences; the DetalleMensaje layout is Hacienda's; fecr's own reader reads every
// answer back. The documents go through the real reception client to the sandbox paths of the emulator.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { crParts } from '../src/core/dates.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { parseMensajeHaciendaXml } from '../src/core/xml/parse-mensaje.js';
import type { Comprobante } from '../src/core/model.js';
import { parseDetalleMensaje, ReceptionClient, type ReceptionStatus, type SubmitRequest } from '../src/hacienda/client/index.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { crDay, crIso, FAST_RETRY, sandboxEndpoints } from './helpers/hacienda.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const body = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Record<string, any>;
const OPENING = 'Este comprobante fue recibido en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios.';

/** Today 06:00 in Costa Rica, as an instant: the emulator's clock, so that "later today" and "tomorrow" are fixed. */


let emu: RunningEmulator;
let rc: ReceptionClient;
let t: TestIssuer;
let n = 0;
const newId = () => randomBytes(8).toString('hex');
const NOW = crDay(6);

beforeAll(async () => {
  t = makeTestIssuer();
  emu = await startEmulator({ processingDelayMs: 5, now: () => NOW.getTime() });
  rc = new ReceptionClient({ endpoints: sandboxEndpoints(emu.url), credentials: { username: t.issuer.usuarioHacienda, password: 'secreto' }, retry: FAST_RETRY });
});
afterAll(async () => {
  await rc.close();
  await emu.close();
});

interface Built {
  doc: Comprobante;
  xml: string;
}

/** A fixture dated today (before the emulator's clock), unsigned, altered, then signed with the issuer's key. */
function build(
  name: string,
  opts: { body?: (b: Record<string, any>) => void; xml?: (x: string) => string; creds?: TestIssuer['creds']; fecha?: string; securityCode?: string } = {},
): Built {
  const b = body(name);
  b.numeroReferencia = 5000 + n++;
  b.fechaEmision = opts.fecha ?? crIso(crDay(5));
  opts.body?.(b);
  const p = parseDocument(b, t.issuer, { securityCode: opts.securityCode ?? String(10_000_000 + n) });
  if (!p.ok) throw new Error(JSON.stringify(p.findings));
  const unsigned = buildComprobanteXml(p.doc, p.totals);
  const altered = opts.xml ? opts.xml(unsigned) : unsigned;
  if (opts.xml) expect(altered, 'the alteration changed nothing').not.toBe(unsigned);
  return { doc: p.doc, xml: signCanonical(altered, opts.creds ?? t.creds, { signingTime: new Date(), newId }) };
}

async function verdict(d: Built, clave = d.doc.clave): Promise<ReceptionStatus> {
  const req: SubmitRequest = {
    clave,
    fecha: d.doc.fechaEmision,
    emisor: { tipoIdentificacion: d.doc.emisor.identificacion.tipo, numeroIdentificacion: d.doc.emisor.identificacion.numero },
    comprobanteXml: d.xml,
  };
  const r = d.doc.receptor?.identificacion;
  if (r && r.numero.length <= 12) req.receptor = { tipoIdentificacion: r.tipo, numeroIdentificacion: r.numero };
  expect((await rc.submit(req)).status).toBe('received');
  await emu.state.whenIdle();
  const st = await rc.getStatus(clave);
  // fecr's own reader reads every answer back: the MensajeHacienda and its list.
  expect(st.mensaje).toBeDefined();
  expect(parseDetalleMensaje(st.mensaje!.detalleMensaje ?? '', { aceptado: st.mensaje!.mensaje === 1 })).toEqual(st.mensaje!.errores);
  return st;
}

const coded = (st: ReceptionStatus) => st.mensaje!.errores.map((e) => [e.codigo, e.mensaje]);

describe('the table of NOTES §6.3, code by code', () => {
  const FE = '01-fe-servicios-13';
  const DESC = '02-fe-bienes-servicios-descuentos';

  it('a correct document: aceptado, the sandbox opening line alone', async () => {
    const st = await verdict(build(FE));
    expect(st.estado).toBe('aceptado');
    expect(st.mensaje!.detalleMensaje).toBe(OPENING);
  });

  it('-1: only the first schema error, with its line; an unread document is DESCONOCIDO with zero amounts', async () => {
    const st = await verdict(
      build(FE, { xml: (x) => x.replace('<CodigoActividadEmisor>6201.0</CodigoActividadEmisor>', '<CodigoActividadEmisor>62010</CodigoActividadEmisor>').replace('<Detalle>', '<Detalle></Detalle><Detalle>') }),
    );
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje!.errores).toHaveLength(1);
    expect(st.mensaje!.errores[0]).toMatchObject({ codigo: -1 });
    expect(st.mensaje!.errores[0]!.mensaje).toContain('CodigoActividadEmisor');
    expect(st.mensaje!.errores[0]!.fila).toBeGreaterThan(0);
    expect(st.mensaje).toMatchObject({ nombreEmisor: 'DESCONOCIDO', numeroCedulaEmisor: '3101123456', totalFactura: '0', montoTotalImpuesto: '0' });
    expect(st.mensaje!.nombreReceptor).toBeUndefined();
  });

  it('-8, -23, -405: the clave against the document', async () => {
    const d = build(FE);
    const c = d.doc.clave;
    const otherId = c.slice(0, 9) + '003101999999' + c.slice(21);
    expect(coded(await verdict({ ...d, xml: resignWith(d, c, otherId) }, otherId))).toEqual([[-8, 'El número de identificación de la clave numérica no coincide con el número de identificación del emisor.']]);
    const d2 = build(FE);
    const c2 = d2.doc.clave;
    const otherConsecutivo = c2.slice(0, 31) + '9999999999' + c2.slice(41);
    expect(coded(await verdict({ ...d2, xml: resignWith(d2, c2, otherConsecutivo) }, otherConsecutivo))).toEqual([[-23, 'La numeración del consecutivo del comprobante no coincide con el valor de la clave.']]);
    const d3 = build(FE);
    const c3 = d3.doc.clave;
    const otherDate = c3.slice(0, 3) + '010120' + c3.slice(9);
    expect(coded(await verdict({ ...d3, xml: resignWith(d3, c3, otherDate) }, otherDate))).toEqual([[-405, 'La fecha de la clave númerica no concuerda con el campo Fecha Emisión del comprobante']]);
  });

  it('-45 (IVA without Tarifa) and -505 (tarifa code 10 with a rate)', async () => {
    const st = await verdict(build(FE, { xml: (x) => x.replace(/<Tarifa>13(\.0+)?<\/Tarifa>/, '') }));
    expect(st.estado).toBe('rechazado');
    expect(coded(st)).toContainEqual([-45, 'En la línea (1) el campo de Tarifa es obligatorio para el Codigo de Impuesto 01']);
    const st2 = await verdict(build(FE, { xml: (x) => x.replace('<CodigoTarifaIVA>08</CodigoTarifaIVA>', '<CodigoTarifaIVA>10</CodigoTarifaIVA>') }));
    expect(coded(st2)).toContainEqual([-505, "En la línea (1), para el código de tarifa '10' la tarifa debe ser 0"]);
  });

  it('-46, -52, -54: sums compared exactly (0.00001 off is off)', async () => {
    const st = await verdict(build(DESC, { xml: (x) => x.replace('<MontoTotalLinea>96614.94915</MontoTotalLinea>', '<MontoTotalLinea>96614.94916</MontoTotalLinea>') }));
    expect(coded(st)).toEqual([[-46, 'El monto total de la línea (2) no coincide con la suma de los campos denominados subtotal y monto del impuesto.']]);
    const st2 = await verdict(build(DESC, { xml: (x) => x.replace('<TotalDescuentos>74499.99500</TotalDescuentos>', '<TotalDescuentos>74499.99501</TotalDescuentos>') }));
    expect(st2.estado).toBe('rechazado');
    expect(coded(st2)).toContainEqual([-52, 'El monto total de descuentos no coincide con la suma de los descuentos concedidos']);
    const st3 = await verdict(build(DESC, { xml: (x) => x.replace('<TotalImpuesto>178864.99415</TotalImpuesto>', '<TotalImpuesto>178864.99416</TotalImpuesto>') }));
    expect(coded(st3)).toContainEqual([-54, "El monto total de impuestos no coincide con la suma de los campos denominados 'Monto del Impuesto'"]);
  });

  it('-53: a later day is refused; later the same day is a warning and the document stands', async () => {
    const tomorrow = await verdict(build(FE, { fecha: crIso(crDay(8, 1)) }));
    expect(tomorrow.estado).toBe('rechazado');
    expect(coded(tomorrow)).toEqual([[-53, 'La fecha de emisión del comprobante electrónico no puede ser superior al día de hoy.']]);
    const later = await verdict(build(FE, { fecha: crIso(crDay(8)) }));
    expect(later.estado).toBe('aceptado');
    expect(coded(later)).toEqual([[-53, 'La hora indicada en la emisión del archivo XML no coincide con la hora oficial.']]);
    // Accepted with a warning: the list without the "errores" heading, CR LF line ends, doubled quotes.
    // (The reader trims the element's text of its whitespace: the final LF is in the XML.)
    expect(later.mensaje!.detalleMensaje).toBe(`${OPENING}\n\ncodigo, mensaje, fila, columna\r\n-53, ""La hora indicada en la emisión del archivo XML no coincide con la hora oficial."", 0, 0\r`);
    expect(later.respuestaXml!.toString('utf8')).toContain('codigo, mensaje, fila, columna&#xD;\n-53, ""La hora indicada en la emisión del archivo XML no coincide con la hora oficial."", 0, 0&#xD;\n</DetalleMensaje>');
    expect(later.mensaje!.mensaje).toBe(1);
  });

  it('-58 (CondicionVenta 02 without PlazoCredito) and -492 (MedioPago 99 without MedioPagoOtros); the rejection layout', async () => {
    const st = await verdict(build(DESC, { xml: (x) => x.replace('<CondicionVenta>01</CondicionVenta>', '<CondicionVenta>02</CondicionVenta>').replace('<TipoMedioPago>02</TipoMedioPago>', '<TipoMedioPago>99</TipoMedioPago>') }));
    expect(st.estado).toBe('rechazado');
    expect(coded(st)).toEqual([
      [-492, "El Tipo Medio Pago OTRO es obligatorio cuando se utilice el Tipo de Medio Pago '99'"],
      [-58, "El campo denominado 'Plazo del crédito' no posee la estructura establecida para el mismo."],
    ]);
    expect(st.mensaje!.detalleMensaje).toBe(
      `${OPENING}\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\n` +
        `-492, ""El Tipo Medio Pago OTRO es obligatorio cuando se utilice el Tipo de Medio Pago '99'"", 0, 0\r\n` +
        `-58, ""El campo denominado 'Plazo del crédito' no posee la estructura establecida para el mismo."", 0, 0\r\n\r\n]`,
    );
    expect(st.mensaje!.mensaje).toBe(3);
  });

  it('-60: signed by another taxpayer', async () => {
    const other = loadP12(createTestP12({ id: '3101987654', type: '02', pin: '1234' }), '1234', new Date());
    expect(coded(await verdict(build(FE, { creds: other })))).toEqual([[-60, 'El contribuyente que firma la factura electrónica no es el emisor.']]);
  });

  it('-99: a consecutivo used before, with the day and the first clave', async () => {
    const first = build(FE);
    expect((await verdict(first)).estado).toBe('aceptado');
    n--; // the same numeroReferencia again, another security code: same consecutivo, another clave
    const again = build(FE, { securityCode: '87654321' });
    expect(again.doc.numeroConsecutivo).toBe(first.doc.numeroConsecutivo);
    const p = crParts(NOW);
    const two = (v: number) => String(v).padStart(2, '0');
    const desde = `${two(p.day)}-${two(p.month)}-${p.year} ${two(p.hour)}:${two(p.minute)}:${two(p.second)}`;
    expect(coded(await verdict(again))).toEqual([
      [-99, `La numeración consecutiva ${first.doc.numeroConsecutivo} del comprobante que se está utilizando para este archivo XML ya existe en nuestras bases de datos desde el día ${desde} en la clave ${first.doc.clave}`],
    ]);
  });

  it('-400: a CABYS code that is not in the catalogue', async () => {
    const st = await verdict(build(DESC, { xml: (x) => x.replace('<CodigoCABYS>4781400000000</CodigoCABYS>', '<CodigoCABYS>9999999999999</CodigoCABYS>') }));
    expect(st.estado).toBe('rechazado');
    expect(coded(st)).toContainEqual([
      -400,
      "En la línea (2) el código indicado en el campo 'Código de Producto/Servicio' no se encuentra en el Catálogo de Bienes y Servicios CAByS, por favor verifique la codificación utilizada para el producto o servicio facturado. El CAByS se encuentra disponible en el portal web del Banco Central de Costa Rica",
    ]);
  });

  it('-407 (a catalogue activity the issuer has not registered: warning) and -408 (not in the catalogue: rejection)', async () => {
    const st = await verdict(build(FE, { body: (b) => (b.codigoActividad = '6492.0') }));
    expect(st.estado).toBe('aceptado');
    expect(st.mensaje!.errores).toEqual([
      {
        codigo: -407,
        mensaje: 'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico no se encuentra Registrado ante el Ministerio de Hacienda para este contribuyente, favor verificar',
        fila: null,
        columna: null,
        aviso: true,
      },
    ]);
    const st2 = await verdict(build(FE, { body: (b) => (b.codigoActividad = '462000') }));
    expect(st2.estado).toBe('rechazado');
    expect(coded(st2)).toEqual([
      [-408, 'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico, no es un código valido conforme el Catalogo de Actividades Económicas del Registro Único Tributario.'],
    ]);
  });

  it('-37: a location other than the registered one is a warning', async () => {
    const id = '3101123456';
    emu.state.registry.putTaxpayer(id, { ...emu.state.registry.getTaxpayer(id)!, ubicacion: { provincia: '1', canton: '01', distrito: '01' } });
    const st = await verdict(build(FE));
    expect(st.estado).toBe('aceptado');
    expect(coded(st)).toEqual([
      [
        -37,
        "Estimado obligado tributario los datos suministrados en provincia, cantón y distrito del 'emisor' no concuerdan con la información registrada en la Dirección General de Tributación, favor proceder actualizar sus datos.",
      ],
    ]);
    emu.state.registry.putTaxpayer(id, { ...emu.state.registry.getTaxpayer(id)!, ubicacion: { provincia: '1', canton: '01', distrito: '08' } });
  });

  it('-487: tax lines without TotalDesgloseImpuesto', async () => {
    const st = await verdict(build(FE, { xml: (x) => x.replace(/<TotalDesgloseImpuesto>[\s\S]*?<\/TotalDesgloseImpuesto>/g, '') }));
    expect(coded(st)).toEqual([[-487, 'El documento posee detalle de Impuesto pero carece del campo Total Desglose Impuestos']]);
  });
});

describe('signature failures: Hacienda\'s plain sentences, without a code', () => {
  it('an XMLDSig signature without QualifyingProperties: "no es XAdES"', async () => {
    const d = build('01-fe-servicios-13');
    const noXades = d.xml.replace(/<ds:Object>[\s\S]*<\/ds:Object>/, '');
    expect(noXades).not.toBe(d.xml);
    const st = await verdict({ ...d, xml: noXades });
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje!.errores.map((e) => e.codigo)).toEqual(st.mensaje!.errores.map(() => null));
    expect(st.mensaje!.errores.map((e) => e.mensaje)).toContain('La firma del documento no es XAdES, se obtuvo [ERROR]');
    expect(st.mensaje!.detalleMensaje).toContain('\r\nLa firma del documento no es XAdES, se obtuvo [ERROR]\r\n');
  });
});

describe('the MensajeHacienda itself', () => {
  it('is read back by fecr\'s parser, with the registered name and 5-decimal amounts', async () => {
    const d = build('01-fe-servicios-13');
    const st = await verdict(d);
    const xml = st.respuestaXml!.toString('utf8');
    const m = parseMensajeHaciendaXml(xml);
    expect(m.nombreEmisor).toBe('SOFTWARE TICO SOCIEDAD ANONIMA');
    expect(xml).toMatch(/<TotalFactura>\d+\.\d{5}<\/TotalFactura>/);
  });
});

/** The document with another clave in its <Clave>, signed again (the POST carries that clave too). */
function resignWith(d: Built, from: string, to: string): string {
  const unsigned = d.xml
    .replace(/^<\?xml[^>]*\?>\s*/, '')
    .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
    .replace(`<Clave>${from}</Clave>`, `<Clave>${to}</Clave>`);
  return signCanonical(unsigned, t.creds, { signingTime: new Date(), newId });
}
