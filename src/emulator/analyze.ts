/**
 * What the emulator checks when it processes a received comprobante, asynchronously (after the 202):
 *
 *  1. the XML is well formed and is a v4.4 comprobante (or MensajeReceptor) in its namespace;
 *  2. it is valid against its official XSD (schemas/xsd/, via src/core/xsd, batched: see validate.ts);
 *  3. the XAdES-EPES signature is valid: value, every reference digest, v4.4 policy identifier and hash,
 *     certificate valid at signing time (src/core/sign/verify.ts);
 *  4. the signer is the issuer: the certificate subject's serialNumber identifies the Emisor
 *     (the Receptor for a FEC, which the buyer issues; the receptor for a MensajeReceptor);
 *  5. the clave agrees with the XML: same clave, its date is FechaEmision's date in Costa Rica, its
 *     issuer id, consecutivo and situación match, the consecutivo's tipo matches the document kind;
 *     the POST's emisor/receptor match the XML;
 *  6. the lines and totals as Hacienda checks them: sums compared exactly against the document's own figures
 *     (-46 line total, -52 TotalDescuentos, -54 TotalImpuesto, and the other sums of ResumenFactura), products
 *     (cantidad × precio, base × tarifa, the exoneración) recomputed with a tolerance of 0.01 because each is a
 *     rounded product and the ANEXOS let the issuer round it; -45, -505 (tarifa), -487 (TotalDesgloseImpuesto),
 *     -492 (MedioPagoOtros), -58 (PlazoCredito).
 * Consecutivo reuse (-99) and the registry checks (-400 CABYS, -407/-408 activity, -37 location) need the
 * emulator's state and are made by the processor.
 *
 * This module does 1 and 3-6 (`analyzeDocument`) and says which schema 2 needs; it has no state and no
 * I/O, so it runs the same on the event loop and on a worker thread (validate-worker.ts). The document
 * is parsed once: the same DOM serves the signature verification and the typed view for 5 and 6.
 *
 * Codes and texts: Hacienda's own where a real answer shows them (NOTES §6.3, word for word); where its code is
 * unknown, a code of this emulator's own in the -9000 range (listed in the README). Warnings (`aviso`) leave
 * the document accepted; signature failures are Hacienda's plain sentences, without a code.
 */
import type { SchemaName } from '../core/xml/kinds.js';
import { KINDS } from '../core/xml/kinds.js';
import { parseComprobanteDom, parseMensajeDom, type ParsedComprobante, type ParsedLinea } from '../core/xml/parse.js';
import { parseXmlDocument, verifyXadesDocument, type VerifyReport } from '../core/sign/verify.js';
import { parseClave } from '../core/clave.js';
import { crParts, parseIsoDateTime } from '../core/dates.js';
import { computeTotals, compareFigures, type Totals } from '../core/totals.js';
import { dec, type Decimal } from '../core/money.js';
import type { Impuesto, Linea, MedioPago, OtroCargo } from '../core/model.js';
import type { EmulatorEnvironment, IdRef, ValidationErrorItem } from './store.js';

export const CODIGOS = {
  // Hacienda's codes, as its real answers show them (NOTES §6.3).
  /** Schema (only the first error is listed) and, here, an XML that cannot be read at all. */
  ESQUEMA: -1,
  CLAVE_IDENTIFICACION: -8,
  CLAVE_CONSECUTIVO: -23,
  /** aviso: the issuer's location differs from the registry's. */
  UBICACION: -37,
  TARIFA_OBLIGATORIA: -45,
  TOTAL_LINEA: -46,
  TOTAL_DESCUENTOS: -52,
  /** A later day: rejection; later the same day: aviso. */
  FECHA_EMISION: -53,
  TOTAL_IMPUESTO: -54,
  PLAZO_CREDITO: -58,
  FIRMANTE: -60,
  CONSECUTIVO_REPETIDO: -99,
  CABYS: -400,
  CLAVE_FECHA: -405,
  /** aviso: an activity of the catalogue that the issuer has not registered. */
  ACTIVIDAD_NO_REGISTRADA: -407,
  ACTIVIDAD_INVALIDA: -408,
  DESGLOSE_IMPUESTO: -487,
  MEDIO_PAGO_OTROS: -492,
  TARIFA_EXENTO: -505,
  // This emulator's own: checks whose Hacienda code no real answer shows (README, "the emulator's own codes").
  /** The clave posted is not the XML's. */
  CLAVE_ENVIADA: -9001,
  /** The POST's emisor / receptor, or a MensajeReceptor's data, disagree with the XML. */
  DATOS_ENVIO: -9002,
  /** A figure that is not one of the sums above: a product off by more than 0.01, or another sum. */
  TOTALES: -9003,
  /** The consecutivo's tipo is not the document's kind. */
  TIPO_COMPROBANTE: -9004,
  RECHAZO_FORZADO: -9090,
  ERROR_INTERNO: -9098,
} as const;

/** Hacienda's texts (NOTES §6.3, verbatim). */
export const TEXTOS = {
  clave8: 'El número de identificación de la clave numérica no coincide con el número de identificación del emisor.',
  clave23: 'La numeración del consecutivo del comprobante no coincide con el valor de la clave.',
  clave405: 'La fecha de la clave númerica no concuerda con el campo Fecha Emisión del comprobante',
  ubicacion37:
    "Estimado obligado tributario los datos suministrados en provincia, cantón y distrito del 'emisor' no concuerdan con la información registrada en la Dirección General de Tributación, favor proceder actualizar sus datos.",
  tarifa45: (linea: string) => `En la línea (${linea}) el campo de Tarifa es obligatorio para el Codigo de Impuesto 01`,
  linea46: (linea: string) => `El monto total de la línea (${linea}) no coincide con la suma de los campos denominados subtotal y monto del impuesto.`,
  descuentos52: 'El monto total de descuentos no coincide con la suma de los descuentos concedidos',
  fechaDia53: 'La fecha de emisión del comprobante electrónico no puede ser superior al día de hoy.',
  fechaHora53: 'La hora indicada en la emisión del archivo XML no coincide con la hora oficial.',
  impuesto54: "El monto total de impuestos no coincide con la suma de los campos denominados 'Monto del Impuesto'",
  plazo58: "El campo denominado 'Plazo del crédito' no posee la estructura establecida para el mismo.",
  firmante60: 'El contribuyente que firma la factura electrónica no es el emisor.',
  consecutivo99: (consecutivo: string, desde: string, clave: string) =>
    `La numeración consecutiva ${consecutivo} del comprobante que se está utilizando para este archivo XML ya existe en nuestras bases de datos desde el día ${desde} en la clave ${clave}`,
  cabys400: (linea: string) =>
    `En la línea (${linea}) el código indicado en el campo 'Código de Producto/Servicio' no se encuentra en el Catálogo de Bienes y Servicios CAByS, por favor verifique la codificación utilizada para el producto o servicio facturado. El CAByS se encuentra disponible en el portal web del Banco Central de Costa Rica`,
  actividad407:
    'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico no se encuentra Registrado ante el Ministerio de Hacienda para este contribuyente, favor verificar',
  actividad408:
    'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico, no es un código valido conforme el Catalogo de Actividades Económicas del Registro Único Tributario.',
  desglose487: 'El documento posee detalle de Impuesto pero carece del campo Total Desglose Impuestos',
  medioPago492: "El Tipo Medio Pago OTRO es obligatorio cuando se utilice el Tipo de Medio Pago '99'",
  tarifa505: (linea: string) => `En la línea (${linea}), para el código de tarifa '10' la tarifa debe ser 0`,
  firmaNoXades: 'La firma del documento no es XAdES, se obtuvo [ERROR]',
  firmaSinPolitica: 'La firma del documento no tiene el Policy Id',
  firmaInvalida: (motivo: string) => `La firma del comprobante electrónico no es válida (${motivo})`,
} as const;

export interface ValidationMeta {
  clave: string;
  fecha: string;
  emisor: IdRef;
  receptor?: IdRef;
  consecutivoReceptor?: string;
  environment: EmulatorEnvironment;
  /** IdP username that posted the document. */
  username: string;
  /** The emulator's clock at processing time. */
  now: Date;
}

export interface ValidationResult {
  accepted: boolean;
  errors: ValidationErrorItem[];
  /** Root element, e.g. FacturaElectronica or MensajeReceptor. */
  documentType?: string;
  /** Tipo de comprobante (01 FE, 03 NC, 04 TE, ...; 05/06/07 for a MensajeReceptor). */
  tipoComprobante?: string;
  numeroConsecutivo?: string;
  nombreEmisor?: string;
  tipoIdentificacionEmisor?: string;
  numeroCedulaEmisor?: string;
  nombreReceptor?: string;
  tipoIdentificacionReceptor?: string;
  numeroCedulaReceptor?: string;
  /** Decimal strings, as the document states them (TotalImpuesto / TotalComprobante). */
  montoTotalImpuesto?: string;
  totalFactura?: string;
  /** InformacionReferencia entries (TipoDocIR, Numero). */
  referencias?: { tipoDoc: string; numero: string }[];
  /** CodigoActividadEmisor, to register a first-time issuer and to check it against the catalogue. */
  codigoActividadEmisor?: string;
  /** The CABYS code of each line, for the catalogue check (-400). */
  cabys?: { linea: string; codigo: string }[];
  /** The Emisor's Ubicacion, for the registry check (-37). */
  ubicacionEmisor?: { provincia: string; canton: string; distrito: string };
  /** The document could not be read as a signed comprobante (schema or signature failure): Hacienda's answer then
   * says DESCONOCIDO and zero amounts. */
  unreadable?: boolean;
}

/** The checks `analyzeDocument` runs (XSD is run by the caller). Plain data: it crosses to worker threads. */
export interface AnalysisOptions {
  /** Check the XAdES signature (default true). */
  signature?: boolean;
  /** Check that the signer is the issuer (default true). */
  signer?: boolean;
  /** Recompute totals (default true). */
  totals?: boolean;
  /** Tolerance of the totals comparison (default 0.01). */
  tolerance?: string;
  /** Accept FechaEmision up to this far in the future (default 10 min). */
  futureToleranceMs?: number;
}

/** The XSD validation a document still needs: `schema`, or else `fallback` (either one is enough). */
export interface XsdRequest {
  schema: SchemaName;
  fallback?: SchemaName;
  /** What the error messages call the document. */
  subject: 'comprobante' | 'mensaje';
}

/** Every check but the XSD; `result.errors` are in the order the verdict lists them, XSD errors going first. */
export interface DocumentAnalysis {
  result: ValidationResult;
  /** Absent when the document did not get as far as XSD validation (not UTF-8, not well-formed, unknown root). */
  xsd?: XsdRequest;
}

export const err = (codigo: number, mensaje: string, fila = 0, columna = 0): ValidationErrorItem => ({ codigo, mensaje, fila, columna });

/**
 * Settles the verdict. A document that fails its schema is not read any further: Hacienda's answer then lists
 * that one error (-1) and nothing else. Otherwise the document is rejected as soon as one listed item is not a
 * warning (`aviso`).
 */
export function withXsdErrors(analysis: DocumentAnalysis, xsdErrors: ValidationErrorItem[]): ValidationResult {
  const r = analysis.result;
  if (xsdErrors.length > 0) {
    r.errors.splice(0, r.errors.length, ...xsdErrors);
    r.unreadable = true;
  }
  r.accepted = isAccepted(r.errors);
  return r;
}

/** Accepted when every listed item is a warning (or none is listed). */
export function isAccepted(errors: readonly ValidationErrorItem[]): boolean {
  return errors.every((e) => e.aviso === true);
}

/** Checks 1 and 3-6 of a received document. Never throws for a bad document. */
export function analyzeDocument(xmlBytes: Uint8Array, meta: ValidationMeta, opts: AnalysisOptions = {}): DocumentAnalysis {
  const text = decodeUtf8(xmlBytes);
  if (text === undefined) return { result: { accepted: false, errors: [err(CODIGOS.ESQUEMA, 'El comprobante no está codificado en UTF-8.')] } };
  if (meta.consecutivoReceptor !== undefined) return analyzeMensajeReceptor(text, meta, opts);
  const tolerance = opts.tolerance ?? '0.01';
  const futureMs = opts.futureToleranceMs ?? 10 * 60_000;

  const errors: ValidationErrorItem[] = [];
  let doc: ParsedComprobante;
  let dom: Document;
  try {
    dom = parseDom(text);
    doc = parseComprobanteDom(dom);
  } catch (e) {
    return { result: { accepted: false, errors: [err(CODIGOS.ESQUEMA, `El archivo XML no es un comprobante electrónico v4.4 legible: ${msg(e)}`)] } };
  }
  const info = KINDS[doc.kind];
  const result: ValidationResult = {
    accepted: false,
    errors,
    documentType: doc.rootName,
    tipoComprobante: info.tipoComprobante,
    numeroConsecutivo: doc.numeroConsecutivo,
    nombreEmisor: doc.emisor.nombre,
    tipoIdentificacionEmisor: doc.emisor.identificacion.tipo,
    numeroCedulaEmisor: doc.emisor.identificacion.numero,
    montoTotalImpuesto: doc.resumen.totalImpuesto,
    totalFactura: doc.resumen.totalComprobante,
    referencias: doc.informacionReferencia.filter((r) => r.numero).map((r) => ({ tipoDoc: r.tipoDocIR, numero: r.numero! })),
  };
  if (doc.codigoActividadEmisor) result.codigoActividadEmisor = doc.codigoActividadEmisor;
  if (doc.receptor) {
    result.nombreReceptor = doc.receptor.nombre;
    if (doc.receptor.identificacion) {
      result.tipoIdentificacionReceptor = doc.receptor.identificacion.tipo;
      result.numeroCedulaReceptor = doc.receptor.identificacion.numero;
    }
  }

  // 3-4. Signature and signer
  const issuer = doc.kind === 'FEC' ? doc.receptor?.identificacion : doc.emisor.identificacion;
  if (opts.signature !== false) {
    const report = verifyXadesDocument(dom, text, meta.now, { crossCheck: false });
    const sig = signatureErrors(report);
    if (sig.length > 0) result.unreadable = true;
    errors.push(...sig);
    if (opts.signer !== false && report.signer) {
      const id = report.signer.identificacion;
      if (!issuer || !id || stripZeros(id) !== stripZeros(issuer.numero)) errors.push(err(CODIGOS.FIRMANTE, TEXTOS.firmante60));
    }
  }

  // 5. Clave and POST data vs XML
  errors.push(...claveErrors(doc, meta, issuer?.numero, futureMs));

  // 6. Lines, payment, and totals
  errors.push(...lineErrors(doc));
  if (opts.totals !== false) errors.push(...sumErrors(doc), ...totalsErrors(doc, tolerance));
  result.cabys = doc.lineas.map((l) => ({ linea: l.numeroLinea, codigo: l.codigoCABYS ?? '' }));
  if (doc.emisor.ubicacion) result.ubicacionEmisor = doc.emisor.ubicacion;

  result.accepted = isAccepted(errors);
  return { result, xsd: { schema: info.schema, subject: 'comprobante' } };
}

function analyzeMensajeReceptor(text: string, meta: ValidationMeta, opts: AnalysisOptions): DocumentAnalysis {
  const errors: ValidationErrorItem[] = [];
  let m;
  let dom: Document;
  try {
    dom = parseDom(text);
    m = parseMensajeDom(dom);
  } catch (e) {
    return { result: { accepted: false, errors: [err(CODIGOS.ESQUEMA, `El archivo XML no es un MensajeReceptor legible: ${msg(e)}`)] } };
  }
  if (m.type !== 'MensajeReceptor') {
    return { result: { accepted: false, errors: [err(CODIGOS.ESQUEMA, `Se esperaba un MensajeReceptor y se recibió ${m.type}.`)] } };
  }
  const result: ValidationResult = {
    accepted: false,
    errors,
    documentType: 'MensajeReceptor',
    tipoComprobante: m.numeroConsecutivoReceptor.slice(8, 10),
    numeroConsecutivo: m.numeroConsecutivoReceptor,
    numeroCedulaEmisor: m.numeroCedulaEmisor,
    numeroCedulaReceptor: m.numeroCedulaReceptor,
    totalFactura: m.totalFactura,
  };
  if (m.montoTotalImpuesto !== undefined) result.montoTotalImpuesto = m.montoTotalImpuesto;
  if (opts.signature !== false) {
    const report = verifyXadesDocument(dom, text, meta.now, { crossCheck: false });
    errors.push(...signatureErrors(report));
    if (opts.signer !== false && report.signer && stripZeros(report.signer.identificacion ?? '') !== stripZeros(m.numeroCedulaReceptor)) {
      errors.push(err(CODIGOS.FIRMANTE, `El mensaje está firmado con el certificado de otro contribuyente (${report.signer.subjectSerialNumber ?? '?'}), no del receptor ${m.numeroCedulaReceptor}.`));
    }
  }
  if (m.clave !== meta.clave) errors.push(err(CODIGOS.CLAVE_ENVIADA, `La clave del mensaje (${m.clave}) no coincide con la clave enviada (${meta.clave}).`));
  if (m.numeroConsecutivoReceptor !== meta.consecutivoReceptor) {
    errors.push(err(CODIGOS.DATOS_ENVIO, `NumeroConsecutivoReceptor (${m.numeroConsecutivoReceptor}) no coincide con consecutivoReceptor enviado (${meta.consecutivoReceptor}).`));
  }
  const expectedTipo = { 1: '05', 2: '06', 3: '07' }[m.mensaje];
  if (m.numeroConsecutivoReceptor.slice(8, 10) !== expectedTipo) {
    errors.push(err(CODIGOS.TIPO_COMPROBANTE, `El tipo del NumeroConsecutivoReceptor debe ser ${expectedTipo} para Mensaje ${m.mensaje}.`));
  }
  if (stripZeros(m.numeroCedulaEmisor) !== stripZeros(meta.emisor.numeroIdentificacion)) {
    errors.push(err(CODIGOS.DATOS_ENVIO, `NumeroCedulaEmisor (${m.numeroCedulaEmisor}) no coincide con el emisor enviado (${meta.emisor.numeroIdentificacion}).`));
  }
  if (meta.receptor && stripZeros(m.numeroCedulaReceptor) !== stripZeros(meta.receptor.numeroIdentificacion)) {
    errors.push(err(CODIGOS.DATOS_ENVIO, `NumeroCedulaReceptor (${m.numeroCedulaReceptor}) no coincide con el receptor enviado (${meta.receptor.numeroIdentificacion}).`));
  }
  result.accepted = isAccepted(errors);
  return { result, xsd: { schema: 'MR', subject: 'mensaje' } };
}

/** One strict parse (well-formedness, then a DOM) shared by every check; DOCTYPE is refused. */
function parseDom(text: string): Document {
  if (/<!DOCTYPE/i.test(text)) throw new Error('DOCTYPE declarations are not allowed');
  const dom = parseXmlDocument(text);
  if (typeof dom === 'string') throw new Error(dom);
  return dom;
}

/**
 * Hacienda lists a signature failure as a plain sentence, without a code (NOTES §6.3): an XMLDSig signature without
 * XAdES properties, a XAdES signature without a policy (BES, not EPES), a digest or value that does not verify, a
 * certificate that is not valid. An older or unknown policy identifier is not a failure: Hacienda accepts v4.2-policy
 * signatures and signatures with other policies (NOTES §3.3, §6.3).
 */
function signatureErrors(report: VerifyReport): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  const plain = (mensaje: string) => out.push({ codigo: 0, mensaje, fila: 0, columna: 0, sinCodigo: true });
  if (report.form === 'XMLDSig') plain(TEXTOS.firmaNoXades);
  else if (report.form === 'XAdES-BES') plain(TEXTOS.firmaSinPolitica);
  for (const c of report.checks) {
    if (c.ok) continue;
    // The form said it above; an identifier other than Hacienda's is accepted, as Hacienda accepts it.
    if (c.name === 'xades.policy' || c.name === 'xades.qualifyingProperties') continue;
    if (c.name === 'xades.signingCertificate' && report.form === 'XMLDSig') continue;
    if (c.name.startsWith('certificate.')) plain(TEXTOS.firmaInvalida(`El certificado empleado no es válido: ${c.detail}`));
    else if (c.name === 'xml.wellFormed') out.push(err(CODIGOS.ESQUEMA, `El archivo XML no está bien formado: ${c.detail}`));
    else plain(TEXTOS.firmaInvalida(`${c.name}: ${c.detail}`));
  }
  return out;
}

function claveErrors(doc: ParsedComprobante, meta: ValidationMeta, issuerNumero: string | undefined, futureMs: number): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  if (doc.clave !== meta.clave) out.push(err(CODIGOS.CLAVE_ENVIADA, `La clave del comprobante (${doc.clave}) no coincide con la clave enviada (${meta.clave}).`));
  const parts = parseClave(doc.clave);
  const fecha = parseIsoDateTime(doc.fechaEmision);
  if (!parts) {
    // A clave without its parts: Hacienda answers every comparison at once (NOTES §6.3).
    out.push(err(CODIGOS.CLAVE_IDENTIFICACION, TEXTOS.clave8), err(CODIGOS.CLAVE_FECHA, TEXTOS.clave405), err(CODIGOS.CLAVE_CONSECUTIVO, TEXTOS.clave23));
  } else {
    if (issuerNumero !== undefined && stripZeros(parts.identificacion) !== stripZeros(issuerNumero)) out.push(err(CODIGOS.CLAVE_IDENTIFICACION, TEXTOS.clave8));
    if (fecha) {
      const p = crParts(fecha);
      if (p.day !== parts.day || p.month !== parts.month || p.year % 100 !== parts.year2) out.push(err(CODIGOS.CLAVE_FECHA, TEXTOS.clave405));
    }
    if (parts.consecutivo !== doc.numeroConsecutivo) out.push(err(CODIGOS.CLAVE_CONSECUTIVO, TEXTOS.clave23));
  }
  if (fecha && fecha.getTime() > meta.now.getTime() + futureMs) {
    // A later day in Costa Rica is refused; later the same day is only a warning (the hour is "not official").
    const f = crParts(fecha);
    const n = crParts(meta.now);
    const laterDay = f.year * 10_000 + f.month * 100 + f.day > n.year * 10_000 + n.month * 100 + n.day;
    out.push(laterDay ? err(CODIGOS.FECHA_EMISION, TEXTOS.fechaDia53) : { ...err(CODIGOS.FECHA_EMISION, TEXTOS.fechaHora53), aviso: true });
  }
  const tipo = doc.numeroConsecutivo.slice(8, 10);
  if (tipo !== KINDS[doc.kind].tipoComprobante) {
    out.push(err(CODIGOS.TIPO_COMPROBANTE, `El tipo de comprobante del consecutivo (${tipo}) no corresponde a ${doc.rootName} (${KINDS[doc.kind].tipoComprobante}).`));
  }
  if (issuerNumero !== undefined && stripZeros(meta.emisor.numeroIdentificacion) !== stripZeros(issuerNumero)) {
    out.push(err(CODIGOS.DATOS_ENVIO, `El emisor enviado (${meta.emisor.numeroIdentificacion}) no coincide con el del comprobante (${issuerNumero}).`));
  }
  const recId = doc.kind === 'FEC' ? doc.emisor.identificacion : doc.receptor?.identificacion;
  if (meta.receptor && recId && stripZeros(meta.receptor.numeroIdentificacion) !== stripZeros(recId.numero)) {
    out.push(err(CODIGOS.DATOS_ENVIO, `El receptor enviado (${meta.receptor.numeroIdentificacion}) no coincide con el del comprobante (${recId.numero}).`));
  }
  return out;
}

/** -45, -505 (each line's taxes), -492 (MedioPagoOtros), -58 (PlazoCredito), -487 (TotalDesgloseImpuesto). */
function lineErrors(doc: ParsedComprobante): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  for (const l of doc.lineas) {
    for (const t of l.impuestos) {
      if (t.codigo === '01' && (t.tarifa === undefined || t.tarifa === '')) out.push(err(CODIGOS.TARIFA_OBLIGATORIA, TEXTOS.tarifa45(l.numeroLinea)));
      else if (t.codigo === '01' && t.codigoTarifaIVA === '10' && isNonZero(t.tarifa)) out.push(err(CODIGOS.TARIFA_EXENTO, TEXTOS.tarifa505(l.numeroLinea)));
    }
  }
  if (doc.mediosPago.some((m) => m.tipoMedioPago === '99' && !m.medioPagoOtros?.trim())) out.push(err(CODIGOS.MEDIO_PAGO_OTROS, TEXTOS.medioPago492));
  if ((doc.condicionVenta === '02' || doc.condicionVenta === '10') && !doc.plazoCredito?.trim()) out.push(err(CODIGOS.PLAZO_CREDITO, TEXTOS.plazo58));
  if (doc.lineas.some((l) => l.impuestos.length > 0) && doc.resumen.totalDesgloseImpuesto.length === 0) out.push(err(CODIGOS.DESGLOSE_IMPUESTO, TEXTOS.desglose487));
  return out;
}

/**
 * The sums, compared exactly against the document's own figures (Hacienda rejected a TotalDescuentos 0.00001 away
 * from the sum of the discounts): -46 per line, -52, -54. The other sums of ResumenFactura are checked the same
 * way under this emulator's own code.
 */
function sumErrors(doc: ParsedComprobante): ValidationErrorItem[] {
  try {
    return sums(doc);
  } catch {
    return []; // a figure that is not a number: the schema says so
  }
}

function sums(doc: ParsedComprobante): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  const ZERO = dec(0);
  const d = (v: string | undefined): Decimal => (v === undefined || v === '' ? ZERO : dec(v));
  let descuentos = dec(0);
  let impuesto = dec(0);
  for (const l of doc.lineas) {
    const lineDesc = l.descuentos.reduce((a, x) => a.plus(d(x.montoDescuento)), dec(0));
    descuentos = descuentos.plus(lineDesc);
    const bruto = l.impuestos.reduce((a, t) => a.plus(d(t.monto)), dec(0));
    const exonerado = l.impuestos.reduce((a, t) => a.plus(d(t.exoneracion?.montoExoneracion)), dec(0));
    const neto = l.impuestoNeto !== undefined ? d(l.impuestoNeto) : bruto.minus(exonerado);
    impuesto = impuesto.plus(neto);
    if (!d(l.montoTotalLinea).equals(d(l.subTotal).plus(neto))) out.push(err(CODIGOS.TOTAL_LINEA, TEXTOS.linea46(l.numeroLinea)));
  }
  const r = doc.resumen;
  if (!d(r.totalDescuentos).equals(descuentos)) out.push(err(CODIGOS.TOTAL_DESCUENTOS, TEXTOS.descuentos52));
  if (!d(r.totalImpuesto).equals(impuesto)) out.push(err(CODIGOS.TOTAL_IMPUESTO, TEXTOS.impuesto54));
  const own = (what: string, stated: string | undefined, sum: Decimal) => {
    if (!d(stated).equals(sum)) out.push(err(CODIGOS.TOTALES, `${what} (${d(stated).toFixed(5)}) no coincide con la suma de sus componentes (${sum.toFixed(5)}).`));
  };
  own('TotalGravado', r.totalGravado, d(r.totalServGravados).plus(d(r.totalMercanciasGravadas)));
  own('TotalExento', r.totalExento, d(r.totalServExentos).plus(d(r.totalMercanciasExentas)));
  own('TotalExonerado', r.totalExonerado, d(r.totalServExonerado).plus(d(r.totalMercExonerada)));
  own('TotalNoSujeto', r.totalNoSujeto, d(r.totalServNoSujeto).plus(d(r.totalMercNoSujeta)));
  own('TotalVenta', r.totalVenta, d(r.totalGravado).plus(d(r.totalExento)).plus(d(r.totalExonerado)).plus(d(r.totalNoSujeto)));
  own('TotalVentaNeta', r.totalVentaNeta, d(r.totalVenta).minus(d(r.totalDescuentos)));
  own(
    'TotalComprobante',
    r.totalComprobante,
    d(r.totalVentaNeta).plus(d(r.totalImpuesto)).plus(d(r.totalOtrosCargos)).minus(d(r.totalIVADevuelto)),
  );
  const otros = doc.otrosCargos.reduce((a, o) => a.plus(d(o.montoCargo)), dec(0));
  own('TotalOtrosCargos', r.totalOtrosCargos, otros);
  return out;
}

function isNonZero(v: string | undefined): boolean {
  if (v === undefined || v === '') return false;
  try {
    return !dec(v).isZero();
  } catch {
    return true;
  }
}

// --- Totals ----------------------------------------------------------------------------------------

function optDec(v: string | undefined): Decimal | undefined {
  return v === undefined || v === '' ? undefined : dec(v);
}

function toLinea(l: ParsedLinea, i: number): Linea {
  const linea: Linea = {
    numeroLinea: Number(l.numeroLinea) || i + 1,
    codigoCABYS: l.codigoCABYS ?? '',
    codigoComercial: l.codigoComercial,
    cantidad: dec(l.cantidad ?? '1'),
    unidadMedida: l.unidadMedida ?? 'Unid',
    detalle: l.detalle,
    precioUnitario: dec(l.precioUnitario ?? l.montoTotal),
    descuentos: l.descuentos.map((d) => ({
      montoDescuento: dec(d.montoDescuento),
      codigoDescuento: d.codigoDescuento,
      ...(d.codigoDescuentoOtro ? { codigoDescuentoOtro: d.codigoDescuentoOtro } : {}),
      ...(d.naturalezaDescuento ? { naturalezaDescuento: d.naturalezaDescuento } : {}),
    })),
    impuestos: l.impuestos.map((t) => {
      const imp: Impuesto = { codigo: t.codigo };
      if (t.codigoTarifaIVA !== undefined) imp.codigoTarifaIVA = t.codigoTarifaIVA;
      const tarifa = optDec(t.tarifa);
      if (tarifa) imp.tarifa = tarifa;
      const factor = optDec(t.factorCalculoIVA);
      if (factor) imp.factorCalculoIVA = factor;
      if (t.exoneracion) {
        imp.exoneracion = {
          tipoDocumento: t.exoneracion.tipoDocumento,
          numeroDocumento: t.exoneracion.numeroDocumento,
          nombreInstitucion: t.exoneracion.nombreInstitucion,
          fechaEmision: t.exoneracion.fechaEmision,
          tarifaExonerada: dec(t.exoneracion.tarifaExonerada),
        };
      }
      return imp;
    }),
  };
  if (l.ivaCobradoFabrica) linea.ivaCobradoFabrica = l.ivaCobradoFabrica;
  const asumido = optDec(l.impuestoAsumidoEmisorFabrica);
  if (asumido) linea.impuestoAsumidoEmisorFabrica = asumido;
  return linea;
}

/**
 * Recomputes the figures that are products (cantidad × precio, base × tarifa, the exoneración) or sums of products
 * per kind of sale (TotalServGravados …), and lists every one that differs by more than the tolerance: each is a
 * rounded product, and the ANEXOS let the issuer round it (to 5 decimals or fewer). Sums of the document's own
 * figures are compared exactly by sumErrors.
 */
export function totalsErrors(doc: ParsedComprobante, tolerance: string): ValidationErrorItem[] {
  if (doc.kind === 'REP' || doc.lineas.some((l) => l.tieneSurtido || l.cantidad === undefined || l.precioUnitario === undefined)) return [];
  let totals: Totals;
  try {
    const otrosCargos: OtroCargo[] = doc.otrosCargos.map((o) => ({ tipoDocumento: o.tipoDocumento, detalle: o.detalle, montoCargo: dec(o.montoCargo) }));
    const mediosPago: MedioPago[] = doc.mediosPago.map((m) => ({ tipoMedioPago: m.tipoMedioPago ?? '01' }));
    totals = computeTotals({ lineas: doc.lineas.map(toLinea), otrosCargos, mediosPago });
  } catch (e) {
    if (e instanceof RangeError) return []; // e.g. specific taxes the core does not compute: not judged
    return [err(CODIGOS.TOTALES, `No se pudieron recalcular los totales: ${msg(e)}`)];
  }
  const out: ValidationErrorItem[] = [];
  const cmp = (field: string, expected: Decimal | undefined, actual: string | undefined) => {
    if (expected === undefined) return;
    const got = actual ?? '0';
    let finding;
    try {
      finding = compareFigures(field, expected, got, tolerance);
    } catch {
      out.push(err(CODIGOS.TOTALES, `${field}: "${got}" no es un monto válido.`));
      return;
    }
    if (finding) out.push(err(CODIGOS.TOTALES, `${field}: el monto calculado es ${expected.toFixed(5)} y el comprobante indica ${dec(got).toFixed(5)}.`));
  };
  doc.lineas.forEach((l, i) => {
    const t = totals.lineas[i]!;
    const at = `LineaDetalle ${l.numeroLinea}`;
    cmp(`${at} MontoTotal`, t.montoTotal, l.montoTotal);
    cmp(`${at} SubTotal`, t.subTotal, l.subTotal);
    if (t.baseImponible && l.baseImponible !== undefined) cmp(`${at} BaseImponible`, t.baseImponible, l.baseImponible);
    l.impuestos.forEach((imp, j) => {
      const ti = t.impuestos[j];
      if (!ti) return;
      cmp(`${at} Impuesto ${imp.codigo} Monto`, ti.monto, imp.monto);
      if (ti.montoExoneracion && imp.exoneracion) cmp(`${at} Impuesto ${imp.codigo} MontoExoneracion`, ti.montoExoneracion, imp.exoneracion.montoExoneracion);
    });
    if (l.impuestoNeto !== undefined) cmp(`${at} ImpuestoNeto`, t.impuestoNeto, l.impuestoNeto);
    // MontoTotalLinea is a sum: sumErrors compares it exactly (-46).
  });
  const r = totals.resumen;
  const s = doc.resumen;
  const pairs: [string, Decimal, string | undefined][] = [
    ['TotalServGravados', r.totalServGravados, s.totalServGravados],
    ['TotalServExentos', r.totalServExentos, s.totalServExentos],
    ['TotalServExonerado', r.totalServExonerado, s.totalServExonerado],
    ['TotalServNoSujeto', r.totalServNoSujeto, s.totalServNoSujeto],
    ['TotalMercanciasGravadas', r.totalMercanciasGravadas, s.totalMercanciasGravadas],
    ['TotalMercanciasExentas', r.totalMercanciasExentas, s.totalMercanciasExentas],
    ['TotalMercExonerada', r.totalMercExonerada, s.totalMercExonerada],
    ['TotalMercNoSujeta', r.totalMercNoSujeta, s.totalMercNoSujeta],
    // TotalGravado … TotalComprobante are sums of the figures above: sumErrors compares them exactly.
  ];
  for (const [name, expected, actual] of pairs) {
    // Optional summary elements may be omitted when zero.
    if (actual === undefined && expected.isZero()) continue;
    cmp(`ResumenFactura ${name}`, expected, actual);
  }
  // No TotalDesgloseImpuesto at all is -487 (lineErrors).
  for (const d of s.totalDesgloseImpuesto.length === 0 ? [] : r.totalDesgloseImpuesto) {
    const found = s.totalDesgloseImpuesto.find((x) => x.codigo === d.codigo && (x.codigoTarifaIVA ?? '') === (d.codigoTarifaIVA ?? ''));
    if (!found) {
      if (!d.totalMontoImpuesto.isZero()) {
        out.push(err(CODIGOS.TOTALES, `ResumenFactura TotalDesgloseImpuesto: falta el código ${d.codigo}${d.codigoTarifaIVA ? `/${d.codigoTarifaIVA}` : ''}.`));
      }
      continue;
    }
    cmp(`ResumenFactura TotalDesgloseImpuesto ${d.codigo}${d.codigoTarifaIVA ? `/${d.codigoTarifaIVA}` : ''}`, d.totalMontoImpuesto, found.totalMontoImpuesto);
  }
  return out;
}

// --- helpers ---------------------------------------------------------------------------------------

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeUtf8(b: Uint8Array): string | undefined {
  try {
    return utf8.decode(b).replace(/^\uFEFF/, '');
  } catch {
    return undefined;
  }
}

function stripZeros(s: string): string {
  return s.replace(/^0+/, '');
}

function msg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
