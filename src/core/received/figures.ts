/**
 * The figures of a RECEIVED comprobante (the buyer's side, issue 16): its lines read back into the model, the totals
 * recomputed with the ANEXOS formulas (core/totals.ts), every stated figure compared with the recomputed one
 * (tolerance 0.01, as for our own documents), and the IVA broken down by tarifa (what an IVA return needs).
 */
import type { Impuesto, Linea, MedioPago, OtroCargo } from '../model.js';
import { echo } from '../echo.js';
import { dec, money, ZERO, type Decimal } from '../money.js';
import { compareFigures, computeTotals, type Totals } from '../totals.js';
import type { Finding } from '../model.js';
import type { ParsedComprobante, ParsedLinea } from '../xml/parse-comprobante.js';

function optDec(v: string | undefined): Decimal | undefined {
  return v === undefined || v === '' ? undefined : dec(v);
}

/** A parsed line as the model's Linea (what computeTotals takes). Throws on a figure that is not a number. */
export function lineaOfParsed(l: ParsedLinea, i: number): Linea {
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

/** The totals of a parsed comprobante recomputed from its lines, or a finding saying why they cannot be. */
export function recomputeTotals(doc: ParsedComprobante): Totals | Finding {
  try {
    const otrosCargos: OtroCargo[] = doc.otrosCargos.map((o) => ({ tipoDocumento: o.tipoDocumento, detalle: o.detalle, montoCargo: dec(o.montoCargo) }));
    const mediosPago: MedioPago[] = doc.mediosPago.map((m) => ({ tipoMedioPago: m.tipoMedioPago ?? '01' }));
    return computeTotals({ lineas: doc.lineas.map(lineaOfParsed), otrosCargos, mediosPago });
  } catch (e) {
    return { path: 'DetalleServicio', message: `the totals cannot be recomputed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * Every figure the document states that differs from the recomputed one by more than 0.01: each line's MontoTotal,
 * SubTotal, Impuesto/Monto, ImpuestoNeto, MontoTotalLinea, and ResumenFactura's totals. Paths name the XML element.
 */
export function receivedFigureFindings(doc: ParsedComprobante): Finding[] {
  if (doc.lineas.some((l) => l.tieneSurtido)) return [];
  const totals = recomputeTotals(doc);
  if (!('lineas' in totals)) return [totals];
  const out: Finding[] = [];
  const cmp = (path: string, expected: Decimal, actual: string | undefined) => {
    let f: Finding | undefined;
    try {
      f = compareFigures(path, expected, actual ?? '0');
    } catch {
      f = { path, message: `"${echo(String(actual))}" is not an amount` };
    }
    if (f) out.push(f);
  };
  doc.lineas.forEach((l, i) => {
    const t = totals.lineas[i]!;
    const at = `DetalleServicio/LineaDetalle[${l.numeroLinea}]`;
    cmp(`${at}/MontoTotal`, t.montoTotal, l.montoTotal);
    cmp(`${at}/SubTotal`, t.subTotal, l.subTotal);
    l.impuestos.forEach((imp, j) => {
      const ti = t.impuestos[j];
      if (ti) cmp(`${at}/Impuesto[${j + 1}]/Monto`, ti.monto, imp.monto);
    });
    if (l.impuestoNeto !== undefined) cmp(`${at}/ImpuestoNeto`, t.impuestoNeto, l.impuestoNeto);
    cmp(`${at}/MontoTotalLinea`, t.montoTotalLinea, l.montoTotalLinea);
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
    ['TotalVenta', r.totalVenta, s.totalVenta],
    ['TotalDescuentos', r.totalDescuentos, s.totalDescuentos],
    ['TotalVentaNeta', r.totalVentaNeta, s.totalVentaNeta],
    ['TotalImpuesto', r.totalImpuesto, s.totalImpuesto],
    ['TotalOtrosCargos', r.totalOtrosCargos, s.totalOtrosCargos],
    ['TotalComprobante', r.totalComprobante, s.totalComprobante],
  ];
  for (const [name, expected, actual] of pairs) {
    if (actual === undefined && expected.isZero()) continue; // optional elements may be left out when zero
    cmp(`ResumenFactura/${name}`, expected, actual);
  }
  return out;
}

/** The IVA of one tarifa in a document: the taxable base and the tax (net of exoneración), 5-decimal strings. */
export interface IvaPorTarifa {
  codigoTarifaIVA: string;
  tarifa: string;
  base: string;
  impuesto: string;
}

/** The document's IVA (impuesto 01) by CodigoTarifaIVA, from its lines as stated; lines without IVA are left out. */
export function ivaPorTarifa(doc: ParsedComprobante): IvaPorTarifa[] {
  const by = new Map<string, { tarifa: string; base: Decimal; impuesto: Decimal }>();
  for (const l of doc.lineas) {
    for (const t of l.impuestos) {
      if (t.codigo !== '01') continue;
      const key = t.codigoTarifaIVA ?? '??';
      const cur = by.get(key) ?? { tarifa: t.tarifa ?? '', base: ZERO, impuesto: ZERO };
      const base = optDec(l.baseImponible) ?? dec(l.subTotal);
      const neto = dec(t.monto).minus(optDec(t.exoneracion?.montoExoneracion) ?? ZERO);
      by.set(key, { tarifa: cur.tarifa, base: cur.base.plus(base), impuesto: cur.impuesto.plus(neto) });
    }
  }
  return [...by.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([codigoTarifaIVA, v]) => ({ codigoTarifaIVA, tarifa: v.tarifa, base: money(v.base), impuesto: money(v.impuesto) }));
}
