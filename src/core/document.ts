/**
 * Input body → domain model: schema, cross-field rules, clave, totals and the check of the
 * figures the client sent (the line rules in input/line-rules.ts, the figure check in input/figures.ts, the mapping
 * in input/to-model.ts). Returns findings instead of throwing, whatever the input.
 *
 * The figures are judged with the values the other findings call right: a rule that says what an input must be
 * (`tarifa: must be "13" for codigoTarifa 08`) hands that value to the figure check, which computes monto,
 * impuestoNeto, montoTotalLinea and the resumen from it; a rule that calls an input wrong without a right value
 * (a discount above the amount) holds back the figures computed from it, and its finding says they wait for it.
 * So whoever applies exactly what the findings say gets a clean validation on the next run.
 */
import { actividadItems } from './rules/registry-rules.js';
import { buildClave, buildConsecutivo } from './clave.js';
import {
  CONDICIONES_SIN_MEDIO_PAGO,
  MEDIOS_PAGO,
  MONEDAS,
  TIPOS_IDENTIFICACION,
  TIPOS_OTROS_CARGOS,
} from './codes.js';
import { parseIsoDateTime, formatCr } from './dates.js';
import { checkFigures, FigureInputs, type Add } from './input/figures.js';
import { parseReportingUnknownKeys } from './input/findings.js';
import { Held, orderFindings, parseHolding } from './input/projection.js';
import { checkKindFields, checkParties, checkReferences, TIPO_DOC_RULE } from './input/kind-rules.js';
import { checkLine, checkTax } from './input/line-rules.js';
import { DocumentBody, IssuerRecord, RepDocumentBody, type ProveedorInput } from './input/schema.js';
import { crDateTimeOr, emisorOf, issuerAsReceptor, lineOf, parseTelefono, proveedorOf, receptorOf, repLineOf } from './input/to-model.js';
import type { Comprobante, Finding } from './model.js';
import { TIPO_COMPROBANTE } from './model.js';
import { dec, Decimal } from './money.js';
import { computeTotals, type Totals } from './totals.js';
import { KIND_OF_TIPO_DOC } from './lifecycle.js';

export { parseTelefono } from './input/to-model.js';

export interface ParseOptions {
  /** 8 random digits for the clave; callers that send documents must pass a fresh one. */
  securityCode?: string;
}

export type ParseResult =
  | { ok: true; doc: Comprobante; totals: Totals; findings: [] }
  | {
      ok: false;
      findings: Finding[];
      /** The model, for the checks of what parsed (e.g. Hacienda's catalogues); a stand-in at the `held` paths. */
      doc?: Comprobante;
      /** The totals, when no part is held. */
      totals?: Totals;
      /** Paths of the body the model has no real value for: a check of `doc` there is not to be reported. */
      held?: string[];
    };


/** Validates an issuer record (spec registration shape) and returns findings or the parsed record. */
export function parseIssuer(input: unknown): { ok: true; issuer: IssuerRecord } | { ok: false; findings: Finding[] } {
  const r = parseReportingUnknownKeys(IssuerRecord, input);
  if (!r.success) return { ok: false, findings: r.findings };
  const findings: Finding[] = [...r.unknownKeys];
  const issuer = r.data;
  const tipo = TIPOS_IDENTIFICACION[issuer.tipoIdentificacion];
  if (tipo && !tipo.pattern.test(issuer.identificacion)) {
    findings.push({ path: 'identificacion', message: `must be ${tipo.rule} for tipoIdentificacion ${Number(issuer.tipoIdentificacion)}` });
  }
  if (!parseTelefono(issuer.telefono)) findings.push({ path: 'telefono', message: 'must be a phone number of 8 to 20 digits' });
  // An issuer registered with a code Hacienda refuses (-408) would have every document rejected: refused here.
  for (const i of actividadItems(issuer.codigoActividad)) if (!i.aviso) findings.push({ path: 'codigoActividad', message: `${i.codigo} ${i.mensaje}` });
  const nombre = issuer.nombre ?? issuer.nombreComercial;
  if (nombre.length < 5) findings.push({ path: 'nombreComercial', message: 'must have at least 5 characters when nombre is not given (it is the Emisor Nombre)' });
  return findings.length ? { ok: false, findings } : { ok: true, issuer };
}

/**
 * Parses and checks a document body for an issuer. `issuer` must already be valid (parseIssuer).
 * Every problem is a finding addressed by its path in the body.
 */
/** The schema of a body: a recibo de pago's (tipoDoc "10") has payment lines of its own shape. */
export function bodySchemaFor(body: unknown): typeof DocumentBody | typeof RepDocumentBody {
  if (body === null || typeof body !== 'object') return DocumentBody;
  const t = (body as { tipoDoc?: unknown }).tipoDoc;
  const kind = typeof t === 'string' || typeof t === 'number' ? KIND_OF_TIPO_DOC[String(t).trim()] : undefined;
  if (kind) return kind === 'REP' ? RepDocumentBody : DocumentBody;
  // An unknown tipoDoc: judge the lines by their shape (a recibo de pago's payment lines have neither codigo nor
  // cantidad), so a REP body with a mistyped tipoDoc gets one finding, at tipoDoc, not one per line field.
  const lines = (body as { detalleServicio?: unknown }).detalleServicio;
  const first: unknown = Array.isArray(lines) ? lines[0] : undefined;
  const paymentLine = first !== null && typeof first === 'object' && !('codigo' in first) && !('cantidad' in first) && 'subTotal' in first;
  return paymentLine ? RepDocumentBody : DocumentBody;
}

/**
 * Every finding of a body in one run: the schema's, and the rules' and figures' of the parts that parsed (a part that
 * did not is held, input/projection.ts: what would follow from it is not reported). Ordered by path, without repeats.
 */
export function parseDocument(body: unknown, issuer: IssuerRecord, opts: ParseOptions = {}): ParseResult {
  const schema = bodySchemaFor(body);
  const parsed = parseHolding(schema, body);
  if (!parsed.success) return { ok: false, findings: orderFindings(parsed.findings) };
  const r = judgeDocument(parsed.data, schema, parsed.held, issuer, opts);
  const findings = orderFindings([...parsed.findings, ...r.findings.filter((f) => !parsed.held.covers(f.path))]);
  if (findings.length === 0 && r.doc && r.totals) return { ok: true, doc: r.doc, totals: r.totals, findings: [] };
  // A held part stands in the model as a placeholder: the model is given for the checks of the other parts (`held`
  // says which paths to leave out), its totals not at all.
  const standIns = [...parsed.held.paths(), ...r.standIns];
  return { ok: false, findings, doc: r.doc, totals: standIns.length ? undefined : r.totals, held: standIns };
}

/** The rules and figures of a body that parsed (held parts aside): the findings, and the model when one can be made. */
function judgeDocument(
  b: DocumentBody | RepDocumentBody,
  schema: typeof DocumentBody | typeof RepDocumentBody,
  held: Held,
  issuer: IssuerRecord,
  opts: ParseOptions,
): { findings: Finding[]; doc?: Comprobante; totals?: Totals; standIns: string[] } {
  const findings: Finding[] = [];
  const add: Add = (path, message) => {
    const f = { path, message };
    findings.push(f);
    return f;
  };
  const judged = new FigureInputs();

  // Kind of document, by tipoDoc; who the receptor (or an FEC's proveedor) may be (spec table, ANEXOS Nota 4).
  const kind = KIND_OF_TIPO_DOC[b.tipoDoc];
  if (!kind) add('tipoDoc', TIPO_DOC_RULE);
  const condicionVenta = b.condicionVenta ?? '01';
  checkParties(b, kind, condicionVenta, add);

  // Issuer and dates.
  if (b.emisor !== issuer.identificacion) add('emisor', `must be the issuer's identification (${issuer.identificacion})`);
  const fecha = parseIsoDateTime(b.fechaEmision);
  if (!fecha) add('fechaEmision', 'must be a valid ISO 8601 date-time, e.g. "2026-03-15T10:30:00-06:00"');
  if (condicionVenta === '99' && !b.condicionVentaOtros) add('condicionVentaOtros', 'is required when condicionVenta is "99"');
  if (['02', '10'].includes(condicionVenta) && b.plazoCredito === undefined) add('plazoCredito', 'is required for a sale on credit');

  // Lines, and what only some kinds have (a recibo de pago's lines are payments: kind-rules.ts checks them).
  if (schema !== RepDocumentBody) (b as DocumentBody).detalleServicio.forEach((line, i) => checkLine(line, i, kind, add, judged));
  else (b as RepDocumentBody).detalleServicio.forEach((line, i) => line.impuesto.forEach((tax, j) => checkTax(tax, i, j, kind, add, judged)));
  checkKindFields(b, kind, add);

  // Other charges.
  (b.otrosCargos ?? []).forEach((oc, i) => {
    if (!TIPOS_OTROS_CARGOS[oc.tipoDocumento]) add(`otrosCargos[${i}].tipoDocumento`, 'is not a known tipo de otros cargos (Nota 16)');
    if (oc.tipoDocumento === '99' && !oc.tipoDocumentoOtros) add(`otrosCargos[${i}].tipoDocumentoOtros`, 'is required when tipoDocumento is "99"');
    if (oc.tipoDocumento === '04' && !(oc.nombreTercero && oc.identificacionTercero))
      add(`otrosCargos[${i}].nombreTercero`, 'nombreTercero and identificacionTercero are required for a charge collected for a third party (04)');
    if (dec(oc.montoCargo).lte(0)) judged.hold(add(`otrosCargos[${i}].montoCargo`, 'must be greater than 0'), { cargo: i });
  });

  // Summary: currency and payment.
  const moneda = b.resumenFactura.codigoTipoMoneda;
  if (!MONEDAS.has(moneda.codigoMoneda)) add('resumenFactura.codigoTipoMoneda.codigoMoneda', 'is not a currency code of the v4.4 schema');
  if (moneda.codigoMoneda === 'CRC' && moneda.tipoCambio !== undefined && !dec(moneda.tipoCambio).eq(1))
    add('resumenFactura.codigoTipoMoneda.tipoCambio', 'must be 1 for CRC');
  if (moneda.codigoMoneda !== 'CRC') {
    if (moneda.tipoCambio === undefined) add('resumenFactura.codigoTipoMoneda.tipoCambio', `is required for ${moneda.codigoMoneda} (the BCCR reference selling rate)`);
    else if (dec(moneda.tipoCambio).lte(0)) add('resumenFactura.codigoTipoMoneda.tipoCambio', 'must be greater than 0');
  }
  const medios = b.resumenFactura.mediosPago ?? [];
  if (medios.length === 0 && !CONDICIONES_SIN_MEDIO_PAGO.has(condicionVenta))
    add('resumenFactura.mediosPago', `must have at least one payment method for condicionVenta ${condicionVenta}`);
  medios.forEach((m, i) => {
    if (!MEDIOS_PAGO[m.tipoMedioPago]) add(`resumenFactura.mediosPago[${i}].tipoMedioPago`, 'is not a known medio de pago (Nota 6)');
    if (m.tipoMedioPago === '99' && !m.medioPagoOtros) add(`resumenFactura.mediosPago[${i}].medioPagoOtros`, 'is required when tipoMedioPago is "99"');
    if (medios.length > 1 && m.totalMedioPago === undefined) add(`resumenFactura.mediosPago[${i}].totalMedioPago`, 'is required when there is more than one payment method');
  });

  // References (required for NC, ND, FEC and REP).
  checkReferences(b, kind, add);

  // Without a kind there is no model (nor figures: a kind decides some); without a valid date or an FEC's proveedor,
  // the model takes a stand-in for them, so that the figures are judged all the same.
  if (!kind) return { findings, standIns: [] };
  const standIns: string[] = [];
  if (!fecha) standIns.push('fechaEmision');
  const fec = kind === 'FEC';
  if (fec && !b.proveedor) standIns.push('proveedor');
  const proveedor = b.proveedor ?? STAND_IN_PROVEEDOR;

  // Model.
  const sucursal = b.sucursal ?? issuer.sucursal;
  const consecutivo = buildConsecutivo({ sucursal, terminal: b.terminal ?? 1, tipoComprobante: TIPO_COMPROBANTE[kind], numero: b.numeroReferencia });
  const situacion = b.situacion ?? '1';
  const clave = buildClave({
    fechaEmision: fecha ?? STAND_IN_FECHA,
    identificacion: issuer.identificacion,
    consecutivo,
    situacion,
    codigoSeguridad: opts.securityCode ?? '00000000',
  });
  const doc: Comprobante = {
    kind,
    clave,
    numeroConsecutivo: consecutivo,
    situacion,
    proveedorSistemas: b.proveedorSistemas ?? issuer.proveedorSistemas ?? issuer.identificacion,
    // An FEC is issued by the buyer: the issuer is its Receptor (with the issuer's activity), the seller its Emisor.
    codigoActividadEmisor: fec ? (proveedor.codigoActividad ?? '') : b.codigoActividad,
    codigoActividadReceptor: fec ? b.codigoActividad : kind === 'TE' || kind === 'FEE' ? undefined : b.codigoActividadReceptor,
    fechaEmision: formatCr(fecha ?? STAND_IN_FECHA),
    emisor: fec ? proveedorOf(proveedor) : emisorOf(issuer),
    receptor: fec ? issuerAsReceptor(issuer) : b.receptor === '' ? undefined : receptorOf(b.receptor),
    condicionVenta,
    condicionVentaOtros: b.condicionVentaOtros,
    plazoCredito: b.plazoCredito,
    lineas: kind === 'REP' ? (b as RepDocumentBody).detalleServicio.map(repLineOf) : (b as DocumentBody).detalleServicio.map(lineOf),
    otrosCargos: (b.otrosCargos ?? []).map((oc) => ({
      tipoDocumento: oc.tipoDocumento,
      tipoDocumentoOtros: oc.tipoDocumentoOtros,
      identificacionTercero: oc.identificacionTercero,
      nombreTercero: oc.nombreTercero,
      detalle: oc.detalle,
      porcentaje: oc.porcentaje === undefined ? undefined : dec(oc.porcentaje),
      montoCargo: dec(oc.montoCargo),
    })),
    moneda: { codigoMoneda: moneda.codigoMoneda, tipoCambio: moneda.tipoCambio === undefined ? new Decimal(1) : dec(moneda.tipoCambio) },
    mediosPago: medios.map((m) => ({
      tipoMedioPago: m.tipoMedioPago,
      medioPagoOtros: m.medioPagoOtros,
      totalMedioPago: m.totalMedioPago === undefined ? undefined : dec(m.totalMedioPago),
    })),
    informacionReferencia: (b.informacionReferencia ?? []).map((r) => ({
      tipoDocIR: r.tipoDocIR,
      tipoDocRefOtro: r.tipoDocRefOtro,
      numero: r.numero,
      fechaEmisionIR: crDateTimeOr(r.fechaEmision),
      codigo: r.codigo,
      codigoReferenciaOtro: r.codigoReferenciaOtro,
      razon: r.razon,
    })),
  };

  // Totals, and the figures the client sent against ours (also when rules failed, so every finding
  // comes back at once; a rule failure that makes the totals impossible is already reported). The
  // figures are judged with the inputs the rules call right (see the top of this file).
  let totals: Totals;
  let judging: Totals;
  try {
    totals = computeTotals(doc);
    judging = judged.isEmpty() ? totals : computeTotals(judged.apply(doc));
  } catch (e) {
    if (findings.length > 0 || !held.isEmpty()) return { findings, standIns };
    throw e;
  }
  checkFigures(b, judging, add, judged.classHeld(), held.resumen);
  judged.sayHeld();
  return { findings, doc, totals, standIns };
}

/** What the model takes for an impossible fechaEmision and an FEC's missing proveedor (both findings already). */
const STAND_IN_FECHA = new Date(Date.UTC(2000, 0, 1, 6));
const STAND_IN_PROVEEDOR: ProveedorInput = { nombre: 'proveedor', identificacion: { tipo: '02', numero: '3101000000' } };
