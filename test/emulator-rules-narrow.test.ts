// The emulator rejects only where Hacienda's evidence says it does (NOTES §6.3, §7): -487 only with a tax amount;
// -505 (and -45) for CodigoTarifaIVA 10; a signature that is not XAdES-EPES answered alone, before the schema; and
// production's answers in the real layout (DetalleMensaje `.`, then the sandbox's list). The documents go through the
// real reception client, to the sandbox paths of the emulator and to its production paths.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import type { Comprobante } from '../src/core/model.js';
import { parseDetalleMensaje, ReceptionClient, resolveEndpoints, type ReceptionStatus, type SubmitRequest } from '../src/hacienda/client/index.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { detalleMensaje } from '../src/emulator/mensaje.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { crDay, crIso, FAST_RETRY, sandboxEndpoints } from './helpers/hacienda.js';
import { templateDocument, xmlsecSign, type Shape } from './helpers/xmlsec-sign.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const body = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Record<string, any>;
const OPENING = 'Este comprobante fue recibido en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios.';
const FE = '01-fe-servicios-13';
const TEXT_487 = 'El documento posee detalle de Impuesto pero carece del campo Total Desglose Impuestos';
const TEXT_45 = 'En la línea (1) el campo de Tarifa es obligatorio para el Codigo de Impuesto 01';
const TEXT_505 = "En la línea (1), para el código de tarifa '10' la tarifa debe ser 0";
const TEXT_37 =
  "Estimado obligado tributario los datos suministrados en provincia, cantón y distrito del 'emisor' no concuerdan con la información registrada en la Dirección General de Tributación, favor proceder actualizar sus datos.";
const NO_XADES = 'La firma del documento no es XAdES, se obtuvo [ERROR]';



let emu: RunningEmulator;
let sandbox: ReceptionClient;
let production: ReceptionClient;
/** The test issuer's stag user on the production paths: what fecr's env local does for an `ambiente 2` issuer. */
let stagOnProduction: ReceptionClient;
/** A production user (NOTES §4.2: `…@comprobanteselectronicos.go.cr`, no `stag`). */
const PRODUCTION_USER = 'cpj-3-101-123456@comprobanteselectronicos.go.cr';
let t: TestIssuer;
let n = 0;
const newId = () => randomBytes(8).toString('hex');
const NOW = crDay(6);

beforeAll(async () => {
  t = makeTestIssuer();
  emu = await startEmulator({ processingDelayMs: 5, now: () => NOW.getTime() });
  const credentials = { username: t.issuer.usuarioHacienda, password: 'secreto' };
  sandbox = new ReceptionClient({ endpoints: sandboxEndpoints(emu.url), credentials, retry: FAST_RETRY });
  // env local: the emulator's production paths (/recepcion/v1, realm rut), with a production user (a stag user's
  // documents are the sandbox's on either path: issue 36, emulator/mensaje.ts answerEnvironment).
  production = new ReceptionClient({ endpoints: resolveEndpoints('local', { baseUrl: emu.url }), credentials: { ...credentials, username: PRODUCTION_USER }, retry: FAST_RETRY });
  stagOnProduction = new ReceptionClient({ endpoints: resolveEndpoints('local', { baseUrl: emu.url }), credentials, retry: FAST_RETRY });
});
afterAll(async () => {
  await sandbox.close();
  await production.close();
  await stagOnProduction.close();
  await emu.close();
});

interface Built {
  doc: Comprobante;
  unsigned: string;
  xml: string;
}

/** A fixture dated today, its canonical XML altered, then signed XAdES-EPES with the issuer's key. */
function build(name: string, opts: { body?: (b: Record<string, any>) => void; xml?: (x: string) => string } = {}): Built {
  const b = body(name);
  b.numeroReferencia = 7000 + n++;
  b.fechaEmision = crIso(crDay(5));
  opts.body?.(b);
  const p = parseDocument(b, t.issuer, { securityCode: String(20_000_000 + n) });
  if (!p.ok) throw new Error(JSON.stringify(p.findings));
  const built = buildComprobanteXml(p.doc, p.totals);
  const unsigned = opts.xml ? opts.xml(built) : built;
  if (opts.xml) expect(unsigned, 'the alteration changed nothing').not.toBe(built);
  return { doc: p.doc, unsigned, xml: signCanonical(unsigned, t.creds, { signingTime: new Date(), newId }) };
}

async function verdict(d: Pick<Built, 'doc' | 'xml'>, rc = sandbox): Promise<ReceptionStatus> {
  const req: SubmitRequest = {
    clave: d.doc.clave,
    fecha: d.doc.fechaEmision,
    emisor: { tipoIdentificacion: d.doc.emisor.identificacion.tipo, numeroIdentificacion: d.doc.emisor.identificacion.numero },
    comprobanteXml: d.xml,
  };
  const r = d.doc.receptor?.identificacion;
  if (r && r.numero.length <= 12) req.receptor = { tipoIdentificacion: r.tipo, numeroIdentificacion: r.numero };
  expect((await rc.submit(req)).status).toBe('received');
  await emu.state.whenIdle();
  const st = await rc.getStatus(d.doc.clave);
  expect(st.mensaje).toBeDefined();
  // fecr's own reader reads every answer back.
  expect(parseDetalleMensaje(st.mensaje!.detalleMensaje ?? '', { aceptado: st.mensaje!.mensaje === 1 })).toEqual(st.mensaje!.errores);
  return st;
}

const coded = (st: ReceptionStatus) => st.mensaje!.errores.map((e) => [e.codigo, e.mensaje]);
const sinDesglose = (x: string) => x.replace(/<TotalDesgloseImpuesto>[\s\S]*?<\/TotalDesgloseImpuesto>/g, '');

/** 04-fe-exento-no-sujeto with only its exempt lines (CodigoTarifaIVA 10, Tarifa 0, Monto 0); fecr computes the totals. */
function exento(b: Record<string, any>): void {
  b.detalleServicio = b.detalleServicio.filter((l: any) => l.impuesto[0].codigoTarifa === '10').map((l: any, i: number) => ({ ...l, numeroLinea: i + 1 }));
  b.resumenFactura = { codigoTipoMoneda: b.resumenFactura.codigoTipoMoneda, mediosPago: b.resumenFactura.mediosPago };
}

describe('-487 only when there is a tax amount (NOTES §6.3; ANEXOS p.53)', () => {
  it('fecr writes TotalDesgloseImpuesto for an all-exempt FE too (01/10, 0): aceptado', async () => {
    const d = build('04-fe-exento-no-sujeto', { body: exento });
    expect(d.unsigned).toMatch(/<TotalDesgloseImpuesto><Codigo>01<\/Codigo><CodigoTarifaIVA>10<\/CodigoTarifaIVA><TotalMontoImpuesto>0\.00000<\/TotalMontoImpuesto><\/TotalDesgloseImpuesto>/);
    const st = await verdict(d);
    expect(st.mensaje!.errores).toEqual([]);
    expect(st.estado).toBe('aceptado');
  });

  it('an FE whose lines are all exempt (CodigoTarifaIVA 10, Tarifa 0, Monto 0), without TotalDesgloseImpuesto: aceptado', async () => {
    const d = build('04-fe-exento-no-sujeto', { body: exento, xml: sinDesglose });
    expect(d.unsigned).toContain('<CodigoTarifaIVA>10</CodigoTarifaIVA><Tarifa>0</Tarifa><Monto>0.00000</Monto>');
    const st = await verdict(d);
    expect(st.mensaje!.errores).toEqual([]);
    expect(st.estado).toBe('aceptado');
    expect(st.mensaje!.detalleMensaje).toBe(OPENING);
  });

  it('an FE with a 13 % line, without TotalDesgloseImpuesto: rechazado, -487', async () => {
    const st = await verdict(build(FE, { xml: sinDesglose }));
    expect(st.estado).toBe('rechazado');
    expect(coded(st)).toEqual([[-487, TEXT_487]]);
  });

  it('exempt lines beside one 13 % line, without TotalDesgloseImpuesto: rechazado, -487', async () => {
    const st = await verdict(build('04-fe-exento-no-sujeto', { xml: sinDesglose }));
    expect(st.estado).toBe('rechazado');
    expect(coded(st)).toEqual([[-487, TEXT_487]]);
  });
});

describe('-505 and -45 for CodigoTarifaIVA 10 (NOTES §6.3)', () => {
  it('CodigoTarifaIVA 10 with Tarifa 13: -505', async () => {
    const st = await verdict(build('04-fe-exento-no-sujeto', { body: exento, xml: (x) => x.replace('<Tarifa>0</Tarifa>', '<Tarifa>13</Tarifa>') }));
    expect(st.estado).toBe('rechazado');
    expect(coded(st)).toEqual([[-505, TEXT_505]]);
  });

  it('CodigoTarifaIVA 10 without Tarifa: -45, then -505', async () => {
    const st = await verdict(build('04-fe-exento-no-sujeto', { body: exento, xml: (x) => x.replace('<Tarifa>0</Tarifa>', '') }));
    expect(st.estado).toBe('rechazado');
    expect(coded(st)).toEqual([
      [-45, TEXT_45],
      [-505, TEXT_505],
    ]);
  });

  it('CodigoTarifaIVA 10 with Tarifa 0 and Monto 0: neither', async () => {
    const st = await verdict(build('04-fe-exento-no-sujeto', { body: exento }));
    expect(st.estado).toBe('aceptado');
  });

  it('CodigoTarifaIVA 08 without Tarifa: -45 alone', async () => {
    const st = await verdict(build(FE, { xml: (x) => x.replace('<Tarifa>13</Tarifa>', '') }));
    expect(coded(st)).toContainEqual([-45, TEXT_45]);
    expect(coded(st).map(([c]) => c)).not.toContain(-505);
  });
});

describe("the signature's form first, alone, before the schema", () => {
  const breakSchema = (x: string) => x.replace('<CodigoActividadEmisor>6201.0</CodigoActividadEmisor>', '<CodigoActividadEmisor>62010</CodigoActividadEmisor>');
  const shape = (policy: Shape['policy']): Shape => ({
    c14n: 'exc',
    docTransform: 'xpath',
    keyInfoReference: false,
    certDigest: 'sha256',
    signingTime: crIso(crDay(5)),
    policy,
  });
  /** Signed outside fecr by xmlsec1: a plain XMLDSig signature, no SignedProperties reference, no QualifyingProperties. */
  const plainXmldsig = (unsigned: string) =>
    xmlsecSign(
      templateDocument(unsigned, shape('none'), t.creds)
        .replace(/<ds:Reference Type="http:\/\/uri\.etsi\.org\/01903#SignedProperties"[\s\S]*?<\/ds:Reference>/, '')
        .replace(/<ds:Object>[\s\S]*<\/ds:Object>/, ''),
      t.creds,
    );

  it('a plain XMLDSig signature on a document that breaks the schema: the sentence alone, no -1', async () => {
    const d = build(FE, { xml: breakSchema });
    const xml = plainXmldsig(d.unsigned);
    expect(xml).not.toContain('QualifyingProperties');
    expect(xml).toContain('<ds:SignatureValue');
    const st = await verdict({ doc: d.doc, xml });
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje!.errores).toEqual([{ codigo: null, mensaje: NO_XADES, fila: null, columna: null, aviso: false }]);
    expect(st.mensaje!.detalleMensaje).toBe(`${OPENING}\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\n${NO_XADES}\r\n\r\n]`);
    expect(st.mensaje).toMatchObject({ mensaje: 3, nombreEmisor: 'DESCONOCIDO', totalFactura: '0' });
  });

  it('a plain XMLDSig signature on a valid document: the sentence alone', async () => {
    const d = build(FE);
    const st = await verdict({ doc: d.doc, xml: plainXmldsig(d.unsigned) });
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje!.errores).toEqual([{ codigo: null, mensaje: NO_XADES, fila: null, columna: null, aviso: false }]);
  });

  it('a XAdES-BES signature (no policy) on a document that breaks the schema: its sentence alone (the same step)', async () => {
    const d = build(FE, { xml: breakSchema });
    const st = await verdict({ doc: d.doc, xml: xmlsecSign(templateDocument(d.unsigned, shape('none'), t.creds), t.creds) });
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje!.errores).toEqual([{ codigo: null, mensaje: 'La firma del documento no tiene el Policy Id', fila: null, columna: null, aviso: false }]);
  });

  it('a XAdES-EPES signature that does not verify, on a document that breaks the schema: the schema\'s -1 alone', async () => {
    const d = build(FE);
    const st = await verdict({ doc: d.doc, xml: breakSchema(d.xml) });
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje!.errores).toHaveLength(1);
    expect(st.mensaje!.errores[0]).toMatchObject({ codigo: -1 });
  });
});

describe('a sandbox user on the production paths (issue 36): answered and listed as the sandbox', () => {
  const SANDBOX_OPENING = 'Este comprobante fue recibido en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios.';
  const listed = async (clave: string) =>
    ((await (await fetch(`${emu.url}/_emulator/receptions`)).json()) as { receptions: { clave: string; environment: string; receivedOn: string }[] }).receptions.find((r) => r.clave === clave);

  it('accepted: the sandbox\'s opening sentence (NOTES §6.3), listed under environment sandbox, received on production', async () => {
    const d = build(FE);
    const st = await verdict(d, stagOnProduction);
    expect(st.estado).toBe('aceptado');
    expect(st.mensaje).toMatchObject({ mensaje: 1, estadoMensaje: 'Aceptado', detalleMensaje: SANDBOX_OPENING });
    expect(await listed(d.doc.clave)).toMatchObject({ environment: 'sandbox', receivedOn: 'production' });
  });

  it('rejected: the same opening, then the list; a production user\'s document stays production\'s', async () => {
    const d = build(FE, { xml: sinDesglose });
    const st = await verdict(d, stagOnProduction);
    expect(st.estado).toBe('rechazado');
    expect((st.mensaje!.detalleMensaje ?? '').split('\n').at(0)).toBe(SANDBOX_OPENING);
    expect(st.mensaje!.detalleMensaje ?? '').toContain('El comprobante electrónico tiene los siguientes errores:');
    const p = build(FE);
    await verdict(p, production);
    expect(await listed(p.doc.clave)).toMatchObject({ environment: 'production', receivedOn: 'production' });
  });
});

describe('production answers in the real layout (MensajeHacienda v4.4 of 2026)', () => {
  it('accepted without warnings: DetalleMensaje is `.`, EstadoMensaje Aceptado', async () => {
    const st = await verdict(build(FE), production);
    expect(st.estado).toBe('aceptado');
    expect(st.mensaje).toMatchObject({ mensaje: 1, estadoMensaje: 'Aceptado', detalleMensaje: '.' });
    expect(st.mensaje!.errores).toEqual([]);
    expect(st.respuestaXml!.toString('utf8')).toContain('<DetalleMensaje>.</DetalleMensaje>');
  });

  it('accepted with a -37 warning: `.`, an empty line, then the list', async () => {
    const id = '3101123456';
    const before = emu.state.registry.getTaxpayer(id)!;
    emu.state.registry.putTaxpayer(id, { ...before, ubicacion: { provincia: '1', canton: '01', distrito: '01' } });
    try {
      const st = await verdict(build(FE), production);
      expect(st.estado).toBe('aceptado');
      expect(st.mensaje).toMatchObject({ mensaje: 1, estadoMensaje: 'Aceptado' });
      expect(coded(st)).toEqual([[-37, TEXT_37]]);
      // The reader trims the element's text: the final LF is in the XML.
      expect(st.mensaje!.detalleMensaje).toBe(`.\n\ncodigo, mensaje, fila, columna\r\n-37, ""${TEXT_37}"", 0, 0\r`);
      expect(st.respuestaXml!.toString('utf8')).toContain(`<DetalleMensaje>.\n\ncodigo, mensaje, fila, columna&#xD;\n-37, ""`);
    } finally {
      emu.state.registry.putTaxpayer(id, before);
    }
  });

  it('rejected (extrapolated): `.`, then the sandbox\'s rejected layout; EstadoMensaje Rechazado', async () => {
    const st = await verdict(build(FE, { xml: sinDesglose }), production);
    expect(st.estado).toBe('rechazado');
    expect(st.mensaje).toMatchObject({ mensaje: 3, estadoMensaje: 'Rechazado' });
    expect(coded(st)).toEqual([[-487, TEXT_487]]);
    expect(st.mensaje!.detalleMensaje).toBe(`.\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\n-487, ""${TEXT_487}"", 0, 0\r\n\r\n]`);
  });

  it('the same document in the sandbox keeps its opening sentence', async () => {
    const st = await verdict(build(FE, { xml: sinDesglose }));
    expect(st.mensaje!.detalleMensaje).toBe(`${OPENING}\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\n-487, ""${TEXT_487}"", 0, 0\r\n\r\n]`);
  });
});

describe('detalleMensaje and parseDetalleMensaje, without the emulator', () => {
  const aviso = { codigo: -37, mensaje: TEXT_37, fila: 0, columna: 0, aviso: true };
  const rechazo = { codigo: -492, mensaje: "El Tipo Medio Pago OTRO es obligatorio cuando se utilice el Tipo de Medio Pago '99'", fila: 0, columna: 0 };
  const firma = { codigo: 0, mensaje: NO_XADES, fila: 0, columna: 0, sinCodigo: true };
  const read = (e: { codigo: number; mensaje: string; sinCodigo?: boolean; aviso?: boolean }) => ({ codigo: e.sinCodigo ? null : e.codigo, mensaje: e.mensaje, fila: null, columna: null, aviso: e.aviso === true });

  it('production: `.` alone, `.` with the warnings list, `.` with the rejected list; each read back', () => {
    expect(detalleMensaje({ environment: 'production', accepted: true, errors: [] })).toBe('.');
    expect(parseDetalleMensaje('.')).toEqual([]);
    const warned = detalleMensaje({ environment: 'production', accepted: true, errors: [aviso] });
    expect(warned).toBe(`.\n\ncodigo, mensaje, fila, columna\r\n-37, ""${TEXT_37}"", 0, 0\r\n`);
    expect(parseDetalleMensaje(warned, { aceptado: true })).toEqual([read(aviso)]);
    const rejected = detalleMensaje({ environment: 'production', accepted: false, errors: [rechazo, aviso, firma] });
    expect(rejected).toBe(
      `.\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\n` +
        `-492, ""${rechazo.mensaje}"", 0, 0\r\n-37, ""${TEXT_37}"", 0, 0\r\n${NO_XADES}\r\n\r\n]`,
    );
    expect(parseDetalleMensaje(rejected)).toEqual([read(rechazo), read(aviso), read(firma)]);
  });

  it('the sandbox: unchanged, its opening sentence in the same layouts', () => {
    expect(detalleMensaje({ environment: 'sandbox', accepted: true, errors: [] })).toBe(OPENING);
    expect(detalleMensaje({ environment: 'sandbox', accepted: true, errors: [aviso] })).toBe(`${OPENING}\n\ncodigo, mensaje, fila, columna\r\n-37, ""${TEXT_37}"", 0, 0\r\n`);
    expect(detalleMensaje({ environment: 'sandbox', accepted: false, errors: [rechazo] })).toBe(
      `${OPENING}\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\n-492, ""${rechazo.mensaje}"", 0, 0\r\n\r\n]`,
    );
  });

  it('a real production answer with a warning, as its DetalleMensaje reads (facts of xavirubio27/tributario-ai-cr, written here)', () => {
    const real = '.\n\ncodigo, mensaje, fila, columna\r\n-16, ""El archivo XML fue enviado tarde"", 0, 0\r\n';
    expect(parseDetalleMensaje(real, { aceptado: true })).toEqual([{ codigo: -16, mensaje: 'El archivo XML fue enviado tarde', fila: null, columna: null, aviso: true }]);
  });
});
