/**
 * The figures a client sent against the ones computed from the inputs the rules call right (see src/core/document.ts):
 * FigureInputs keeps what the rules found about those inputs (a corrected rate, an input held back), and
 * checkFigures compares each figure of the body with ours.
 */
import type { Comprobante, Finding } from '../model.js';
import { dec, Decimal, ZERO } from '../money.js';
import { compareFigures, type Totals } from '../totals.js';
import { RESUMEN_TOTAL_FIELDS, type DocumentBody, type ResumenTotalField } from './schema.js';

/** Records a finding at a body path and returns it. */
export type Add = (path: string, message: string) => Finding;

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
export class FigureInputs {
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

/**
 * The figures the client sent against `totals`, computed from the inputs the rules call right. A NaN figure is
 * computed from an input held back by a rule, and so are the class totals when `classHeld`: not judged yet.
 */
/** What checkFigures reads of a line: the figures of any kind's line (a recibo de pago's has no descuento). */
type FigureLine = Pick<DocumentBody['detalleServicio'][number], 'subTotal' | 'montoTotal' | 'impuesto' | 'impuestoNeto' | 'montoTotalLinea'> & {
  descuento?: string;
};

export function checkFigures(
  b: { detalleServicio: FigureLine[]; resumenFactura: DocumentBody['resumenFactura'] },
  totals: Totals,
  add: Add,
  classHeld: boolean,
  /** A line or a charge did not parse (input/projection.ts): the resumen adds it up, so none of its figures is judged. */
  resumenHeld = false,
): void {
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
  if (resumenHeld) return;
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
