/**
 * Totals of a comprobante per the ANEXOS v4.4 formulas (NOTES §7.2-7.3).
 * Pure decimal arithmetic; every figure rounded half-up to 5 decimals.
 */
import type { Comprobante } from './model.js';
import type { Decimal } from './money.js';

/** Figures of one Impuesto entry, aligned with `linea.impuestos[i]`. */
export interface ImpuestoTotals {
  monto: Decimal;
  /** Only when the tax carries an exoneracion. */
  montoExoneracion?: Decimal;
}

export interface LineaTotals {
  /** Cantidad × PrecioUnitario (before discounts). */
  montoTotal: Decimal;
  /** Σ MontoDescuento of the line. */
  totalDescuentos: Decimal;
  /** MontoTotal − Σ MontoDescuento. */
  subTotal: Decimal;
  /** SubTotal + taxes 02, 04, 05, 12 when any tax applies; undefined when the line has no tax. */
  baseImponible?: Decimal;
  impuestos: ImpuestoTotals[];
  impuestoAsumidoEmisorFabrica: Decimal;
  /** Σ (Monto − MontoExoneracion) − ImpuestoAsumidoEmisorFabrica. */
  impuestoNeto: Decimal;
  /** SubTotal + ImpuestoNeto. */
  montoTotalLinea: Decimal;
  /** Goods (CABYS 0-4) or services (5-9). */
  esServicio: boolean;
}

export interface DesgloseImpuesto {
  codigo: string;
  codigoTarifaIVA?: string;
  totalMontoImpuesto: Decimal;
}

export interface ResumenTotals {
  totalServGravados: Decimal;
  totalServExentos: Decimal;
  totalServExonerado: Decimal;
  totalServNoSujeto: Decimal;
  totalMercanciasGravadas: Decimal;
  totalMercanciasExentas: Decimal;
  totalMercExonerada: Decimal;
  totalMercNoSujeta: Decimal;
  totalGravado: Decimal;
  totalExento: Decimal;
  totalExonerado: Decimal;
  totalNoSujeto: Decimal;
  totalVenta: Decimal;
  totalDescuentos: Decimal;
  totalVentaNeta: Decimal;
  /** One entry per (codigo, codigoTarifaIVA) used by the lines, in first-use order. */
  totalDesgloseImpuesto: DesgloseImpuesto[];
  totalImpuesto: Decimal;
  totalImpAsumEmisorFabrica: Decimal;
  totalIVADevuelto: Decimal;
  totalOtrosCargos: Decimal;
  totalComprobante: Decimal;
}

export interface Totals {
  lineas: LineaTotals[];
  resumen: ResumenTotals;
}

export function computeTotals(_doc: Pick<Comprobante, 'lineas' | 'otrosCargos' | 'mediosPago'>): Totals {
  throw new Error('not implemented yet');
}
