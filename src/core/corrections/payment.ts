/**
 * The recibo electrónico de pago of a payment received against a credit sale (issue 30, `fecr documents payment`).
 * Pure: the REP body for `monto` received (what the buyer paid, IVA included, in the sale's currency).
 *
 * What the ANEXOS v4.4 say of a REP (pp. 34-36, 55): each LineaDetalle is "el pago de un comprobante a crédito para
 * las condiciones ... 08 y 10 de la nota 5"; its Detalle names the payment "indicando al menos el número de cuota";
 * MontoTotal is "el monto a pagar sobre el bien o servicio originalmente facturado sin incluir impuestos"; SubTotal
 * "corresponderá al monto del pago a registrar para el cálculo del IVA respectivo", and the IVA is Tarifa × SubTotal;
 * TotalVenta and TotalComprobante are the sum of the lines' MontoTotal. The REP's CondicionVenta is 09 for a sale 08
 * and 11 for a sale 10 (Nota 5), its reference Codigo 17 "Pago a comprobante electrónico" (Nota 9, 2026).
 *
 * fecr's reading (the ANEXOS give no formula for splitting a payment): the payment covers the sale's lines in
 * proportion, IVA included. With f = monto / TotalComprobante of the sale, each IVA rate of the sale gets one line
 * whose base (MontoTotal = SubTotal, as fixtures/documents/23-rep-credito-90-dias.json) is f × the SubTotal of the
 * sale's lines at that rate, and its IVA that rate × the base; the last line's base is set so that the lines' bases
 * plus IVA come to `monto` (to 0.00001). What a REP counts against the sale's balance is that sum (base + IVA).
 */
import { dec, Decimal, money, round, sum, ZERO } from '../money.js';
import type { ParsedComprobante } from '../xml/parse-comprobante.js';
import { CorrectionRefused, commonOf, tarifaText } from './annul.js';
import { CODIGO_PAGO, REP_CONDICION_FOR_SALE, TIPO_DOC_IR_OF_KIND } from './references.js';

/** The kinds a REP may reference (ANEXOS p.56; core/input/kind-rules.ts): FE, ND, NC, TE and 08 (contingencia). */
const PAYABLE_KINDS = new Set(['FE', 'ND', 'TE']);

interface RateGroup {
  codigoTarifa?: string;
  tarifa: string;
  base: Decimal;
}

export interface PaymentOptions {
  /** What was received, IVA included (decimal text > 0). */
  monto: string;
  /** The REP's FechaEmision (Costa Rica date-time). */
  fechaEmision: string;
  /** TipoMedioPago (Nota 6), default 04 transferencia. */
  medioPago?: string;
  /** The instalment's number (1 for the first REP of the sale). */
  cuota: number;
}

export function paymentBody(sale: ParsedComprobante, o: PaymentOptions): Record<string, unknown> {
  const tipoDocIR = TIPO_DOC_IR_OF_KIND[sale.kind];
  if (!PAYABLE_KINDS.has(sale.kind) || tipoDocIR === undefined) throw new CorrectionRefused(`${sale.clave} is not a sale a recibo de pago can pay (an FE, TE or ND)`);
  const condicion = REP_CONDICION_FOR_SALE[sale.condicionVenta];
  if (condicion === undefined) {
    throw new CorrectionRefused(
      `${sale.clave} has condicionVenta ${sale.condicionVenta}: a recibo de pago pays a sale with condicionVenta 08 (servicios prestados al Estado a crédito) or 10 (venta a crédito en IVA hasta 90 días), ANEXOS Nota 5`,
    );
  }
  if (sale.otrosCargos.length > 0) throw new CorrectionRefused(`${sale.clave} has otros cargos, which a recibo de pago cannot carry: write its body by hand (fecr send)`);
  const groups = rateGroups(sale);
  const total = dec(sale.resumen.totalComprobante);
  const monto = dec(o.monto);
  if (total.lte(0)) throw new CorrectionRefused(`${sale.clave} has TotalComprobante 0: nothing to pay`);
  const f = monto.div(total);
  const bases = groups.map((g) => round(g.base.times(f)));
  // The last line takes what rounding left, so that the bases plus their IVA come to the amount received.
  const last = groups.length - 1;
  const paid = (i: number, b: Decimal) => b.plus(round(b.times(dec(groups[i]!.tarifa)).div(100)));
  const others = sum(bases.slice(0, last).map((b, i) => paid(i, b)));
  const rate = dec(groups[last]!.tarifa).div(100);
  bases[last] = round(monto.minus(others).div(rate.plus(1)));
  if (bases.some((b) => b.lt(0))) throw new CorrectionRefused(`${o.monto} cannot be split over the lines of ${sale.clave}`);
  const consecutivo = sale.numeroConsecutivo;
  const lines = groups
    .map((g, i) => ({ g, base: bases[i]!, i }))
    .filter((x) => x.base.gt(0))
    .map(({ g, base }, n) => {
      const iva = round(base.times(dec(g.tarifa)).div(100));
      const suffix = groups.length > 1 ? ` (IVA ${g.tarifa} %)` : '';
      return {
        numeroLinea: n + 1,
        detalle: `Pago de la cuota ${o.cuota} de la factura ${consecutivo}${suffix}`.slice(0, 200),
        // RepLineaInput: subTotal is the XML's MontoTotal, montoTotal the XML's SubTotal (core/input/schema.ts).
        subTotal: money(base),
        montoTotal: money(base),
        impuesto: [{ codigo: '01', ...(g.codigoTarifa ? { codigoTarifa: g.codigoTarifa } : {}), tarifa: g.tarifa, monto: money(iva) }],
        impuestoNeto: money(iva),
        montoTotalLinea: money(base.plus(iva)),
      };
    });
  if (lines.length === 0) throw new CorrectionRefused(`a payment of ${o.monto} is too small to record`);
  const { condicionVenta: _cv, ...common } = commonOf(sale);
  return {
    ...common,
    tipoDoc: '10',
    fechaEmision: o.fechaEmision,
    condicionVenta: condicion,
    detalleServicio: lines,
    resumenFactura: {
      codigoTipoMoneda: { codigoMoneda: sale.resumen.codigoMoneda, tipoCambio: sale.resumen.tipoCambio },
      mediosPago: [{ tipoMedioPago: o.medioPago ?? '04' }],
    },
    informacionReferencia: [{ tipoDocIR, numero: sale.clave, fechaEmision: sale.fechaEmision, codigo: CODIGO_PAGO, razon: `Pago de la cuota ${o.cuota}` }],
  };
}

/** The sale's lines by IVA rate: only IVA (01) without exoneración is split here; anything else is refused. */
function rateGroups(sale: ParsedComprobante): RateGroup[] {
  const groups = new Map<string, RateGroup>();
  for (const l of sale.lineas) {
    const taxes = l.impuestos;
    if (taxes.length !== 1 || taxes[0]!.codigo !== '01' || taxes[0]!.exoneracion) {
      throw new CorrectionRefused(`${sale.clave}: line ${l.numeroLinea} has taxes other than one IVA without exoneración; write the recibo de pago by hand (fecr send)`);
    }
    const t = taxes[0]!;
    const tarifa = tarifaText(t.tarifa ?? '0');
    const key = `${t.codigoTarifaIVA ?? ''}|${tarifa}`;
    const g = groups.get(key) ?? { codigoTarifa: t.codigoTarifaIVA, tarifa, base: ZERO };
    g.base = g.base.plus(dec(l.subTotal));
    groups.set(key, g);
  }
  if (groups.size === 0) throw new CorrectionRefused(`${sale.clave} has no lines to pay`);
  return [...groups.values()];
}
