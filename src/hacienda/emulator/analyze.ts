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
 *  6. totals recomputed independently (src/core/totals.ts, from quantities, prices, discounts and tax
 *     rates) equal the document's within 0.01, line by line and in ResumenFactura.
 * Consecutivo reuse per issuer needs the emulator's state and is checked by the processor (code -99).
 *
 * This module does 1 and 3-6 (`analyzeDocument`) and says which schema 2 needs; it has no state and no
 * I/O, so it runs the same on the event loop and on a worker thread (validate-worker.ts). The document
 * is parsed once: the same DOM serves the signature verification and the typed view for 5 and 6.
 *
 * Error codes: Hacienda publishes no list. -99 (consecutivo ya existe) and -37 (ubicación) are known from
 * real answers; the other codes below are this emulator's own, negative like Hacienda's.
 */
import type { SchemaName } from '../../core/xml/kinds.js';
import { KINDS } from '../../core/xml/kinds.js';
import { parseComprobanteDom, parseMensajeDom, type ParsedComprobante, type ParsedLinea } from '../../core/xml/parse.js';
import { parseXmlDocument, verifyXadesDocument, type VerifyReport } from '../../core/sign/verify.js';
import { parseClave } from '../../core/clave.js';
import { crParts, parseIsoDateTime } from '../../core/dates.js';
import { computeTotals, compareFigures, type Totals } from '../../core/totals.js';
import { dec, type Decimal } from '../../core/money.js';
import type { Impuesto, Linea, MedioPago, OtroCargo } from '../../core/model.js';
import type { EmulatorEnvironment, IdRef, ValidationErrorItem } from './store.js';

export const CODIGOS = {
  XML_MAL_FORMADO: -1,
  ESQUEMA: -2,
  FIRMA: -3,
  POLITICA_FIRMA: -4,
  CERTIFICADO: -5,
  FIRMANTE: -6,
  CLAVE: -7,
  DATOS_ENVIO: -8,
  TOTALES: -9,
  FECHA: -10,
  RECHAZO_FORZADO: -90,
  ERROR_INTERNO: -98,
  CONSECUTIVO_REPETIDO: -99,
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
  /** CodigoActividadEmisor, to register a first-time issuer. */
  codigoActividadEmisor?: string;
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

/** Puts the XSD errors in front (where the verdict lists them) and settles `accepted`. */
export function withXsdErrors(analysis: DocumentAnalysis, xsdErrors: ValidationErrorItem[]): ValidationResult {
  const r = analysis.result;
  if (xsdErrors.length > 0) r.errors.unshift(...xsdErrors);
  r.accepted = r.errors.length === 0;
  return r;
}

/** Checks 1 and 3-6 of a received document. Never throws for a bad document. */
export function analyzeDocument(xmlBytes: Uint8Array, meta: ValidationMeta, opts: AnalysisOptions = {}): DocumentAnalysis {
  const text = decodeUtf8(xmlBytes);
  if (text === undefined) return { result: { accepted: false, errors: [err(CODIGOS.XML_MAL_FORMADO, 'El comprobante no está codificado en UTF-8.')] } };
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
    return { result: { accepted: false, errors: [err(CODIGOS.XML_MAL_FORMADO, `El archivo XML no es un comprobante electrónico v4.4 legible: ${msg(e)}`)] } };
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
    errors.push(...signatureErrors(report));
    if (opts.signer !== false && report.signer) {
      const id = report.signer.identificacion;
      if (!issuer || !id || stripZeros(id) !== stripZeros(issuer.numero)) {
        errors.push(
          err(
            CODIGOS.FIRMANTE,
            `El comprobante está firmado con el certificado de otro contribuyente: el firmante es ${report.signer.subjectSerialNumber ?? '(sin identificación)'}` +
              ` y el ${doc.kind === 'FEC' ? 'receptor (emisor de la FEC)' : 'emisor'} es ${issuer?.numero ?? '(sin identificación)'}.`,
          ),
        );
      }
    }
  }

  // 5. Clave and POST data vs XML
  errors.push(...claveErrors(doc, meta, issuer?.numero, futureMs));

  // 6. Totals
  if (opts.totals !== false) errors.push(...totalsErrors(doc, tolerance));

  result.accepted = errors.length === 0;
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
    return { result: { accepted: false, errors: [err(CODIGOS.XML_MAL_FORMADO, `El archivo XML no es un MensajeReceptor legible: ${msg(e)}`)] } };
  }
  if (m.type !== 'MensajeReceptor') {
    return { result: { accepted: false, errors: [err(CODIGOS.XML_MAL_FORMADO, `Se esperaba un MensajeReceptor y se recibió ${m.type}.`)] } };
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
  if (m.clave !== meta.clave) errors.push(err(CODIGOS.CLAVE, `La clave del mensaje (${m.clave}) no coincide con la clave enviada (${meta.clave}).`));
  if (m.numeroConsecutivoReceptor !== meta.consecutivoReceptor) {
    errors.push(err(CODIGOS.DATOS_ENVIO, `NumeroConsecutivoReceptor (${m.numeroConsecutivoReceptor}) no coincide con consecutivoReceptor enviado (${meta.consecutivoReceptor}).`));
  }
  const expectedTipo = { 1: '05', 2: '06', 3: '07' }[m.mensaje];
  if (m.numeroConsecutivoReceptor.slice(8, 10) !== expectedTipo) {
    errors.push(err(CODIGOS.CLAVE, `El tipo del NumeroConsecutivoReceptor debe ser ${expectedTipo} para Mensaje ${m.mensaje}.`));
  }
  if (stripZeros(m.numeroCedulaEmisor) !== stripZeros(meta.emisor.numeroIdentificacion)) {
    errors.push(err(CODIGOS.DATOS_ENVIO, `NumeroCedulaEmisor (${m.numeroCedulaEmisor}) no coincide con el emisor enviado (${meta.emisor.numeroIdentificacion}).`));
  }
  if (meta.receptor && stripZeros(m.numeroCedulaReceptor) !== stripZeros(meta.receptor.numeroIdentificacion)) {
    errors.push(err(CODIGOS.DATOS_ENVIO, `NumeroCedulaReceptor (${m.numeroCedulaReceptor}) no coincide con el receptor enviado (${meta.receptor.numeroIdentificacion}).`));
  }
  result.accepted = errors.length === 0;
  return { result, xsd: { schema: 'MR', subject: 'mensaje' } };
}

/** One strict parse (well-formedness, then a DOM) shared by every check; DOCTYPE is refused. */
function parseDom(text: string): Document {
  if (/<!DOCTYPE/i.test(text)) throw new Error('DOCTYPE declarations are not allowed');
  const dom = parseXmlDocument(text);
  if (typeof dom === 'string') throw new Error(dom);
  return dom;
}

function signatureErrors(report: VerifyReport): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  for (const c of report.checks) {
    if (c.ok) continue;
    if (c.name === 'xades.policy') out.push(err(CODIGOS.POLITICA_FIRMA, `La política de firma no es la de la versión 4.4: ${c.detail}`));
    else if (c.name.startsWith('certificate.')) out.push(err(CODIGOS.CERTIFICADO, `El certificado de la firma no es válido: ${c.detail}`));
    else if (c.name === 'xml.wellFormed') out.push(err(CODIGOS.XML_MAL_FORMADO, `El archivo XML no está bien formado: ${c.detail}`));
    else out.push(err(CODIGOS.FIRMA, `La firma del comprobante electrónico no es válida (${c.name}): ${c.detail}`));
  }
  return out;
}

function claveErrors(doc: ParsedComprobante, meta: ValidationMeta, issuerNumero: string | undefined, futureMs: number): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  const e = (m: string) => out.push(err(CODIGOS.CLAVE, m));
  if (doc.clave !== meta.clave) e(`La clave del comprobante (${doc.clave}) no coincide con la clave enviada (${meta.clave}).`);
  const parts = parseClave(doc.clave);
  if (!parts) {
    e(`La clave ${doc.clave} no tiene el formato de 50 posiciones del Anexo (506, fecha, identificación, consecutivo, situación, código de seguridad).`);
  } else {
    const fecha = parseIsoDateTime(doc.fechaEmision);
    if (!fecha) out.push(err(CODIGOS.FECHA, `FechaEmision "${doc.fechaEmision}" no es una fecha válida.`));
    else {
      const p = crParts(fecha);
      if (p.day !== parts.day || p.month !== parts.month || p.year % 100 !== parts.year2) {
        const dd = String(parts.day).padStart(2, '0'), mm = String(parts.month).padStart(2, '0'), yy = String(parts.year2).padStart(2, '0');
        e(`La fecha de la clave (${dd}/${mm}/${yy}) no coincide con la FechaEmision del comprobante (${doc.fechaEmision}).`);
      }
      if (fecha.getTime() > meta.now.getTime() + futureMs) {
        out.push(err(CODIGOS.FECHA, `La FechaEmision (${doc.fechaEmision}) es posterior a la fecha de recepción.`));
      }
    }
    if (issuerNumero !== undefined && stripZeros(parts.identificacion) !== stripZeros(issuerNumero)) {
      e(`La identificación en la clave (${parts.identificacion}) no coincide con la del emisor del comprobante (${issuerNumero}).`);
    }
    if (parts.consecutivo !== doc.numeroConsecutivo) {
      e(`El consecutivo en la clave (${parts.consecutivo}) no coincide con NumeroConsecutivo (${doc.numeroConsecutivo}).`);
    }
  }
  const tipo = doc.numeroConsecutivo.slice(8, 10);
  if (tipo !== KINDS[doc.kind].tipoComprobante) {
    e(`El tipo de comprobante del consecutivo (${tipo}) no corresponde a ${doc.rootName} (${KINDS[doc.kind].tipoComprobante}).`);
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

/** Recomputes the totals and lists every figure of the document that differs by more than the tolerance. */
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
    cmp(`${at} MontoTotalLinea`, t.montoTotalLinea, l.montoTotalLinea);
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
    ['TotalGravado', r.totalGravado, s.totalGravado],
    ['TotalExento', r.totalExento, s.totalExento],
    ['TotalExonerado', r.totalExonerado, s.totalExonerado],
    ['TotalNoSujeto', r.totalNoSujeto, s.totalNoSujeto],
    ['TotalVenta', r.totalVenta, s.totalVenta],
    ['TotalDescuentos', r.totalDescuentos, s.totalDescuentos],
    ['TotalVentaNeta', r.totalVentaNeta, s.totalVentaNeta],
    ['TotalImpuesto', r.totalImpuesto, s.totalImpuesto],
    ['TotalOtrosCargos', r.totalOtrosCargos, s.totalOtrosCargos],
    ['TotalComprobante', r.totalComprobante, s.totalComprobante],
  ];
  for (const [name, expected, actual] of pairs) {
    // Optional summary elements may be omitted when zero.
    if (actual === undefined && expected.isZero()) continue;
    cmp(`ResumenFactura ${name}`, expected, actual);
  }
  for (const d of r.totalDesgloseImpuesto) {
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
