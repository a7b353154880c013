/**
 * The checks of a comprobante's lines and figures (analyze.ts, check 6): the rate rules (-45, -505), MedioPagoOtros
 * (-492), PlazoCredito (-58), TotalDesgloseImpuesto (-487); the sums compared exactly against the document's own
 * figures (-46, -52, -54 and the other sums of ResumenFactura); the products recomputed with a tolerance.
 */
import { lineaOfParsed } from '../core/received/figures.js';
import type { ParsedComprobante } from '../core/xml/parse-comprobante.js';
import { computeTotals, compareFigures, type Totals } from '../core/totals.js';
import { dec, type Decimal } from '../core/money.js';
import type { MedioPago, OtroCargo } from '../core/model.js';
import { CODIGOS, err, TEXTOS } from './codes.js';
import type { ValidationErrorItem } from './store.js';

/** -45, -505 (each line's taxes), -492 (MedioPagoOtros), -58 (PlazoCredito), -487 (TotalDesgloseImpuesto). */
export function lineErrors(doc: ParsedComprobante): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  for (const l of doc.lineas) {
    for (const t of l.impuestos) {
      if (t.codigo !== '01') continue;
      const sinTarifa = t.tarifa === undefined || t.tarifa.trim() === '';
      // -45: an IVA without Tarifa (real sandbox answer, NOTES §6.3).
      if (sinTarifa) out.push(err(CODIGOS.TARIFA_OBLIGATORIA, TEXTOS.tarifa45(l.numeroLinea)));
      // -505: CodigoTarifaIVA 10 (exento) whose Tarifa is not 0 (real sandbox answer, NOTES §6.3); a missing Tarifa is
      // not 0 either, so it gives -505 after -45 (the order of NOTES §6.3's table; no answer shows both on one line).
      if (t.codigoTarifaIVA === '10' && (sinTarifa || isNonZero(t.tarifa))) out.push(err(CODIGOS.TARIFA_EXENTO, TEXTOS.tarifa505(l.numeroLinea)));
    }
  }
  if (doc.mediosPago.some((m) => m.tipoMedioPago === '99' && !m.medioPagoOtros?.trim())) out.push(err(CODIGOS.MEDIO_PAGO_OTROS, TEXTOS.medioPago492));
  if ((doc.condicionVenta === '02' || doc.condicionVenta === '10') && !doc.plazoCredito?.trim()) out.push(err(CODIGOS.PLAZO_CREDITO, TEXTOS.plazo58));
  // -487 (real sandbox answer, NOTES §6.3) only when there is a tax amount: a line Impuesto whose Monto is not 0.
  // ANEXOS p.53 (TotalDesgloseImpuesto): "obligatoria, cuando existen producto/servicio gravados", checked "en caso de
  // utilizar líneas de detalles con cálculo de impuesto o monto del impuesto"; the sandbox accepted documents whose
  // lines were all exempt (CodigoTarifaIVA 10, Monto 0) without TotalDesgloseImpuesto.
  const montoImpuesto = doc.lineas.some((l) => l.impuestos.some((t) => isNonZero(t.monto)));
  if (montoImpuesto && doc.resumen.totalDesgloseImpuesto.length === 0) out.push(err(CODIGOS.DESGLOSE_IMPUESTO, TEXTOS.desglose487));
  return out;
}

/**
 * The sums, compared exactly against the document's own figures (Hacienda rejected a TotalDescuentos 0.00001 away
 * from the sum of the discounts): -46 per line, -52, -54. The other sums of ResumenFactura are checked the same
 * way under this emulator's own code.
 */
export function sumErrors(doc: ParsedComprobante): ValidationErrorItem[] {
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
  if (doc.kind === 'REP') {
    // A recibo de pago has no classification totals: TotalVenta is the sum of the lines' MontoTotal, and
    // TotalComprobante is TotalVenta (ANEXOS p.52, p.55).
    own('TotalVenta', r.totalVenta, doc.lineas.reduce((a, l) => a.plus(d(l.montoTotal)), dec(0)));
    own('TotalVentaNeta', r.totalVentaNeta, d(r.totalVenta).minus(d(r.totalDescuentos)));
    own('TotalComprobante', r.totalComprobante, d(r.totalVenta));
    return out;
  }
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

/**
 * Recomputes the figures that are products (cantidad × precio, base × tarifa, the exoneración) or sums of products
 * per kind of sale (TotalServGravados …), and lists every one that differs by more than the tolerance: each is a
 * rounded product, and the ANEXOS let the issuer round it (to 5 decimals or fewer). Sums of the document's own
 * figures are compared exactly by sumErrors.
 */
export function totalsErrors(doc: ParsedComprobante, tolerance: string): ValidationErrorItem[] {
  const rep = doc.kind === 'REP';
  if (!rep && doc.lineas.some((l) => l.tieneSurtido || l.cantidad === undefined || l.precioUnitario === undefined)) return [];
  let totals: Totals;
  try {
    const otrosCargos: OtroCargo[] = doc.otrosCargos.map((o) => ({ tipoDocumento: o.tipoDocumento, detalle: o.detalle, montoCargo: dec(o.montoCargo) }));
    const mediosPago: MedioPago[] = doc.mediosPago.map((m) => ({ tipoMedioPago: m.tipoMedioPago ?? '01' }));
    // A recibo de pago's line: MontoTotal is the amount paid (1 × it), SubTotal the base of its IVA (montoPago).
    const lineas = doc.lineas.map((l, i) => (rep ? { ...lineaOfParsed({ ...l, cantidad: '1', precioUnitario: l.montoTotal }, i), montoPago: dec(l.subTotal) } : lineaOfParsed(l, i)));
    totals = computeTotals({ kind: doc.kind, lineas, otrosCargos, mediosPago });
  } catch (e) {
    if (e instanceof RangeError) return []; // e.g. specific taxes the core does not compute: not judged
    return [err(CODIGOS.TOTALES, `No se pudieron recalcular los totales: ${e instanceof Error ? e.message : String(e)}`)];
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
