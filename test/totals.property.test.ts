import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { computeTotals, type Totals } from '../src/core/totals.js';
import { Decimal, dec, money, sum } from '../src/core/money.js';
import type { Comprobante, Descuento, Impuesto, Linea, OtroCargo } from '../src/core/model.js';
import { exo } from './totals-builders.js';

type Doc = Pick<Comprobante, 'lineas' | 'otrosCargos' | 'mediosPago'>;

/** CodigoTarifaIVA → Tarifa (Nota 8.1), as generated. */
const TARIFAS: Array<[string, string]> = [
  ['01', '0'],
  ['02', '1'],
  ['03', '2'],
  ['04', '4'],
  ['08', '13'],
  ['09', '0.5'],
  ['10', '0'],
  ['11', '0'],
];

/** A decimal with `places` decimals from an integer number of units. */
const scaled = (min: bigint, max: bigint, places: number) =>
  fc.bigInt({ min, max }).map((n) => new Decimal(n.toString()).div(new Decimal(10).pow(places)));

const cabysArb = fc
  .tuple(fc.integer({ min: 0, max: 9 }), fc.bigInt({ min: 0n, max: 999_999_999_999n }))
  .map(([d, rest]) => `${d}${rest.toString().padStart(12, '0')}`);

const impuestoArb: fc.Arbitrary<Impuesto> = fc
  .tuple(fc.constantFrom(...TARIFAS), fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }))
  .map(([[codigoTarifaIVA, tarifa], exoShare]) => {
    const imp: Impuesto = { codigo: '01', codigoTarifaIVA, tarifa: dec(tarifa) };
    // Exoneration of up to the whole rate, in hundredths of a point (TarifaExonerada is decimal(4,2)).
    if (exoShare !== undefined && dec(tarifa).gt(0)) {
      const points = dec(tarifa).times(exoShare).div(10_000).toDecimalPlaces(2, Decimal.ROUND_DOWN);
      if (points.gt(0)) imp.exoneracion = exo(points.toFixed());
    }
    return imp;
  });

const lineaArb: fc.Arbitrary<Linea> = fc
  .record({
    cabys: cabysArb,
    cantidad: scaled(1n, 99_999_999n, 3), // up to 99 999.999
    precio: scaled(1n, 1_000_000_000_000n, 5), // up to 10 000 000.00000
    descShares: fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 3 }),
    impuesto: impuestoArb,
  })
  .map(({ cabys, cantidad, precio, descShares, impuesto }) => {
    // Discounts as shares (per mille) of what is left, each rounded to 5 decimals: never above MontoTotal.
    let left = cantidad.times(precio).toDecimalPlaces(5, Decimal.ROUND_HALF_UP);
    const descuentos: Descuento[] = descShares.map((s) => {
      const montoDescuento = left.times(s).div(1000).toDecimalPlaces(5, Decimal.ROUND_DOWN);
      left = left.minus(montoDescuento);
      return { montoDescuento, codigoDescuento: '07' };
    });
    return {
      numeroLinea: 1,
      codigoCABYS: cabys,
      codigoComercial: [],
      cantidad,
      unidadMedida: 'Unid',
      detalle: 'Línea generada',
      precioUnitario: precio,
      descuentos,
      impuestos: [impuesto],
    } satisfies Linea;
  });

const cargoArb: fc.Arbitrary<OtroCargo> = scaled(1n, 10_000_000_000n, 5).map((montoCargo) => ({
  tipoDocumento: '99',
  detalle: 'Cargo generado',
  montoCargo,
}));

const docArb: fc.Arbitrary<Doc> = fc
  .record({
    lineas: fc.array(lineaArb, { minLength: 1, maxLength: 12 }),
    otrosCargos: fc.array(cargoArb, { maxLength: 3 }),
  })
  .map(({ lineas, otrosCargos }) => ({
    lineas: lineas.map((l, i) => ({ ...l, numeroLinea: i + 1 })),
    otrosCargos,
    mediosPago: [{ tipoMedioPago: '01' }],
  }));

function figures(t: Totals): Decimal[] {
  const r = t.resumen;
  return [
    ...t.lineas.flatMap((l) => [
      l.montoTotal,
      l.totalDescuentos,
      l.subTotal,
      ...(l.baseImponible ? [l.baseImponible] : []),
      ...l.impuestos.flatMap((i) => [i.monto, ...(i.montoExoneracion ? [i.montoExoneracion] : []), i.neto]),
      l.impuestoNeto,
      l.montoTotalLinea,
      l.montoGravado,
      l.montoExonerado,
    ]),
    ...Object.values(r).filter((v): v is Decimal => v instanceof Decimal),
    ...r.totalDesgloseImpuesto.map((d) => d.totalMontoImpuesto),
  ];
}

const eq = (a: Decimal, b: Decimal) => expect(money(a)).toBe(money(b));

describe('computeTotals — properties', () => {
  it('summary figures are exactly the sums of the line figures', () => {
    fc.assert(
      fc.property(docArb, (d) => {
        const t = computeTotals(d);
        const r = t.resumen;
        eq(r.totalVenta, sum(t.lineas.map((l) => l.montoTotal)));
        eq(r.totalDescuentos, sum(t.lineas.map((l) => l.totalDescuentos)));
        eq(r.totalVentaNeta, sum(t.lineas.map((l) => l.subTotal)));
        eq(r.totalImpuesto, sum(t.lineas.map((l) => l.impuestoNeto)));
        eq(r.totalImpuesto, sum(r.totalDesgloseImpuesto.map((x) => x.totalMontoImpuesto)));
        eq(r.totalOtrosCargos, sum(d.otrosCargos.map((c) => c.montoCargo)));
        eq(r.totalComprobante, r.totalVentaNeta.plus(r.totalImpuesto).plus(r.totalOtrosCargos));
        eq(r.totalComprobante, sum(t.lineas.map((l) => l.montoTotalLinea)).plus(r.totalOtrosCargos));
        // No IVA cobrado a nivel de fábrica is generated, so the four classes cover TotalVenta.
        eq(r.totalVenta, r.totalGravado.plus(r.totalExento).plus(r.totalExonerado).plus(r.totalNoSujeto));
        eq(r.totalGravado, r.totalServGravados.plus(r.totalMercanciasGravadas));
        eq(r.totalExonerado, r.totalServExonerado.plus(r.totalMercExonerada));
        for (const l of t.lineas) {
          eq(l.subTotal, l.montoTotal.minus(l.totalDescuentos));
          eq(l.montoTotalLinea, l.subTotal.plus(l.impuestoNeto));
          eq(l.impuestoNeto, sum(l.impuestos.map((i) => i.monto.minus(i.montoExoneracion ?? 0))).minus(l.impuestoAsumidoEmisorFabrica));
          for (const i of l.impuestos) if (i.montoExoneracion) expect(i.montoExoneracion.lte(i.monto)).toBe(true);
          expect(l.subTotal.gte(0)).toBe(true);
        }
        // One desglose entry per (Codigo, CodigoTarifaIVA) used.
        const used = new Set(d.lineas.flatMap((l) => l.impuestos.map((i) => `${i.codigo}/${i.codigoTarifaIVA}`)));
        expect(new Set(r.totalDesgloseImpuesto.map((x) => `${x.codigo}/${x.codigoTarifaIVA}`))).toEqual(used);
        expect(r.totalDesgloseImpuesto).toHaveLength(used.size);
      }),
      { numRuns: 300 },
    );
  });

  it('every figure has at most 5 decimals', () => {
    fc.assert(
      fc.property(docArb, (d) => {
        for (const f of figures(computeTotals(d))) expect(f.decimalPlaces()).toBeLessThanOrEqual(5);
      }),
      { numRuns: 300 },
    );
  });

  it('summary figures do not depend on the order of the lines', () => {
    fc.assert(
      fc.property(
        docArb.chain((d) => fc.tuple(fc.constant(d), fc.shuffledSubarray(d.lineas, { minLength: d.lineas.length, maxLength: d.lineas.length }))),
        ([d, shuffled]) => {
          const a = computeTotals(d).resumen;
          const b = computeTotals({ ...d, lineas: shuffled }).resumen;
          for (const k of Object.keys(a) as Array<keyof typeof a>) {
            if (k === 'totalDesgloseImpuesto') continue;
            eq(a[k] as Decimal, b[k] as Decimal);
          }
          const byKey = (x: typeof a) =>
            Object.fromEntries(x.totalDesgloseImpuesto.map((e) => [`${e.codigo}/${e.codigoTarifaIVA}`, money(e.totalMontoImpuesto)]));
          expect(byKey(b)).toEqual(byKey(a));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('agrees with an independent integer (BigInt) computation for lines without exoneration', () => {
    // Oracle: amounts in units of 1e-5, quantities in 1e-3, rates in 1e-2 percent; half-up by integer division.
    const roundDiv = (n: bigint, d: bigint) => (n + d / 2n) / d; // n ≥ 0
    const units = (x: Decimal, places: number) => BigInt(x.times(new Decimal(10).pow(places)).toFixed(0));
    fc.assert(
      fc.property(docArb, (d) => {
        const plain = { ...d, lineas: d.lineas.map((l) => ({ ...l, impuestos: l.impuestos.map(({ exoneracion: _e, ...i }) => i) })) };
        const t = computeTotals(plain);
        let totalComprobante = 0n;
        plain.lineas.forEach((l, i) => {
          const montoTotal = roundDiv(units(l.cantidad, 3) * units(l.precioUnitario, 5), 1000n);
          const subTotal = montoTotal - l.descuentos.reduce((a, x) => a + units(x.montoDescuento, 5), 0n);
          const imp = l.impuestos[0]!;
          const monto = imp.codigoTarifaIVA === '10' ? 0n : roundDiv(subTotal * units(imp.tarifa!, 2), 10_000n);
          expect(units(t.lineas[i]!.montoTotal, 5)).toBe(montoTotal);
          expect(units(t.lineas[i]!.impuestos[0]!.monto, 5)).toBe(monto);
          totalComprobante += subTotal + monto;
        });
        totalComprobante += d.otrosCargos.reduce((a, c) => a + units(c.montoCargo, 5), 0n);
        expect(units(t.resumen.totalComprobante, 5)).toBe(totalComprobante);
      }),
      { numRuns: 300 },
    );
  });

  it('the same inputs through JS floats drift where ours do not (targeted example)', () => {
    // Ten lines of 0.1 plus one of 0.2 with 13 % IVA, and 2020.3515 at 1 %.
    const lineas: Linea[] = [
      ...Array.from({ length: 10 }, () => '0.1'),
      '0.2',
    ].map((precio, i) => ({
      numeroLinea: i + 1,
      codigoCABYS: '8311200000000',
      codigoComercial: [],
      cantidad: dec(1),
      unidadMedida: 'Sp',
      detalle: 'Servicio',
      precioUnitario: dec(precio),
      descuentos: [],
      impuestos: [{ codigo: '01', codigoTarifaIVA: '08', tarifa: dec(13) }],
    }));
    lineas.push({ ...lineas[0]!, numeroLinea: 12, codigoCABYS: '2111100030100', precioUnitario: dec('2020.3515'), impuestos: [{ codigo: '01', codigoTarifaIVA: '02', tarifa: dec(1) }] });
    const t = computeTotals({ lineas, otrosCargos: [], mediosPago: [] });
    expect(money(t.resumen.totalVenta)).toBe('2021.55150');
    expect(money(t.lineas[11]!.impuestos[0]!.monto)).toBe('20.20352');

    // Floats: the running sum of ten 0.1 is not 1, and the 1 % of 2020.3515 rounds the wrong way.
    expect(((2020.3515 * 1) / 100).toFixed(5)).toBe('20.20351');
    const floatTen = Array.from({ length: 10 }, () => 0.1).reduce((a, b) => a + b, 0);
    expect(floatTen).not.toBe(1);
    expect(sum(t.lineas.slice(0, 10).map((l) => l.montoTotal)).toFixed()).toBe('1');
  });
});
