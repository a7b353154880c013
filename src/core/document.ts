/**
 * Input body → domain model: schema, cross-field rules, clave, totals and the check of the
 * figures the client sent. Returns findings instead of throwing, whatever the input.
 *
 * The figures are judged with the values the other findings call right: a rule that says what an input must be
 * (`tarifa: must be "13" for codigoTarifa 08`) hands that value to the figure check, which computes monto,
 * impuestoNeto, montoTotalLinea and the resumen from it; a rule that calls an input wrong without a right value
 * (a discount above the amount) holds back the figures computed from it, and its finding says they wait for it.
 * So whoever applies exactly what the findings say gets a clean validation on the next run.
 */
import { buildClave, buildConsecutivo, isClave } from './clave.js';
import {
  CODIGOS_DESCUENTO,
  CODIGOS_IMPUESTO,
  CODIGOS_REFERENCIA,
  CODIGOS_REFERENCIA_SOLO_REP,
  CONDICIONES_SIN_MEDIO_PAGO,
  CONDICIONES_VENTA,
  INSTITUCIONES_EXONERACION,
  MEDIOS_PAGO,
  MONEDAS,
  TARIFAS_IVA,
  TIPOS_CODIGO_COMERCIAL,
  TIPOS_DOC_REFERENCIA,
  TIPOS_EXONERACION,
  TIPOS_IDENTIFICACION,
  TIPOS_OTROS_CARGOS,
  TIPOS_TRANSACCION,
  UNIDADES_MEDIDA,
} from './codes.js';
import { parseIsoDateTime, formatCr } from './dates.js';
import { parseReportingUnknownKeys } from './input/findings.js';
import {
  DocumentBody,
  IssuerRecord,
  RESUMEN_TOTAL_FIELDS,
  type ImpuestoInput,
  type LineaInput,
  type ResumenTotalField,
} from './input/schema.js';
import type {
  Comprobante,
  DocumentKind,
  Emisor,
  Finding,
  Impuesto,
  Linea,
  Receptor,
  Telefono,
  Ubicacion,
} from './model.js';
import { TIPO_COMPROBANTE } from './model.js';
import { dec, Decimal, round, ZERO } from './money.js';
import { compareFigures, computeTotals, type Totals } from './totals.js';
import { KIND_OF_TIPO_DOC } from './lifecycle.js';

export interface ParseOptions {
  /** 8 random digits for the clave; callers that send documents must pass a fresh one. */
  securityCode?: string;
}

export type ParseResult =
  | { ok: true; doc: Comprobante; totals: Totals; findings: [] }
  | { ok: false; findings: Finding[]; doc?: Comprobante; totals?: Totals };


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
  const nombre = issuer.nombre ?? issuer.nombreComercial;
  if (nombre.length < 5) findings.push({ path: 'nombreComercial', message: 'must have at least 5 characters when nombre is not given (it is the Emisor Nombre)' });
  return findings.length ? { ok: false, findings } : { ok: true, issuer };
}

/**
 * Parses and checks a document body for an issuer. `issuer` must already be valid (parseIssuer).
 * Every problem is a finding addressed by its path in the body.
 */
export function parseDocument(body: unknown, issuer: IssuerRecord, opts: ParseOptions = {}): ParseResult {
  const parsed = parseReportingUnknownKeys(DocumentBody, body);
  if (!parsed.success) return { ok: false, findings: parsed.findings };
  const b = parsed.data;
  const findings: Finding[] = [...parsed.unknownKeys];
  const add: Add = (path, message) => {
    const f = { path, message };
    findings.push(f);
    return f;
  };
  const judged = new FigureInputs();

  // Kind of document, by tipoDoc and the shape of receptor (spec table).
  const kind = KIND_OF_TIPO_DOC[b.tipoDoc];
  if (!kind) add('tipoDoc', 'must be "1" (factura), "3" (nota de crédito) or "4" (tiquete)');
  const condicionVenta = b.condicionVenta ?? '01';
  if (kind === 'FE' || kind === 'NC') {
    if (b.receptor === '') add('receptor', `must be a receiver object for tipoDoc ${b.tipoDoc} (only a ticket, tipoDoc "4", may have receptor "")`);
    else if (!['01', '02', '03', '04'].includes(b.receptor.identificacion.tipo) && !(kind === 'FE' && condicionVenta === '12' && b.receptor.identificacion.tipo === '05'))
      add('receptor.identificacion.tipo', `must be 01, 02, 03 or 04 for tipoDoc ${b.tipoDoc}; a foreign receiver (05) goes on a ticket, tipoDoc "4"`);
  }
  if (b.receptor !== '') {
    const t = TIPOS_IDENTIFICACION[b.receptor.identificacion.tipo];
    if (!t) add('receptor.identificacion.tipo', 'must be 01, 02, 03, 04, 05 or 06');
    else if (!t.pattern.test(b.receptor.identificacion.numero))
      add('receptor.identificacion.numero', `must be ${t.rule} for identificacion tipo ${b.receptor.identificacion.tipo}`);
    if (b.receptor.telefono !== undefined && !parseTelefono(b.receptor.telefono))
      add('receptor.telefono', 'must be a phone number of 8 to 20 digits');
  }

  // Issuer and dates.
  if (b.emisor !== issuer.identificacion) add('emisor', `must be the issuer's identification (${issuer.identificacion})`);
  const fecha = parseIsoDateTime(b.fechaEmision);
  if (!fecha) add('fechaEmision', 'must be a valid ISO 8601 date-time, e.g. "2026-03-15T10:30:00-06:00"');
  if (!CONDICIONES_VENTA[condicionVenta]) add('condicionVenta', 'is not a known condición de venta (Nota 5)');
  if (condicionVenta === '99' && !b.condicionVentaOtros) add('condicionVentaOtros', 'is required when condicionVenta is "99"');
  if (['02', '10'].includes(condicionVenta) && b.plazoCredito === undefined) add('plazoCredito', 'is required for a sale on credit');

  // Lines.
  b.detalleServicio.forEach((line, i) => checkLine(line, i, kind, add, judged));

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

  // References (required for a credit note).
  const refs = b.informacionReferencia ?? [];
  if (kind === 'NC' && refs.length === 0) add('informacionReferencia', 'is required for a nota de crédito: the referenced document (tipoDocIR, numero, fechaEmision, codigo, razon)');
  refs.forEach((r, i) => {
    const p = `informacionReferencia[${i}]`;
    if (!TIPOS_DOC_REFERENCIA[r.tipoDocIR]) add(`${p}.tipoDocIR`, 'is not a known tipo de documento de referencia (Nota 10)');
    if (r.tipoDocIR === '99' && !r.tipoDocRefOtro) add(`${p}.tipoDocRefOtro`, 'is required when tipoDocIR is "99"');
    if (['01', '02', '03', '04', '09', '11', '12', '15', '19', '20'].includes(r.tipoDocIR) && !isClave(r.numero ?? ''))
      add(`${p}.numero`, `must be the 50-character clave of the referenced document for tipoDocIR ${r.tipoDocIR}`);
    if (r.tipoDocIR !== '13' && !r.numero) add(`${p}.numero`, 'is required');
    if (!parseIsoDateTime(r.fechaEmision)) add(`${p}.fechaEmision`, 'must be a valid ISO 8601 date-time');
    if (kind === 'NC' && r.codigo === undefined) add(`${p}.codigo`, 'is required for a nota de crédito (Nota 9, e.g. "01" anula)');
    if (r.codigo !== undefined && !CODIGOS_REFERENCIA[r.codigo]) add(`${p}.codigo`, 'is not a known código de referencia (Nota 9)');
    else if (r.codigo !== undefined && CODIGOS_REFERENCIA_SOLO_REP.has(r.codigo) && kind !== 'REP')
      add(`${p}.codigo`, `"${r.codigo}" (${CODIGOS_REFERENCIA[r.codigo]}) is only for a recibo electrónico de pago`);
    if (r.codigo === '99' && !r.codigoReferenciaOtro) add(`${p}.codigoReferenciaOtro`, 'is required when codigo is "99"');
    if (kind === 'NC' && !r.razon) add(`${p}.razon`, 'is required for a nota de crédito');
  });

  if (!kind || !fecha) return { ok: false, findings };

  // Model.
  const sucursal = b.sucursal ?? issuer.sucursal;
  const consecutivo = buildConsecutivo({ sucursal, terminal: b.terminal ?? 1, tipoComprobante: TIPO_COMPROBANTE[kind], numero: b.numeroReferencia });
  const situacion = b.situacion ?? '1';
  const clave = buildClave({
    fechaEmision: fecha,
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
    codigoActividadEmisor: b.codigoActividad,
    codigoActividadReceptor: kind === 'TE' ? undefined : b.codigoActividadReceptor,
    fechaEmision: formatCr(fecha),
    emisor: emisorOf(issuer),
    receptor: b.receptor === '' ? undefined : receptorOf(b.receptor),
    condicionVenta,
    condicionVentaOtros: b.condicionVentaOtros,
    plazoCredito: b.plazoCredito,
    lineas: b.detalleServicio.map(lineOf),
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
    informacionReferencia: refs.map((r) => ({
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
    if (findings.length > 0) return { ok: false, findings };
    throw e;
  }
  checkFigures(b, judging, add, judged.classHeld());
  judged.sayHeld();
  if (findings.length > 0) return { ok: false, findings, doc, totals };
  return { ok: true, doc, totals, findings: [] };
}

type Add = (path: string, message: string) => Finding;

/** An input the figures are computed from, called wrong by a rule that cannot say its right value. */
type HeldInput =
  | { line: number; what: 'precioUnitario' | 'descuento' | 'codigoDescuento' | 'clase' }
  | { line: number; tax: number; what: 'tarifa' | 'exoneracion' | 'factorCalculoIVA' }
  | { cargo: number };

/** The resumen totals that depend on how each line counts (gravado, exento, exonerado, no sujeto). */
const CLASS_TOTALS = new Set<ResumenTotalField>([
  'totalServGravados', 'totalServExentos', 'totalServExonerado', 'totalServNoSujeto',
  'totalMercanciasGravadas', 'totalMercanciasExentas', 'totalMercExonerada', 'totalMercNoSujeta',
  'totalGravado', 'totalExento', 'totalExonerado', 'totalNoSujeto',
]);

const IVA_TARIFA_CODES = new Set(['01', '07']);

/**
 * What the rules found about the inputs of the figures: the right rate of an IVA entry whose tarifa does not match
 * its codigoTarifa, and the inputs they call wrong without a right value. `apply` gives the model the figures are
 * judged with: corrected rates, and NaN for every held input, which NaN-propagating arithmetic carries into
 * exactly the figures computed from it (checkFigures skips a NaN figure).
 */
class FigureInputs {
  private readonly rates = new Map<string, Decimal>();
  private readonly held: { input: HeldInput; finding: Finding }[] = [];

  correctRate(line: number, tax: number, rate: Decimal): void {
    this.rates.set(`${line}/${tax}`, rate);
  }

  /** The rate the figures of (line, tax) are computed with: the corrected one, else the body's. */
  rate(line: number, tax: number, sent: string): Decimal {
    return this.rates.get(`${line}/${tax}`) ?? dec(sent);
  }

  hold(finding: Finding, ...inputs: HeldInput[]): void {
    for (const input of inputs) this.held.push({ input, finding });
  }

  isEmpty(): boolean {
    return this.rates.size === 0 && this.held.length === 0;
  }

  /** Whether a line's class is unknown (an IVA code or ivaCobradoFabrica to fix): the class totals wait. */
  classHeld(): boolean {
    return this.held.some(({ input }) => 'what' in input && input.what === 'clase');
  }

  /** Appends to each holding finding that the figures computed from its input wait for it. */
  sayHeld(): void {
    for (const f of new Set(this.held.map((h) => h.finding))) f.message += '; the figures computed from it are checked once it is fixed';
  }

  apply(doc: Comprobante): Comprobante {
    const NAN = new Decimal(NaN);
    const lineas = doc.lineas.map((l) => ({ ...l, descuentos: l.descuentos.map((d) => ({ ...d })), impuestos: l.impuestos.map((t) => ({ ...t })) }));
    const otrosCargos = doc.otrosCargos.map((c) => ({ ...c }));
    for (const [key, rate] of this.rates) {
      const [i, j] = key.split('/').map(Number) as [number, number];
      lineas[i]!.impuestos[j]!.tarifa = rate;
    }
    for (const { input } of this.held) {
      if ('cargo' in input) {
        otrosCargos[input.cargo]!.montoCargo = NAN;
        continue;
      }
      const l = lineas[input.line]!;
      if ('tax' in input) {
        const t = l.impuestos[input.tax]!;
        if (input.what === 'tarifa') t.tarifa = NAN;
        else if (input.what === 'factorCalculoIVA') t.factorCalculoIVA = NAN;
        else if (t.exoneracion) t.exoneracion = { ...t.exoneracion, tarifaExonerada: NAN };
      } else if (input.what === 'precioUnitario') l.precioUnitario = NAN;
      else if (input.what === 'descuento') for (const d of l.descuentos) d.montoDescuento = NAN;
      // A discount code decides whether the IVA is computed on the amount before the discount (Nota 20: 01, 03).
      else if (input.what === 'codigoDescuento') for (const t of l.impuestos) if (IVA_TARIFA_CODES.has(t.codigo)) t.tarifa = NAN;
    }
    return { ...doc, lineas, otrosCargos };
  }
}

function checkLine(line: LineaInput, i: number, kind: DocumentKind | undefined, add: Add, judged: FigureInputs): void {
  const p = `detalleServicio[${i}]`;
  if (line.numeroLinea !== i + 1) add(`${p}.numeroLinea`, `must be ${i + 1}: lines are numbered consecutively from 1`);
  if (!UNIDADES_MEDIDA.has(line.unidadMedida)) add(`${p}.unidadMedida`, `"${line.unidadMedida}" is not a unidad de medida of the v4.4 schema (e.g. "Unid", "Sp", "Os", "Kg")`);
  if (dec(line.precioUnitario).lte(0)) judged.hold(add(`${p}.precioUnitario`, 'must be greater than 0'), { line: i, what: 'precioUnitario' });
  const descuento = dec(line.descuento ?? '0');
  const montoTotal = round(dec(line.cantidad).times(dec(line.precioUnitario)));
  if (descuento.gt(montoTotal)) judged.hold(add(`${p}.descuento`, 'must not exceed cantidad × precioUnitario'), { line: i, what: 'descuento' });
  if (line.codigoDescuento !== undefined && !CODIGOS_DESCUENTO[line.codigoDescuento]) {
    const f = add(`${p}.codigoDescuento`, 'is not a known código de descuento (Nota 20)');
    if (descuento.gt(0)) judged.hold(f, { line: i, what: 'codigoDescuento' });
  }
  if (line.codigoDescuento === '99' && !line.naturalezaDescuento) add(`${p}.naturalezaDescuento`, 'is required when codigoDescuento is "99"');
  if (line.tipoTransaccion !== undefined && !TIPOS_TRANSACCION.has(line.tipoTransaccion)) add(`${p}.tipoTransaccion`, 'is not a known tipo de transacción (Nota 22)');
  if (line.ivaCobradoFabrica !== undefined && !['01', '02'].includes(line.ivaCobradoFabrica))
    judged.hold(add(`${p}.ivaCobradoFabrica`, 'must be "01" or "02"'), { line: i, what: 'clase' });
  line.codigoComercial?.forEach((c, j) => {
    if (!TIPOS_CODIGO_COMERCIAL.has(c.tipo)) add(`${p}.codigoComercial[${j}].tipo`, 'must be 01, 02, 03, 04 or 99');
  });
  line.impuesto.forEach((tax, j) => checkTax(tax, i, j, kind, add, judged));
}

function checkTax(tax: ImpuestoInput, i: number, j: number, kind: DocumentKind | undefined, add: Add, judged: FigureInputs): void {
  const p = `detalleServicio[${i}].impuesto[${j}]`;
  // An IVA code to fix changes the tax and how the line counts in the resumen: those figures wait for it.
  const holdTax = (f: Finding) => judged.hold(f, { line: i, tax: j, what: 'tarifa' }, { line: i, what: 'clase' });
  if (!CODIGOS_IMPUESTO[tax.codigo]) holdTax(add(`${p}.codigo`, 'is not a known código de impuesto (Nota 8; "01" is IVA)'));
  if (['03', '04', '05', '06'].includes(tax.codigo))
    add(`${p}.codigo`, `tax codigo ${tax.codigo} needs DatosImpuestoEspecifico (specific taxes per unit), which fecr does not support yet`);
  if (tax.codigo === '99' && !tax.codigoImpuestoOtro) add(`${p}.codigoImpuestoOtro`, 'is required when codigo is "99"');
  const ncnd = kind === 'NC';
  if (tax.codigo === '01' || tax.codigo === '07') {
    if (tax.codigoTarifa === undefined) holdTax(add(`${p}.codigoTarifa`, `is required for tax codigo ${tax.codigo}`));
    else {
      const t = TARIFAS_IVA[tax.codigoTarifa];
      if (!t) holdTax(add(`${p}.codigoTarifa`, 'is not a known código de tarifa del IVA (Nota 8.1; "08" is 13 %)'));
      else if (t.ncndOnly && !ncnd) holdTax(add(`${p}.codigoTarifa`, `${tax.codigoTarifa} (${t.label}) is only allowed in notas de crédito and débito`));
      else if (tax.codigo === '01' && !dec(tax.tarifa).eq(dec(t.rate))) {
        add(`${p}.tarifa`, `must be "${t.rate}" for codigoTarifa ${tax.codigoTarifa} (${t.label})`);
        judged.correctRate(i, j, dec(t.rate));
      }
    }
  } else if (tax.codigoTarifa !== undefined && !TARIFAS_IVA[tax.codigoTarifa]) {
    add(`${p}.codigoTarifa`, 'is not a known código de tarifa del IVA (Nota 8.1)');
  }
  if (tax.codigo === '08' && tax.factorCalculoIVA === undefined)
    judged.hold(add(`${p}.factorCalculoIVA`, 'is required for tax codigo 08 (bienes usados)'), { line: i, tax: j, what: 'factorCalculoIVA' });
  const ex = tax.exoneracion;
  if (ex) {
    const e = `${p}.exoneracion`;
    const t = TIPOS_EXONERACION[ex.tipoDocumento];
    if (!t) add(`${e}.tipoDocumento`, 'is not a known tipo de documento de exoneración (Nota 10.1)');
    else if (t.ncndOnly && !ncnd) add(`${e}.tipoDocumento`, `${ex.tipoDocumento} (${t.label}) is only allowed in notas de crédito and débito in v4.4`);
    else if (t.requiresArticulo && (ex.articulo === undefined || ex.inciso === undefined))
      add(`${e}.articulo`, `articulo and inciso are required for tipoDocumento ${ex.tipoDocumento}`);
    if (ex.tipoDocumento === '99' && !ex.tipoDocumentoOtro) add(`${e}.tipoDocumentoOtro`, 'is required when tipoDocumento is "99"');
    if (!INSTITUCIONES_EXONERACION[ex.nombreInstitucion]) add(`${e}.nombreInstitucion`, 'is not a known institution code (Nota 23)');
    if (ex.nombreInstitucion === '99' && !ex.nombreInstitucionOtros) add(`${e}.nombreInstitucionOtros`, 'is required when nombreInstitucion is "99"');
    if (!parseIsoDateTime(ex.fechaEmision)) add(`${e}.fechaEmision`, 'must be a valid ISO 8601 date-time');
    const pct = dec(ex.porcentajeExoneracion);
    const rate = judged.rate(i, j, tax.tarifa);
    const held = (f: Finding) => judged.hold(f, { line: i, tax: j, what: 'exoneracion' });
    if (pct.lte(0)) held(add(`${e}.porcentajeExoneracion`, 'must be greater than 0'));
    else if (pct.gt(rate)) held(add(`${e}.porcentajeExoneracion`, `must not exceed the tax rate (${rate.toFixed()})`));
    else if (pct.decimalPlaces() > 2) held(add(`${e}.porcentajeExoneracion`, 'must have at most 2 decimals'));
  }
}

/**
 * The figures the client sent against `totals`, computed from the inputs the rules call right. A NaN figure is
 * computed from an input held back by a rule, and so are the class totals when `classHeld`: not judged yet.
 */
function checkFigures(b: DocumentBody, totals: Totals, add: Add, classHeld: boolean): void {
  const cmp = (path: string, sent: string | number | undefined, ours: Decimal, what: string) => {
    if (sent === undefined || ours.isNaN()) return;
    const f = compareFigures(path, ours, sent);
    if (f) add(path, `is ${dec(sent).toFixed()} but ${what} is ${ours.toFixed(5)}`);
  };
  b.detalleServicio.forEach((line, i) => {
    const t = totals.lineas[i]!;
    const p = `detalleServicio[${i}]`;
    cmp(`${p}.subTotal`, line.subTotal, t.montoTotal, 'cantidad × precioUnitario');
    cmp(`${p}.descuento`, line.descuento, t.totalDescuentos, 'the discount');
    cmp(`${p}.montoTotal`, line.montoTotal, t.subTotal, 'subTotal − descuento');
    line.impuesto.forEach((tax, j) => cmp(`${p}.impuesto[${j}].monto`, tax.monto, t.impuestos[j]!.monto, 'the tax by the ANEXOS formula'));
    cmp(`${p}.impuestoNeto`, line.impuestoNeto, t.impuestoNeto, 'the net tax (monto − exoneración)');
    cmp(`${p}.montoTotalLinea`, line.montoTotalLinea, t.montoTotalLinea, 'montoTotal + impuestoNeto');
  });
  const r = b.resumenFactura;
  for (const field of RESUMEN_TOTAL_FIELDS) {
    if (classHeld && CLASS_TOTALS.has(field)) continue;
    cmp(`resumenFactura.${field}`, r[field], totals.resumen[field], `the computed ${field}`);
  }
  const medios = r.mediosPago ?? [];
  if (medios.length > 1 && medios.every((m) => m.totalMedioPago !== undefined)) {
    const paid = medios.reduce((acc, m) => acc.plus(dec(m.totalMedioPago!)), ZERO);
    cmp('resumenFactura.mediosPago', paid.toFixed(), totals.resumen.totalComprobante, 'totalComprobante; the payment methods must add up to it');
  }
}

function lineOf(line: LineaInput): Linea {
  const descuento = dec(line.descuento ?? '0');
  return {
    numeroLinea: line.numeroLinea,
    codigoCABYS: line.codigo,
    codigoComercial: line.codigoComercial ?? [],
    cantidad: dec(line.cantidad),
    unidadMedida: line.unidadMedida,
    unidadMedidaComercial: line.unidadMedidaComercial,
    tipoTransaccion: line.tipoTransaccion,
    detalle: line.detalle,
    precioUnitario: dec(line.precioUnitario),
    descuentos: descuento.gt(0)
      ? [{ montoDescuento: descuento, codigoDescuento: line.codigoDescuento ?? '07', naturalezaDescuento: line.naturalezaDescuento }]
      : [],
    ivaCobradoFabrica: line.ivaCobradoFabrica,
    impuestos: line.impuesto.map(taxOf),
  };
}

function taxOf(tax: ImpuestoInput): Impuesto {
  const ex = tax.exoneracion;
  return {
    codigo: tax.codigo,
    codigoImpuestoOtro: tax.codigoImpuestoOtro,
    codigoTarifaIVA: tax.codigoTarifa,
    tarifa: dec(tax.tarifa),
    factorCalculoIVA: tax.factorCalculoIVA === undefined ? undefined : dec(tax.factorCalculoIVA),
    exoneracion: ex && {
      tipoDocumento: ex.tipoDocumento,
      tipoDocumentoOtro: ex.tipoDocumentoOtro,
      numeroDocumento: ex.numeroDocumento,
      articulo: ex.articulo === undefined ? undefined : String(ex.articulo),
      inciso: ex.inciso === undefined ? undefined : String(ex.inciso),
      nombreInstitucion: ex.nombreInstitucion,
      nombreInstitucionOtros: ex.nombreInstitucionOtros,
      fechaEmision: crDateTimeOr(ex.fechaEmision),
      tarifaExonerada: dec(ex.porcentajeExoneracion),
    },
  };
}

function emisorOf(issuer: IssuerRecord): Emisor {
  return {
    nombre: issuer.nombre ?? issuer.nombreComercial,
    identificacion: { tipo: issuer.tipoIdentificacion, numero: issuer.identificacion },
    nombreComercial: issuer.nombreComercial,
    ubicacion: ubicacionOf(issuer.ubicacion),
    telefono: parseTelefono(issuer.telefono) ?? undefined,
    correoElectronico: [issuer.correoElectronico],
  };
}

function receptorOf(r: Exclude<DocumentBody['receptor'], ''>): Receptor {
  return {
    nombre: r.nombre,
    identificacion: r.identificacion,
    nombreComercial: r.nombreComercial,
    ubicacion: r.ubicacion && ubicacionOf(r.ubicacion),
    otrasSenasExtranjero: r.otrasSenasExtranjero,
    telefono: r.telefono === undefined ? undefined : (parseTelefono(r.telefono) ?? undefined),
    correoElectronico: r.correoElectronico,
  };
}

function ubicacionOf(u: { provincia: string; canton: string; distrito: string; barrio?: string; direccion: string }): Ubicacion {
  // v4.4 Barrio is free text of 5-50 characters; a 2-digit barrio code does not fit and is left out.
  const barrio = u.barrio && u.barrio.length >= 5 ? u.barrio : undefined;
  return { provincia: u.provincia, canton: u.canton, distrito: u.distrito, barrio, otrasSenas: u.direccion };
}

/** The Costa Rica xs:dateTime of a text, or the text itself when invalid (a finding already says so). */
function crDateTimeOr(text: string): string {
  const d = parseIsoDateTime(text);
  return d ? formatCr(d) : text;
}

/** "+506 2222-3333", "22223333", "50622223333" → {506, 22223333}; null when not a phone number. */
export function parseTelefono(text: string): Telefono | null {
  const digits = text.replace(/[\s\-().]/g, '');
  const m = /^(?:\+(\d{1,3})\s*)?(\d+)$/.exec(digits);
  if (!m) return null;
  let country = m[1];
  let number = m[2]!;
  if (!country && number.length === 11 && number.startsWith('506')) {
    country = '506';
    number = number.slice(3);
  }
  if (number.length < 8 || number.length > 20 || number.startsWith('0')) return null;
  return { codigoPais: (country ?? '506').padStart(3, '0'), numTelefono: number };
}
