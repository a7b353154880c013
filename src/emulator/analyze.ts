/**
 * What the emulator checks when it processes a received comprobante, asynchronously (after the 202):
 *
 *  1. the XML is well formed and is a v4.4 comprobante (or MensajeReceptor) in its namespace;
 *  2. it is valid against its official XSD (schemas/xsd/, via src/core/xsd, batched: see validate.ts);
 *  3. the XAdES-EPES signature is valid: value, every reference digest, v4.4 policy identifier and hash,
 *     certificate valid at signing time (src/core/sign/verify.ts); its form (XAdES, with a policy) is judged before
 *     anything else, the schema included (signatureFormError);
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
import { parseComprobanteDom, type ParsedComprobante } from '../core/xml/parse-comprobante.js';
import { parseMensajeDom } from '../core/xml/parse-mensaje.js';
import { verifyXadesDocument } from '../core/sign/verify.js';
import type { VerifyReport } from '../core/sign/verify-report.js';
import { parseXmlDocument } from '../core/sign/xml-dom.js';
import { parseClave } from '../core/clave.js';
import { partiesOf } from '../core/parties.js';
import { crParts, parseIsoDateTime } from '../core/dates.js';
import { fechaEmisionItems } from '../core/rules/registry-rules.js';
import { CODIGOS, err, isAccepted, TEXTOS } from './codes.js';
import { lineErrors, sumErrors, totalsErrors } from './figures.js';
import { kindErrors } from './kinds.js';
import type { EmulatorEnvironment, IdRef, ValidationErrorItem } from './store.js';

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
  referencias?: { tipoDoc: string; numero: string; codigo?: string }[];
  /** CondicionVenta, for the references of a later recibo de pago (kinds.ts). */
  condicionVenta?: string;
  /** CodigoActividadEmisor, to register a first-time issuer and to check it against the catalogue. */
  codigoActividadEmisor?: string;
  /** Each line's Detalle, for the fault file's rejections by text (reject-rules.ts). */
  detalles?: string[];
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
  /** Absent when the document did not get as far as XSD validation (not UTF-8, not well-formed, unknown root, a
   * signature of the wrong form). */
  xsd?: XsdRequest;
  /** The signature is not of the form Hacienda asks for (XMLDSig, XAdES-BES): its sentence is the whole answer,
   * before and instead of any schema error (`withXsdErrors`). */
  formaFirma?: true;
}


/**
 * Settles the verdict. The signature's form is judged first: a comprobante whose signature is not XAdES-EPES is
 * answered with that sentence alone, whatever its schema says (`formaFirma`). Otherwise a document that fails its
 * schema is not read any further: Hacienda's answer then lists that one error (-1) and nothing else. Otherwise the
 * document is rejected as soon as one listed item is not a warning (`aviso`).
 */
export function withXsdErrors(analysis: DocumentAnalysis, xsdErrors: ValidationErrorItem[]): ValidationResult {
  const r = analysis.result;
  if (xsdErrors.length > 0 && !analysis.formaFirma) {
    r.errors.splice(0, r.errors.length, ...xsdErrors);
    r.unreadable = true;
  }
  r.accepted = isAccepted(r.errors);
  return r;
}

/**
 * The signature's form, which Hacienda checks before anything else: a comprobante signed with a plain XMLDSig
 * signature (no xades:QualifyingProperties) that also broke the schema was answered "La firma del documento no es
 * XAdES, se obtuvo [ERROR]" alone, without its -1 (real answer, NOTES §6.3). A XAdES signature without a policy
 * (XAdES-BES) fails the same step, the form Hacienda asks for being XAdES-EPES ("La firma del documento no tiene el
 * Policy Id": quoted by a third-party test, not traced, NOTES §6.3): its sentence is answered alone too, an
 * extrapolation of that order. A signature of the right form that does not verify (a digest, the value, the
 * certificate) is not judged here: no answer shows it beside a schema error, so the schema's -1 stays first.
 */
function signatureFormError(report: VerifyReport): ValidationErrorItem | undefined {
  const plain = (mensaje: string): ValidationErrorItem => ({ codigo: 0, mensaje, fila: 0, columna: 0, sinCodigo: true });
  if (report.form === 'XMLDSig') return plain(TEXTOS.firmaNoXades);
  if (report.form === 'XAdES-BES') return plain(TEXTOS.firmaSinPolitica);
  return undefined;
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
    referencias: doc.informacionReferencia.filter((r) => r.numero).map((r) => ({ tipoDoc: r.tipoDocIR, numero: r.numero!, ...(r.codigo ? { codigo: r.codigo } : {}) })),
    detalles: doc.lineas.map((l) => l.detalle),
  };
  if (doc.codigoActividadEmisor) result.codigoActividadEmisor = doc.codigoActividadEmisor;
  if (doc.condicionVenta) result.condicionVenta = doc.condicionVenta;
  if (doc.receptor) {
    result.nombreReceptor = doc.receptor.nombre;
    if (doc.receptor.identificacion) {
      result.tipoIdentificacionReceptor = doc.receptor.identificacion.tipo;
      result.numeroCedulaReceptor = doc.receptor.identificacion.numero;
    }
  }

  // 3-4. Signature and signer
  const { issuer } = partiesOf(doc);
  if (opts.signature !== false) {
    const report = verifyXadesDocument(dom, text, meta.now, { crossCheck: false });
    const forma = signatureFormError(report);
    if (forma) {
      // Not read any further: the sentence alone (signatureFormError), and no XSD run.
      errors.push(forma);
      result.unreadable = true;
      result.accepted = false;
      return { result, formaFirma: true };
    }
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
  errors.push(...lineErrors(doc), ...kindErrors(doc));
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
 * signatures and signatures with other policies (NOTES §3.3, §6.3). A comprobante whose signature is of the wrong
 * form never gets here (signatureFormError answers it alone); a MensajeReceptor lists its form beside the rest.
 */
function signatureErrors(report: VerifyReport): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  const plain = (mensaje: string) => out.push({ codigo: 0, mensaje, fila: 0, columna: 0, sinCodigo: true });
  const forma = signatureFormError(report);
  if (forma) out.push(forma);
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
  // -53, shared with `fecr validate` (core/rules/registry-rules.ts).
  if (fecha) for (const i of fechaEmisionItems(fecha, meta.now, futureMs)) out.push(i.aviso ? { ...err(i.codigo, i.mensaje), aviso: true } : err(i.codigo, i.mensaje));
  const tipo = doc.numeroConsecutivo.slice(8, 10);
  if (tipo !== KINDS[doc.kind].tipoComprobante) {
    out.push(err(CODIGOS.TIPO_COMPROBANTE, `El tipo de comprobante del consecutivo (${tipo}) no corresponde a ${doc.rootName} (${KINDS[doc.kind].tipoComprobante}).`));
  }
  if (issuerNumero !== undefined && stripZeros(meta.emisor.numeroIdentificacion) !== stripZeros(issuerNumero)) {
    out.push(err(CODIGOS.DATOS_ENVIO, `El emisor enviado (${meta.emisor.numeroIdentificacion}) no coincide con el del comprobante (${issuerNumero}).`));
  }
  const recId = partiesOf(doc).counterpart;
  if (meta.receptor && recId && stripZeros(meta.receptor.numeroIdentificacion) !== stripZeros(recId.numero)) {
    out.push(err(CODIGOS.DATOS_ENVIO, `El receptor enviado (${meta.receptor.numeroIdentificacion}) no coincide con el del comprobante (${recId.numero}).`));
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
