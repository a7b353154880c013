import { describe, expect, it } from 'vitest';
import { compareFigures, computeTotals, totalsToStrings } from '../src/core/totals.js';
import { dec, money } from '../src/core/money.js';
import type { Impuesto } from '../src/core/model.js';
import { BIEN, IVA13, SERVICIO, cargo, desc, doc, exo, iva } from './totals-builders.js';

const m = money;

describe('computeTotals — line figures', () => {
  it('13 % service: MontoTotal, SubTotal, BaseImponible, Monto, ImpuestoNeto, MontoTotalLinea', () => {
    const t = computeTotals(doc([{ cantidad: '2', precio: '1000' }]));
    const l = t.lineas[0]!;
    expect(m(l.montoTotal)).toBe('2000.00000');
    expect(m(l.subTotal)).toBe('2000.00000');
    expect(m(l.baseImponible!)).toBe('2000.00000');
    expect(m(l.impuestos[0]!.monto)).toBe('260.00000');
    expect(l.impuestos[0]!.montoExoneracion).toBeUndefined();
    expect(m(l.impuestoNeto)).toBe('260.00000');
    expect(m(l.montoTotalLinea)).toBe('2260.00000');
    expect(m(l.impuestoAsumidoEmisorFabrica)).toBe('0.00000');
    expect(l.esServicio).toBe(true);
    expect(l.clase).toBe('gravado');
  });

  it.each([
    ['08', '13', '130.00000'],
    ['04', '4', '40.00000'],
    ['03', '2', '20.00000'],
    ['02', '1', '10.00000'],
    ['09', '0.5', '5.00000'],
    ['01', '0', '0.00000'],
    ['11', '0', '0.00000'],
    ['10', '0', '0.00000'],
  ])('CodigoTarifaIVA %s (Tarifa %s %%) on 1000 → Monto %s', (codigo, tarifa, monto) => {
    const t = computeTotals(doc([{ cabys: BIEN, precio: '1000', impuestos: [iva(codigo, tarifa)] }]));
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe(monto);
    expect(m(t.lineas[0]!.montoTotalLinea)).toBe(m(dec(1000).plus(dec(monto))));
  });

  it('exento (code 10) carries Monto 0 even when a Tarifa is given', () => {
    const t = computeTotals(doc([{ precio: '1000', impuestos: [iva('10', '13')] }]));
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe('0.00000');
    expect(t.lineas[0]!.clase).toBe('exento');
  });

  it('discounts: SubTotal = MontoTotal − Σ MontoDescuento and IVA on SubTotal', () => {
    const t = computeTotals(
      doc([{ cabys: BIEN, cantidad: '3', precio: '15000', descuentos: [desc('4500', '04'), desc('2025.5', '05')] }]),
    );
    const l = t.lineas[0]!;
    expect(m(l.montoTotal)).toBe('45000.00000');
    expect(m(l.totalDescuentos)).toBe('6525.50000');
    expect(m(l.subTotal)).toBe('38474.50000');
    expect(m(l.impuestos[0]!.monto)).toBe('5001.68500'); // 0.13 × 38474.5
    expect(m(l.montoTotalLinea)).toBe('43476.18500');
    expect(m(t.resumen.totalDescuentos)).toBe('6525.50000');
    expect(m(t.resumen.totalVentaNeta)).toBe('38474.50000');
  });

  it('regalía (descuento 01): IVA on MontoTotal, assumed by the issuer', () => {
    const t = computeTotals(doc([{ cabys: BIEN, precio: '500', descuentos: [desc('500', '01')], asumido: '65' }]));
    const l = t.lineas[0]!;
    expect(m(l.subTotal)).toBe('0.00000');
    expect(m(l.impuestos[0]!.monto)).toBe('65.00000');
    expect(m(l.impuestoNeto)).toBe('0.00000');
    expect(m(l.montoTotalLinea)).toBe('0.00000');
    expect(m(t.resumen.totalImpAsumEmisorFabrica)).toBe('65.00000');
    expect(m(t.resumen.totalDesgloseImpuesto[0]!.totalMontoImpuesto)).toBe('0.00000');
    expect(m(t.resumen.totalImpuesto)).toBe('0.00000');
  });

  it('Selectivo de Consumo (02) enters the BaseImponible of the IVA', () => {
    const selectivo: Impuesto = { codigo: '02', tarifa: dec('10') };
    const t = computeTotals(doc([{ cabys: BIEN, precio: '1000', impuestos: [selectivo, IVA13()] }]));
    const l = t.lineas[0]!;
    expect(m(l.baseImponible!)).toBe('1100.00000');
    expect(l.impuestos.map((i) => m(i.monto))).toEqual(['100.00000', '143.00000']);
    expect(m(l.impuestoNeto)).toBe('243.00000');
    expect(m(l.montoTotalLinea)).toBe('1243.00000');
    expect(t.resumen.totalDesgloseImpuesto.map((d) => [d.codigo, d.codigoTarifaIVA, m(d.totalMontoImpuesto)])).toEqual([
      ['02', undefined, '100.00000'],
      ['01', '08', '143.00000'],
    ]);
  });

  it('IVA bienes usados (08): FactorCalculoIVA × SubTotal', () => {
    const usado: Impuesto = { codigo: '08', factorCalculoIVA: dec('0.0442') };
    const t = computeTotals(doc([{ cabys: BIEN, precio: '350000', impuestos: [usado] }]));
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe('15470.00000');
    expect(t.lineas[0]!.clase).toBe('gravado');
    expect(t.resumen.totalDesgloseImpuesto).toEqual([{ codigo: '08', totalMontoImpuesto: dec('15470') }]);
  });

  it('IVA cálculo especial (07) uses Tarifa × BaseImponible', () => {
    const t = computeTotals(doc([{ precio: '2000', impuestos: [{ codigo: '07', codigoTarifaIVA: '08', tarifa: dec(13) }] }]));
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe('260.00000');
  });

  it('specific taxes that need DatosImpuestoEspecifico are refused', () => {
    expect(() => computeTotals(doc([{ precio: '1000', impuestos: [{ codigo: '04', tarifa: dec(0) }] }]))).toThrow(
      /DatosImpuestoEspecifico/,
    );
  });

  it('a line without any tax has no BaseImponible and counts as exento', () => {
    const t = computeTotals(doc([{ precio: '750', impuestos: [] }]));
    expect(t.lineas[0]!.baseImponible).toBeUndefined();
    expect(t.lineas[0]!.clase).toBe('exento');
    expect(m(t.resumen.totalServExentos)).toBe('750.00000');
    expect(t.resumen.totalDesgloseImpuesto).toEqual([]);
    expect(m(t.resumen.totalComprobante)).toBe('750.00000');
  });
});

describe('computeTotals — exoneration', () => {
  it('partial exoneration, 10 of 13 points', () => {
    const t = computeTotals(doc([{ precio: '100000', impuestos: [iva('08', '13', exo('10'))] }]));
    const l = t.lineas[0]!;
    expect(m(l.impuestos[0]!.monto)).toBe('13000.00000');
    expect(m(l.impuestos[0]!.montoExoneracion!)).toBe('10000.00000');
    expect(m(l.impuestoNeto)).toBe('3000.00000');
    expect(m(l.montoTotalLinea)).toBe('103000.00000');
    const r = t.resumen;
    // p = 10/13; exonerado = 100000 × 10/13 = 76923.076923… → 76923.07692; gravado = the rest.
    expect(m(r.totalServExonerado)).toBe('76923.07692');
    expect(m(r.totalServGravados)).toBe('23076.92308');
    expect(m(r.totalVenta)).toBe('100000.00000');
    expect(m(r.totalImpuesto)).toBe('3000.00000');
    expect(m(r.totalDesgloseImpuesto[0]!.totalMontoImpuesto)).toBe('3000.00000');
    expect(m(r.totalComprobante)).toBe('103000.00000');
  });

  it('total exoneration, 13 of 13 points, goods', () => {
    const t = computeTotals(doc([{ cabys: BIEN, cantidad: '2', precio: '285000', impuestos: [iva('08', '13', exo('13'))] }]));
    const r = t.resumen;
    expect(m(t.lineas[0]!.impuestos[0]!.montoExoneracion!)).toBe('74100.00000');
    expect(m(t.lineas[0]!.impuestoNeto)).toBe('0.00000');
    expect(m(r.totalMercExonerada)).toBe('570000.00000');
    expect(m(r.totalMercanciasGravadas)).toBe('0.00000');
    expect(m(r.totalExonerado)).toBe('570000.00000');
    expect(m(r.totalImpuesto)).toBe('0.00000');
    expect(m(r.totalComprobante)).toBe('570000.00000');
  });

  it('exoneration above the rate is capped at Monto (13 points on a 2 % line)', () => {
    const t = computeTotals(doc([{ precio: '480000', impuestos: [iva('03', '2', exo('13'))] }]));
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe('9600.00000');
    expect(m(t.lineas[0]!.impuestos[0]!.montoExoneracion!)).toBe('9600.00000');
    expect(m(t.resumen.totalServExonerado)).toBe('480000.00000');
    expect(m(t.resumen.totalServGravados)).toBe('0.00000');
  });

  it('exonerated and non-exonerated lines share one desglose entry per (Codigo, CodigoTarifaIVA)', () => {
    const t = computeTotals(
      doc([
        { precio: '1000', impuestos: [iva('08', '13', exo('13'))] },
        { precio: '1000' },
        { precio: '1000', impuestos: [iva('08', '13', exo('6.5'))] },
      ]),
    );
    expect(t.resumen.totalDesgloseImpuesto).toHaveLength(1);
    expect(m(t.resumen.totalDesgloseImpuesto[0]!.totalMontoImpuesto)).toBe('195.00000'); // 0 + 130 + 65
    expect(m(t.resumen.totalImpuesto)).toBe('195.00000');
    expect(m(t.resumen.totalServExonerado)).toBe('1500.00000');
    expect(m(t.resumen.totalServGravados)).toBe('1500.00000');
  });
});

describe('computeTotals — summary', () => {
  it('splits goods (CABYS 0-4) and services (5-9) and gravado/exento/no sujeto', () => {
    const t = computeTotals(
      doc([
        { cabys: '0161099020000', precio: '100', impuestos: [iva('02', '1')] }, // goods 1 %
        { cabys: '4522003990000', precio: '200' }, // goods 13 %
        { cabys: '3229100000000', precio: '300', impuestos: [iva('10', '0')] }, // goods exento
        { cabys: '4299901020200', precio: '400', impuestos: [iva('01', '0')] }, // goods no sujeto (01)
        { cabys: '7331200000000', precio: '500' }, // services 13 %
        { cabys: '9291900009900', precio: '600', impuestos: [iva('03', '2')] }, // services 2 %
        { cabys: '8461100000100', precio: '700', impuestos: [iva('11', '0')] }, // services no sujeto (11)
        { cabys: '7211100000200', precio: '800', impuestos: [iva('10', '0')] }, // services exento
      ]),
    );
    const r = t.resumen;
    expect(m(r.totalMercanciasGravadas)).toBe('300.00000');
    expect(m(r.totalMercanciasExentas)).toBe('300.00000');
    expect(m(r.totalMercNoSujeta)).toBe('400.00000');
    expect(m(r.totalServGravados)).toBe('1100.00000');
    expect(m(r.totalServExentos)).toBe('800.00000');
    expect(m(r.totalServNoSujeto)).toBe('700.00000');
    expect(m(r.totalGravado)).toBe('1400.00000');
    expect(m(r.totalExento)).toBe('1100.00000');
    expect(m(r.totalNoSujeto)).toBe('1100.00000');
    expect(m(r.totalExonerado)).toBe('0.00000');
    expect(m(r.totalVenta)).toBe('3600.00000');
    expect(m(r.totalImpuesto)).toBe('104.00000'); // 1 + 26 + 65 + 12
    expect(r.totalDesgloseImpuesto.map((d) => `${d.codigo}/${d.codigoTarifaIVA}=${m(d.totalMontoImpuesto)}`)).toEqual([
      '01/02=1.00000',
      '01/08=91.00000',
      '01/10=0.00000',
      '01/01=0.00000',
      '01/03=12.00000',
      '01/11=0.00000',
    ]);
  });

  it('otros cargos: TotalOtrosCargos = Σ MontoCargo; TotalComprobante adds it', () => {
    const t = computeTotals(doc([{ precio: '200000' }], [cargo('20000', '06'), cargo('3500.125')]));
    expect(m(t.resumen.totalOtrosCargos)).toBe('23500.12500');
    expect(m(t.resumen.totalComprobante)).toBe('249500.12500'); // 200000 + 26000 + 23500.125
    expect(m(t.resumen.totalIVADevuelto)).toBe('0.00000');
  });

  it('IVA cobrado a nivel de fábrica (01) is left out of the gravados but not out of TotalVenta', () => {
    const t = computeTotals(doc([{ cabys: BIEN, precio: '1000', ivaCobradoFabrica: '01', asumido: '130' }, { cabys: BIEN, precio: '500' }]));
    const r = t.resumen;
    expect(m(r.totalMercanciasGravadas)).toBe('500.00000');
    expect(m(r.totalVenta)).toBe('1500.00000');
    expect(m(r.totalImpAsumEmisorFabrica)).toBe('130.00000');
    expect(m(r.totalImpuesto)).toBe('65.00000');
    expect(m(r.totalDesgloseImpuesto[0]!.totalMontoImpuesto)).toBe('65.00000');
    expect(m(r.totalComprobante)).toBe('1565.00000');
  });

  it('ImpuestoAsumidoEmisorFabrica is taken from the IVA entry first in the desglose', () => {
    const selectivo: Impuesto = { codigo: '02', tarifa: dec('10') };
    const t = computeTotals(doc([{ cabys: BIEN, precio: '1000', impuestos: [selectivo, IVA13()], asumido: '150' }]));
    // Monto 02 = 100, Monto 01 = 143; the 150 assumed take all 143 of the IVA and 7 of the selectivo.
    expect(t.resumen.totalDesgloseImpuesto.map((d) => m(d.totalMontoImpuesto))).toEqual(['93.00000', '0.00000']);
    expect(m(t.lineas[0]!.impuestoNeto)).toBe('93.00000');
    expect(m(t.resumen.totalImpuesto)).toBe('93.00000');
  });
});

describe('computeTotals — rounding and precision', () => {
  it('rounds half-up on the 6th decimal: 20.203515 → 20.20352', () => {
    // 1 % of 1.5 × 1346.901 = 1 % of 2020.3515 = 20.203515
    const t = computeTotals(doc([{ cabys: BIEN, cantidad: '1.5', precio: '1346.901', impuestos: [iva('02', '1')] }]));
    expect(m(t.lineas[0]!.montoTotal)).toBe('2020.35150');
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe('20.20352');
  });

  it('rounds down below the half: 20.203514 → 20.20351', () => {
    // 1 % of 2 × 1010.1757 = 1 % of 2020.3514 = 20.203514
    const t = computeTotals(doc([{ cabys: BIEN, cantidad: '2', precio: '1010.1757', impuestos: [iva('02', '1')] }]));
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe('20.20351');
  });

  it('rounds MontoTotal before computing the tax from it', () => {
    // 1.5 × 0.33333 = 0.499995 → 0.50000; IVA 13 % of 0.50000 = 0.065
    const t = computeTotals(doc([{ cantidad: '1.5', precio: '0.33333' }]));
    expect(m(t.lineas[0]!.montoTotal)).toBe('0.50000');
    expect(t.lineas[0]!.montoTotal.toFixed()).toBe('0.5');
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe('0.06500');
  });

  it('summary = sum of the rounded line figures (not the rounding of the exact sum)', () => {
    // Each line: 13 % of 0.11111 = 0.0144443 → 0.01444. Three lines: 0.04332 (exact sum would round to 0.04333).
    const t = computeTotals(doc([{ precio: '0.11111' }, { precio: '0.11111' }, { precio: '0.11111' }]));
    expect(m(t.resumen.totalImpuesto)).toBe('0.04332');
  });

  it('0.1 + 0.2 style amounts add up exactly', () => {
    const t = computeTotals(doc([{ precio: '0.1' }, { precio: '0.2' }], [cargo('0.1'), cargo('0.2')]));
    expect(t.resumen.totalVenta.toFixed()).toBe('0.3');
    expect(t.resumen.totalOtrosCargos.toFixed()).toBe('0.3');
    expect(t.resumen.totalImpuesto.toFixed()).toBe('0.039');
    expect(t.resumen.totalComprobante.toFixed()).toBe('0.639');
    expect(0.1 + 0.2).not.toBe(0.3); // what floats would have given
  });

  it('large prices and 3-decimal quantities without drift', () => {
    // 9999999.99999 × 123.456 = 1234559999.99876544 → 1234559999.99877
    const t = computeTotals(doc([{ cabys: BIEN, cantidad: '123.456', precio: '9999999.99999' }]));
    const l = t.lineas[0]!;
    expect(m(l.montoTotal)).toBe('1234559999.99877');
    // 0.13 × 1234559999.99877 = 160492799.9998401 → 160492799.99984
    expect(m(l.impuestos[0]!.monto)).toBe('160492799.99984');
    expect(m(l.montoTotalLinea)).toBe('1395052799.99861');
    expect(m(t.resumen.totalComprobante)).toBe('1395052799.99861');
  });

  it('keeps the largest DecimalDineroType value (13 integers, 5 decimals) that floats cannot hold', () => {
    const t = computeTotals(doc([{ cabys: BIEN, precio: '9999999999999.99999', impuestos: [iva('10', '0')] }]));
    expect(m(t.resumen.totalComprobante)).toBe('9999999999999.99999');
    expect(String(Number('9999999999999.99999'))).toBe('10000000000000');
  });

  it('rounds where JS floats round the wrong way', () => {
    // 1 % of 2020.3515 is 20.203515 → 20.20352; with floats 2020.3515 * 1 / 100 = 20.203514999… → 20.20351.
    const t = computeTotals(doc([{ cabys: BIEN, precio: '2020.3515', impuestos: [iva('02', '1')] }]));
    expect(m(t.lineas[0]!.impuestos[0]!.monto)).toBe('20.20352');
    expect(((2020.3515 * 1) / 100).toFixed(5)).toBe('20.20351');
  });

  it('every figure carries at most 5 decimals', () => {
    const t = computeTotals(doc([{ cantidad: '7.777', precio: '3.33333', impuestos: [iva('09', '0.5', exo('0.25'))] }]));
    const s = totalsToStrings(t);
    const all = JSON.stringify(s).match(/"\d+\.\d+"/g) ?? [];
    expect(all.length).toBeGreaterThan(10);
    for (const v of [...t.lineas.flatMap((l) => [l.montoTotal, l.subTotal, l.impuestoNeto, l.montoTotalLinea, l.montoExonerado]), ...Object.values(t.resumen).filter((v) => !Array.isArray(v))]) {
      expect((v as ReturnType<typeof dec>).decimalPlaces()).toBeLessThanOrEqual(5);
    }
  });
});

describe('compareFigures', () => {
  it('accepts differences up to 0.01 and reports larger ones with the path', () => {
    expect(compareFigures('resumenFactura.totalVenta', dec('1000.00000'), '1000.01')).toBeUndefined();
    expect(compareFigures('resumenFactura.totalVenta', dec('1000.00000'), 999.99)).toBeUndefined();
    const f = compareFigures('resumenFactura.totalVenta', dec('1000.00000'), '1000.01001');
    expect(f?.path).toBe('resumenFactura.totalVenta');
    expect(f?.message).toMatch(/1000\.00000.*1000\.01001/);
    expect(compareFigures('x', dec('5'), '5.5', '1')).toBeUndefined();
    expect(compareFigures('x', dec('5'), '6.5', '1')).toBeDefined();
  });
});

describe('totalsToStrings', () => {
  it('writes every figure with 5 decimals and keeps the desglose', () => {
    const s = totalsToStrings(computeTotals(doc([{ cabys: SERVICIO, precio: '10', impuestos: [iva('08', '13', exo('13'))] }])));
    expect(s.lineas[0]).toEqual({
      montoTotal: '10.00000',
      subTotal: '10.00000',
      baseImponible: '10.00000',
      impuestos: [{ monto: '1.30000', montoExoneracion: '1.30000' }],
      impuestoNeto: '0.00000',
      montoTotalLinea: '10.00000',
    });
    expect(s.resumen.totalDesgloseImpuesto).toEqual([{ codigo: '01', codigoTarifaIVA: '08', totalMontoImpuesto: '0.00000' }]);
    expect(s.resumen.totalServExonerado).toBe('10.00000');
  });
});
