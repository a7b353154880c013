/**
 * Completion (issue 27): a body may give only what a person decides (quantities, prices, discounts, tax codes and
 * rates, exoneraciones, otros cargos, payment) and get every figure computed from it with the one totals module
 * (../totals.ts, the ANEXOS formulas in decimal.js, 5 decimals half-up): a line's `subTotal` (cantidad ×
 * precioUnitario), `montoTotal` (subTotal − descuento; a recibo de pago's payment base: its `subTotal` when not given),
 * `impuesto[].monto`, `impuestoNeto`, `montoTotalLinea`; the resumen's totals; `totalMedioPago` of a lone payment
 * method. Bookkeeping is filled too: `numeroLinea` (the line's place), `folioType` ("INVOICE"), and an IVA entry's
 * `tarifa` from its `codigoTarifa` (Nota 8.1). A value that is given is kept as it is: the figure check
 * (./figures.ts) judges it as ever.
 *
 * The figures are computed with the rate of an IVA entry's codigoTarifa, the one the rules call right when the given
 * tarifa does not fit it: that rule's finding alone then says what to fix (the batch CSV did so first; it now builds
 * decision bodies and completes them here).
 *
 * Completion runs on the raw body, before the schema. A line whose figures cannot be computed (an input that fails
 * its schema, a tax fecr does not compute, a discount above the amount) gets a stand-in "0" for each figure it lacks,
 * so that no "is required" adds to what is wrong: such a line fails its schema or a rule on its own, and a line that
 * fails is held (./projection.ts) or its figures wait for the rule's input (./figures.ts), so a stand-in is never
 * judged. `incomplete` names those lines, for `fecr complete`, which prints no stand-in.
 */
import { z } from 'zod';
import { TARIFAS_IVA } from '../codes.js';
import { bodySchemaFor } from '../document.js';
import { KIND_OF_TIPO_DOC } from '../lifecycle.js';
import type { Linea } from '../model.js';
import { dec, Decimal, money } from '../money.js';
import { computeTotals, type LineaTotals, type ResumenTotals } from '../totals.js';
import { leafIssues, withoutKeys } from './findings.js';
import {
  DocumentBody,
  ImpuestoInput,
  LineaInput,
  MoneyString,
  NumberLike,
  OtroCargoInput,
  RepLineaInput,
  RESUMEN_TOTAL_FIELDS,
  ResumenInput,
  type ResumenTotalField,
} from './schema.js';
import { lineOf, repLineOf } from './to-model.js';

export interface Completion {
  /** The body with every figure it lacked that could be computed (and, with `standIns`, "0" for the others). */
  body: unknown;
  /** Lines whose figures could not all be computed (`detalleServicio[1]`), and `resumenFactura` when its totals could not. */
  incomplete: string[];
}

type Obj = Record<string, unknown>;

/** The figures of a body: optional in a decision body. */
const TaxDecisions = ImpuestoInput.extend({ monto: MoneyString.optional() });
const taxes = z.array(TaxDecisions).min(1).max(1000);
const LineDecisions = LineaInput.extend({
  subTotal: MoneyString.optional(),
  montoTotal: MoneyString.optional(),
  impuestoNeto: NumberLike.optional(),
  montoTotalLinea: NumberLike.optional(),
  impuesto: taxes,
});
const RepLineDecisions = RepLineaInput.extend({
  montoTotal: MoneyString.optional(),
  impuestoNeto: NumberLike.optional(),
  montoTotalLinea: NumberLike.optional(),
  impuesto: taxes,
});

/** Resumen totals a completed body always carries; the others only when they are not 0 (as the batch CSV wrote them). */
const ALWAYS: ReadonlySet<ResumenTotalField> = new Set(['totalVenta', 'totalDescuentos', 'totalVentaNeta', 'totalImpuesto', 'totalComprobante']);
/** Totals fecr does not compute from a body (always 0 here): not written. */
const NEVER: ReadonlySet<ResumenTotalField> = new Set(['totalIVADevuelto', 'totalImpAsumEmisorFabrica']);
const IVA_RATE_CODES = new Set(['01', '07']);

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const code2 = (v: unknown): string | undefined => (typeof v === 'string' || typeof v === 'number' ? String(v).trim().padStart(2, '0') : undefined);

/**
 * The body with its figures computed where it lacks them. `standIns`: a figure that cannot be computed is "0" (what
 * the data flow wants, see the top of this file); without it, left out (what `fecr complete` prints). Never throws.
 */
export function completeBody(body: unknown, opts: { standIns?: boolean } = {}): Completion {
  if (!isObj(body) || !Array.isArray(body.detalleServicio)) return { body, incomplete: [] };
  try {
    return complete(body, opts.standIns === true);
  } catch {
    // Completion only ever adds what it computed; should it fail on an input nobody foresaw, the schema judges the body as sent.
    return { body, incomplete: [] };
  }
}

/** The body a validation, a build or a send judges: completed, a stand-in for each figure that cannot be computed. */
export function completedInput(body: unknown): unknown {
  return completeBody(body, { standIns: true }).body;
}

function complete(body: Obj, standIns: boolean): Completion {
  const rep = bodySchemaFor(body) !== DocumentBody;
  const kind = KIND_OF_TIPO_DOC[String(body.tipoDoc ?? '').trim()];
  const incomplete: string[] = [];
  const lineas: Linea[] = [];
  const detalle = (body.detalleServicio as unknown[]).map((raw, i) => {
    if (!isObj(raw)) {
      incomplete.push(`detalleServicio[${i}]`);
      return raw;
    }
    const line = withDecidedBookkeeping(raw, i, rep);
    const model = modelOf(line, rep);
    let t: LineaTotals | undefined;
    if (model) {
      try {
        t = computeTotals({ kind, lineas: [model], otrosCargos: [], mediosPago: [] }).lineas[0];
        lineas.push(model);
      } catch {
        t = undefined; // a tax fecr does not compute (its rule says so)
      }
    }
    const figures = t ? lineFigures(t, rep) : undefined;
    const filled = fillLine(line, figures, rep, standIns);
    if (!filled.complete) incomplete.push(`detalleServicio[${i}]`);
    return filled.line;
  });

  const out: Obj = { ...body, detalleServicio: detalle };
  if (body.folioType === undefined) out.folioType = 'INVOICE';
  const resumen = isObj(body.resumenFactura) ? body.resumenFactura : undefined;
  const cargos = otrosCargosOf(body.otrosCargos);
  if (resumen && incomplete.length === 0 && cargos) {
    const r = computeTotals({ kind, lineas, otrosCargos: cargos, mediosPago: [] }).resumen;
    out.resumenFactura = completeResumen(resumen, r);
  } else incomplete.push('resumenFactura');
  return { body: ordered(out, Object.keys(DocumentBody.shape)), incomplete };
}

/** A line with its numeroLinea and its IVA entries' tarifa filled when absent. */
function withDecidedBookkeeping(raw: Obj, i: number, rep: boolean): Obj {
  const line: Obj = { ...raw };
  if (line.numeroLinea === undefined) line.numeroLinea = i + 1;
  if (Array.isArray(line.impuesto)) {
    line.impuesto = line.impuesto.map((tax) => {
      if (!isObj(tax) || tax.tarifa !== undefined) return tax;
      const rate = IVA_RATE_CODES.has(code2(tax.codigo) ?? '') ? TARIFAS_IVA[code2(tax.codigoTarifa) ?? '']?.rate : undefined;
      return rate === undefined ? tax : ordered({ ...tax, tarifa: rate }, Object.keys(ImpuestoInput.shape));
    });
  }
  // A recibo de pago's payment base (the XML's SubTotal, the body's montoTotal) is the amount paid unless edited.
  if (rep && line.montoTotal === undefined && line.subTotal !== undefined) line.montoTotal = line.subTotal;
  return line;
}

/** The model of a line's decisions (figures aside), or undefined when they do not parse. */
function modelOf(line: Obj, rep: boolean): Linea | undefined {
  const schema = rep ? RepLineDecisions : LineDecisions;
  let value: unknown = line;
  let parsed = schema.safeParse(value);
  // Unknown keys are dropped by the real parse too (each a finding of its own): the rest is what the line decides.
  for (let tries = 0; !parsed.success && tries < 3; tries++) {
    const leaves = parsed.error.issues.flatMap(leafIssues);
    if (leaves.some((l) => l.code !== 'unrecognized_keys')) return undefined;
    for (const l of leaves) value = withoutKeys(value, l.path.slice(0, -1), l.code === 'unrecognized_keys' ? l.keys : []);
    parsed = schema.safeParse(value);
  }
  if (!parsed.success) return undefined;
  // lineOf and repLineOf read the decisions only, never a figure.
  const model = rep ? repLineOf(parsed.data as RepLineaInput) : lineOf(parsed.data as LineaInput);
  // An IVA entry's figures use the rate of its codigoTarifa (the rules' right value when the tarifa does not fit it).
  model.impuestos.forEach((imp) => {
    const rate = imp.codigo === '01' && imp.codigoTarifaIVA !== undefined ? TARIFAS_IVA[imp.codigoTarifaIVA]?.rate : undefined;
    if (rate !== undefined) imp.tarifa = dec(rate);
  });
  return model;
}

/** A line's figures by body name (a body's subTotal is the XML's MontoTotal, its montoTotal the XML's SubTotal). */
function lineFigures(t: LineaTotals, rep: boolean): { line: Record<string, Decimal>; montos: Decimal[] } {
  const line: Record<string, Decimal> = { impuestoNeto: t.impuestoNeto, montoTotalLinea: t.montoTotalLinea };
  if (!rep) Object.assign(line, { subTotal: t.montoTotal, montoTotal: t.subTotal });
  return { line, montos: t.impuestos.map((i) => i.monto) };
}

/** A figure the body can carry: a non-negative amount of at most 13 integer digits (MoneyString). */
const fits = (d: Decimal | undefined): d is Decimal => d !== undefined && d.isFinite() && !d.isNegative() && d.lt('1e13');

function fillLine(line: Obj, figures: ReturnType<typeof lineFigures> | undefined, rep: boolean, standIns: boolean): { line: Obj; complete: boolean } {
  let complete = figures !== undefined;
  const put = (target: Obj, key: string, value: Decimal | undefined) => {
    if (target[key] !== undefined) return;
    if (fits(value)) target[key] = money(value);
    else {
      complete = false;
      if (standIns) target[key] = '0';
    }
  };
  const out: Obj = { ...line };
  // A recibo de pago's subTotal and montoTotal are decisions (the amount invoiced, the payment's base).
  for (const key of rep ? ['impuestoNeto', 'montoTotalLinea'] : ['subTotal', 'montoTotal', 'impuestoNeto', 'montoTotalLinea']) put(out, key, figures?.line[key]);
  if (Array.isArray(out.impuesto)) {
    out.impuesto = out.impuesto.map((tax, j) => {
      if (!isObj(tax)) return tax;
      const t: Obj = { ...tax };
      put(t, 'monto', figures?.montos[j]);
      return ordered(t, Object.keys(ImpuestoInput.shape));
    });
  }
  return { line: ordered(out, Object.keys(rep ? RepLineaInput.shape : LineaInput.shape)), complete };
}

/** The otros cargos' models, or undefined when one does not parse (its finding comes from the schema). */
function otrosCargosOf(raw: unknown): { montoCargo: Decimal; tipoDocumento: string; detalle: string }[] | undefined {
  if (raw === undefined) return [];
  const parsed = z.array(OtroCargoInput).safeParse(raw);
  if (!parsed.success) return undefined;
  return parsed.data.map((c) => ({ tipoDocumento: c.tipoDocumento, detalle: c.detalle, montoCargo: dec(c.montoCargo) }));
}

function completeResumen(resumen: Obj, r: ResumenTotals): Obj {
  const out: Obj = { ...resumen };
  for (const f of RESUMEN_TOTAL_FIELDS) {
    const v = r[f];
    if (out[f] !== undefined || NEVER.has(f) || !fits(v)) continue;
    if (ALWAYS.has(f) || !v.isZero()) out[f] = money(v);
  }
  const medios = out.mediosPago;
  if (Array.isArray(medios) && medios.length === 1 && isObj(medios[0]) && medios[0].totalMedioPago === undefined && fits(r.totalComprobante))
    out.mediosPago = [{ ...medios[0], totalMedioPago: money(r.totalComprobante) }];
  return ordered(out, Object.keys(ResumenInput.shape));
}

/** The object's keys in the schema's order (the figures where a person would write them), unknown keys last. */
function ordered(obj: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  for (const [k, v] of Object.entries(obj)) if (!(k in out) && v !== undefined) out[k] = v;
  return out;
}
