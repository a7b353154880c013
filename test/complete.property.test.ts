// Issue 27, item 1: a body that gives only what a person decides is completed with every figure, and the figures
// are the ANEXOS v4.4 formulas (5 decimals, half-up). The expected body is computed here, independently, with
// decimal.js and the formulas written out (never src/core/totals.ts): quantities × prices, discounts (a regalía or
// bonificación, 01/03, keeps the IVA on the amount before it), IVA by codigoTarifa (exento 10; no sujeto 01, 11),
// exoneraciones (their share of the gravado), otros cargos, the resumen split by goods and services, and a lone
// payment method's total. Every completed body is then a valid document (parseDocument, no finding).
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { completeBody } from '../src/core/input/complete.js';
import { ISSUER } from './helpers/bodies.js';

const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP });
type Dec = InstanceType<typeof D>;
const r5 = (d: Dec): Dec => d.toDecimalPlaces(5, Decimal.ROUND_HALF_UP);
const s5 = (d: Dec): string => d.toFixed(5, Decimal.ROUND_HALF_UP);
const ZERO = new D(0);

/** Nota 8.1 codes a factura may use, with their rates. */
const TARIFAS: Record<string, string> = { '01': '0', '02': '1', '03': '2', '04': '4', '08': '13', '09': '0.5', '10': '0', '11': '0' };
const GOODS = ['2111100030100', '3563401010401', '4299901020200'];
const SERVICES = ['7331200000000', '8352000000000', '8311200000000'];

interface LineDecisions {
  codigo: string;
  cantidad: string;
  precio: string;
  /** Share of cantidad × precioUnitario given as discount, in thousandths (0: none). */
  descuentoMil: number;
  codigoDescuento: string;
  codigoTarifa: string;
  /** Points of exoneration (≤ the rate), 0: none. */
  exoneracion: number;
}

const decimal = (maxInt: number, places: number) =>
  fc.tuple(fc.integer({ min: 0, max: maxInt }), fc.integer({ min: 0, max: 10 ** places - 1 })).map(([i, f]) => (f === 0 ? String(i) : `${i}.${String(f).padStart(places, '0')}`));

const line: fc.Arbitrary<LineDecisions> = fc.record({
  codigo: fc.constantFrom(...GOODS, ...SERVICES),
  cantidad: fc.oneof(fc.integer({ min: 1, max: 500 }).map(String), decimal(99, 3)).filter((c) => new D(c).gt(0)),
  precio: fc.oneof(decimal(2_000_000, 2), decimal(9_999, 5)).filter((p) => new D(p).gt(0)),
  descuentoMil: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1000 })),
  codigoDescuento: fc.constantFrom('01', '03', '04', '06', '07'),
  codigoTarifa: fc.constantFrom(...Object.keys(TARIFAS)),
  exoneracion: fc.integer({ min: 0, max: 13 }),
});

const doc = fc.record({
  tipoDoc: fc.constantFrom('1', '4'),
  lines: fc.array(line, { minLength: 1, maxLength: 5 }),
  cargos: fc.array(decimal(50_000, 2).filter((m) => new D(m).gt(0)), { maxLength: 2 }),
  medios: fc.integer({ min: 1, max: 2 }),
});

/** The body a person writes: decisions only. */
type Generated = typeof doc extends fc.Arbitrary<infer T> ? T : never;

function decisionsOf(g: Generated): { body: Record<string, any>; lines: Array<{ descuento: Dec; regalia: boolean; exo: number; rate: Dec }> } {
  const meta: Array<{ descuento: Dec; regalia: boolean; exo: number; rate: Dec }> = [];
  const detalleServicio = g.lines.map((l) => {
    const bruto = r5(new D(l.cantidad).times(l.precio));
    const descuento = r5(bruto.times(l.descuentoMil).div(1000));
    const rate = new D(TARIFAS[l.codigoTarifa]!);
    // An exoneration only on a taxed line, and (ANEXOS p.50) never above its rate.
    const exo = rate.gt(0) && rate.isInteger() ? Math.min(l.exoneracion, rate.toNumber()) : 0;
    // The exoneration's share on a regalía is a corner the formulas leave open: not generated together.
    const regalia = descuento.gt(0) && ['01', '03'].includes(l.codigoDescuento) && exo === 0;
    const codigoDescuento = descuento.gt(0) ? (regalia || !['01', '03'].includes(l.codigoDescuento) ? l.codigoDescuento : '07') : undefined;
    meta.push({ descuento, regalia, exo, rate });
    const impuesto: Record<string, unknown> = { codigo: '01', codigoTarifa: l.codigoTarifa, tarifa: TARIFAS[l.codigoTarifa] };
    if (exo > 0)
      impuesto.exoneracion = { tipoDocumento: '04', numeroDocumento: 'AL-00020402-24', nombreInstitucion: '01', fechaEmision: '2024-03-01T00:00:00-06:00', porcentajeExoneracion: exo };
    return {
      codigo: l.codigo,
      detalle: 'Línea generada',
      cantidad: l.cantidad,
      unidadMedida: SERVICES.includes(l.codigo) ? 'Sp' : 'Unid',
      precioUnitario: l.precio,
      ...(descuento.gt(0) ? { descuento: descuento.toFixed(), codigoDescuento } : {}),
      impuesto: [impuesto],
    };
  });
  const body: Record<string, any> = {
    emisor: ISSUER.identificacion,
    numeroReferencia: 1,
    codigoActividad: '6201.0',
    tipoDoc: g.tipoDoc,
    fechaEmision: '2026-03-15T10:30:00-06:00',
    receptor: g.tipoDoc === '4' ? '' : { nombre: 'DISTRIBUIDORA EL CAFETAL LIMITADA', identificacion: { tipo: '02', numero: '3101987654' } },
    detalleServicio,
    resumenFactura: { codigoTipoMoneda: { codigoMoneda: 'CRC' }, mediosPago: g.medios === 1 ? [{ tipoMedioPago: '01' }] : [{ tipoMedioPago: '01' }, { tipoMedioPago: '02' }] },
  };
  if (g.cargos.length) body.otrosCargos = g.cargos.map((m) => ({ tipoDocumento: '06', detalle: 'Servicio', montoCargo: m }));
  return { body, lines: meta };
}

/** The body with every figure, by the ANEXOS formulas (pp.34-55), computed here. */
function expectedOf(body: Record<string, any>, meta: ReturnType<typeof decisionsOf>['lines']): Record<string, any> {
  const sums: Record<string, Dec> = {};
  const add = (k: string, v: Dec) => (sums[k] = (sums[k] ?? ZERO).plus(v));
  const detalleServicio = body.detalleServicio.map((l: any, i: number) => {
    const m = meta[i]!;
    const montoTotal = r5(new D(l.cantidad).times(l.precioUnitario)); // the XML's MontoTotal: the body's subTotal
    const subTotal = montoTotal.minus(m.descuento); // the XML's SubTotal: the body's montoTotal
    const exento = l.impuesto[0].codigoTarifa === '10';
    const base = m.regalia ? montoTotal : subTotal;
    const monto = exento ? ZERO : r5(m.rate.div(100).times(base));
    const exoneracion = m.exo > 0 ? D.min(r5(new D(m.exo).div(100).times(subTotal)), monto) : ZERO;
    const impuestoNeto = monto.minus(exoneracion);
    const servicio = Number(l.codigo[0]) >= 5;
    const clase = exento ? 'exento' : ['01', '11'].includes(l.impuesto[0].codigoTarifa) ? 'noSujeto' : 'gravado';
    const exonerado = clase === 'gravado' && m.exo > 0 ? r5(montoTotal.times(D.min(new D(m.exo).div(m.rate), 1))) : ZERO;
    const group = servicio ? 'serv' : 'merc';
    add(`${group}.${clase}`, clase === 'gravado' ? montoTotal.minus(exonerado) : montoTotal);
    add(`${group}.exonerado`, exonerado);
    add('venta', montoTotal);
    add('descuentos', m.descuento);
    add('impuesto', impuestoNeto);
    return {
      ...l,
      numeroLinea: i + 1,
      subTotal: s5(montoTotal),
      montoTotal: s5(subTotal),
      impuestoNeto: s5(impuestoNeto),
      montoTotalLinea: s5(subTotal.plus(impuestoNeto)),
      impuesto: [{ ...l.impuesto[0], monto: s5(monto) }],
    };
  });
  const s = (k: string) => sums[k] ?? ZERO;
  const otros = (body.otrosCargos ?? []).reduce((a: Dec, c: any) => a.plus(c.montoCargo), ZERO);
  const ventaNeta = s('venta').minus(s('descuentos'));
  const totals: Array<[string, Dec]> = [
    ['totalServGravados', s('serv.gravado')],
    ['totalServExentos', s('serv.exento')],
    ['totalServExonerado', s('serv.exonerado')],
    ['totalServNoSujeto', s('serv.noSujeto')],
    ['totalMercanciasGravadas', s('merc.gravado')],
    ['totalMercanciasExentas', s('merc.exento')],
    ['totalMercExonerada', s('merc.exonerado')],
    ['totalMercNoSujeta', s('merc.noSujeto')],
    ['totalGravado', s('serv.gravado').plus(s('merc.gravado'))],
    ['totalExento', s('serv.exento').plus(s('merc.exento'))],
    ['totalExonerado', s('serv.exonerado').plus(s('merc.exonerado'))],
    ['totalNoSujeto', s('serv.noSujeto').plus(s('merc.noSujeto'))],
    ['totalVenta', s('venta')],
    ['totalDescuentos', s('descuentos')],
    ['totalVentaNeta', ventaNeta],
    ['totalImpuesto', s('impuesto')],
    ['totalOtrosCargos', otros],
    ['totalComprobante', ventaNeta.plus(s('impuesto')).plus(otros)],
  ];
  // A completed body writes the totals that are not 0, and always these five.
  const always = new Set(['totalVenta', 'totalDescuentos', 'totalVentaNeta', 'totalImpuesto', 'totalComprobante']);
  const resumen: Record<string, unknown> = { ...body.resumenFactura };
  for (const [k, v] of totals) if (always.has(k) || !v.isZero()) resumen[k] = s5(v);
  const total = totals.at(-1)![1];
  if (body.resumenFactura.mediosPago.length === 1) resumen.mediosPago = [{ ...body.resumenFactura.mediosPago[0], totalMedioPago: s5(total) }];
  return { ...body, folioType: 'INVOICE', detalleServicio, resumenFactura: resumen };
}

describe('completion = the ANEXOS formulas computed independently', () => {
  it('property: a body of decisions is completed with exactly the figures of the formulas, and is then a valid document', () => {
    fc.assert(
      fc.property(doc, (g) => {
        const { body, lines } = decisionsOf(g);
        // Two payment methods need the amount of each: a decision (here, all paid by the first but 1 colón).
        const c0 = completeBody(body);
        if (g.medios === 2) {
          const total = new D((c0.body as any).resumenFactura.totalComprobante);
          const first = D.max(total.minus(1), ZERO);
          body.resumenFactura.mediosPago = [
            { tipoMedioPago: '01', totalMedioPago: s5(first) },
            { tipoMedioPago: '02', totalMedioPago: s5(total.minus(first)) },
          ];
        }
        const completed = completeBody(body);
        expect(completed.incomplete).toEqual([]);
        expect(completed.body).toEqual(expectedOf(body, lines));
        const parsed = parseDocument(completed.body, ISSUER);
        expect(parsed.findings).toEqual([]);
        // Completing a complete body changes nothing.
        expect(completeBody(completed.body).body).toEqual(completed.body);
      }),
      { numRuns: 300 },
    );
  });
});
