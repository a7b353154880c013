// Random valid bodies (fast-check) always give findings-free models and XSD-valid v4.4 XML.
// The client figures are computed here independently, with decimal.js and the plain ANEXOS formulas.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { Decimal } from '../src/core/money.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { KINDS } from '../src/core/xml/kinds.js';
import { createXsdValidator, withPlaceholderSignature } from '../src/adapters/xsd/index.js';
import { ISSUER } from './helpers/bodies.js';

const RATES: Record<string, string> = { '01': '0', '02': '1', '03': '2', '04': '4', '08': '13', '09': '0.5', '10': '0', '11': '0' };
const r5 = (d: Decimal) => d.toDecimalPlaces(5, Decimal.ROUND_HALF_UP);

const lineArb = fc.record({
  service: fc.boolean(),
  qty: fc.integer({ min: 1, max: 9_999_999 }).map((n) => new Decimal(n).div(1000)), // up to 3 decimals
  price: fc.integer({ min: 1, max: 99_999_999_999 }).map((n) => new Decimal(n).div(100000)), // up to 5 decimals
  discountShare: fc.integer({ min: 0, max: 100 }),
  tarifa: fc.constantFrom(...Object.keys(RATES)),
  exoneration: fc.option(fc.integer({ min: 1, max: 13 }), { freq: 4 }),
  detalle: fc.string({ minLength: 3, maxLength: 60 }).filter((s) => s.trim().length >= 3 && !/[\u0000-\u001f\uFFFE\uFFFF]/.test(s)),
});

const bodyArb = fc.record({
  kind: fc.constantFrom('1', '3', '4', '4x'),
  lines: fc.array(lineArb, { minLength: 1, maxLength: 12 }),
  usd: fc.boolean(),
  otros: fc.option(fc.integer({ min: 1, max: 100_000_000 }), { freq: 3 }),
  numero: fc.integer({ min: 1, max: 9_999_999_999 }),
});

function toBody(spec: fc.Arbitrary<unknown> extends never ? never : any): Record<string, unknown> {
  const detalle = spec.lines.map((l: any, i: number) => {
    const montoTotal = r5(l.qty.times(l.price));
    const descuento = r5(montoTotal.times(l.discountShare).div(100));
    const sub = montoTotal.minus(descuento);
    const rate = new Decimal(RATES[l.tarifa]!);
    const monto = r5(sub.times(rate).div(100));
    const exoPct = l.exoneration !== null && rate.gt(0) && spec.kind !== '4' && spec.kind !== '4x' ? Decimal.min(rate, l.exoneration) : null;
    const exo = exoPct ? Decimal.min(monto, r5(sub.times(exoPct).div(100))) : new Decimal(0);
    const neto = monto.minus(exo);
    return {
      numeroLinea: i + 1,
      codigo: l.service ? '8311200000000' : '4781400000000',
      detalle: l.detalle,
      cantidad: l.qty.toFixed(),
      unidadMedida: l.service ? 'Sp' : 'Unid',
      precioUnitario: l.price.toFixed(),
      subTotal: montoTotal.toFixed(),
      descuento: descuento.toFixed(),
      montoTotal: sub.toFixed(),
      impuestoNeto: neto.toFixed(),
      montoTotalLinea: sub.plus(neto).toFixed(),
      impuesto: [
        {
          codigo: '01',
          codigoTarifa: l.tarifa,
          tarifa: RATES[l.tarifa],
          monto: monto.toFixed(),
          ...(exoPct
            ? { exoneracion: { tipoDocumento: '04', numeroDocumento: 'AL-00020402-24', nombreInstitucion: '01', fechaEmision: '2024-03-01T00:00:00', porcentajeExoneracion: exoPct.toNumber() } }
            : {}),
        },
      ],
    };
  });
  const receptor =
    spec.kind === '4' ? '' : spec.kind === '4x'
      ? { nombre: 'John Smith', identificacion: { tipo: '05', numero: 'P12345678' } }
      : { nombre: 'MARIA FERNANDA ROJAS SOLANO', identificacion: { tipo: '01', numero: '114560789' } };
  return {
    emisor: ISSUER.identificacion,
    numeroReferencia: spec.numero,
    codigoActividad: '6201.0',
    tipoDoc: spec.kind === '4x' ? '4' : spec.kind,
    folioType: 'INVOICE',
    fechaEmision: '2026-06-30T23:59:59',
    receptor,
    detalleServicio: detalle,
    otrosCargos: spec.otros ? [{ tipoDocumento: '06', detalle: 'Impuesto de servicio', montoCargo: new Decimal(spec.otros).div(100).toFixed(), porcentaje: '10' }] : undefined,
    informacionReferencia:
      spec.kind === '3'
        ? [{ tipoDocIR: '01', numero: '50615032600310112345600100001010000000001100000001', fechaEmision: '2026-03-15T10:30:00', codigo: '01', razon: 'Anula factura' }]
        : undefined,
    resumenFactura: {
      codigoTipoMoneda: spec.usd ? { codigoMoneda: 'USD', tipoCambio: '512.34' } : { codigoMoneda: 'CRC' },
      mediosPago: [{ tipoMedioPago: '01' }],
    },
  };
}

describe('random valid bodies', () => {
  it('always parse without findings and build XSD-valid XML (200 bodies, one xmllint batch per kind)', async () => {
    const built: { kind: keyof typeof KINDS; xml: string; body: unknown }[] = [];
    fc.assert(
      fc.property(bodyArb, (spec) => {
        const body = toBody(spec);
        const r = parseDocument(body, ISSUER);
        if (!r.ok) throw new Error(JSON.stringify(r.findings.slice(0, 3)));
        // Line figures sum to the summary exactly.
        const sumLineTotals = r.totals.lineas.reduce((a, l) => a.plus(l.montoTotalLinea), new Decimal(0));
        expect(r.totals.resumen.totalComprobante.toFixed(5)).toBe(sumLineTotals.plus(r.totals.resumen.totalOtrosCargos).toFixed(5));
        built.push({ kind: r.doc.kind, xml: withPlaceholderSignature(buildComprobanteXml(r.doc, r.totals)), body });
      }),
      { numRuns: 200 },
    );
    const validator = createXsdValidator();
    for (const kind of ['FE', 'NC', 'TE'] as const) {
      const docs = built.filter((b) => b.kind === kind);
      expect(docs.length, kind).toBeGreaterThan(10);
      const results = await validator.validate(docs.map((d) => d.xml), KINDS[kind].schema);
      results.forEach((res, i) => expect(res.errors, JSON.stringify(docs[i]!.body).slice(0, 400)).toEqual([]));
    }
  });
});
