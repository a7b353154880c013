// Malformed bodies: each yields findings naming the path; none throws.
import { describe, expect, it } from 'vitest';
import { parseDocument, parseIssuer } from '../src/core/document.js';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { assertAnyFieldAnyValueNeverThrows } from './helpers/fuzz-body.js';

type Body = Record<string, any>;
const cases: [string, (b: Body) => unknown, string | RegExp][] = [
  ['missing emisor', (b) => void delete b.emisor, 'emisor'],
  ['missing numeroReferencia', (b) => void delete b.numeroReferencia, 'numeroReferencia'],
  ['numeroReferencia not an integer', (b) => (b.numeroReferencia = 1.5), 'numeroReferencia'],
  ['numeroReferencia zero', (b) => (b.numeroReferencia = 0), 'numeroReferencia'],
  ['missing codigoActividad', (b) => void delete b.codigoActividad, 'codigoActividad'],
  ['codigoActividad too short', (b) => (b.codigoActividad = '12'), 'codigoActividad'],
  ['unknown tipoDoc', (b) => (b.tipoDoc = '7'), 'tipoDoc'],
  ['folioType wrong', (b) => (b.folioType = 'RECEIPT'), 'folioType'],
  ['fechaEmision not a date', (b) => (b.fechaEmision = '2026-02-30T10:00:00'), 'fechaEmision'],
  ['fechaEmision wrong type', (b) => (b.fechaEmision = 20260315), 'fechaEmision'],
  ['FE with receptor ""', (b) => (b.receptor = ''), 'receptor'],
  ['FE with foreign receptor', (b) => (b.receptor.identificacion = { tipo: '05', numero: 'P1234567' }), 'receptor.identificacion.tipo'],
  ['receptor 51-digit identification', (b) => (b.receptor.identificacion.numero = '1'.repeat(51)), 'receptor.identificacion.numero'],
  ['receptor cédula jurídica with 9 digits', (b) => (b.receptor.identificacion.numero = '400000102'), 'receptor.identificacion.numero'],
  ['receptor nombre missing', (b) => void delete b.receptor.nombre, 'receptor.nombre'],
  ['receptor bad e-mail', (b) => (b.receptor.correoElectronico = 'not-an-email'), 'receptor.correoElectronico'],
  ['receptor a number', (b) => (b.receptor = 42), 'receptor'],
  ['no lines', (b) => (b.detalleServicio = []), 'detalleServicio'],
  ['detalleServicio not an array', (b) => (b.detalleServicio = {}), 'detalleServicio'],
  ['negative quantity', (b) => (b.detalleServicio[0].cantidad = -2), 'detalleServicio[0].cantidad'],
  ['zero quantity', (b) => (b.detalleServicio[1].cantidad = 0), 'detalleServicio[1].cantidad'],
  ['quantity as word', (b) => (b.detalleServicio[0].cantidad = 'two'), 'detalleServicio[0].cantidad'],
  ['price as number', (b) => (b.detalleServicio[0].precioUnitario = 50000), 'detalleServicio[0].precioUnitario'],
  ['price with 6 decimals', (b) => (b.detalleServicio[0].precioUnitario = '1.123456'), 'detalleServicio[0].precioUnitario'],
  ['CABYS of 12 digits', (b) => (b.detalleServicio[1].codigo = '478140000000'), 'detalleServicio[1].codigo'],
  ['unknown unit', (b) => (b.detalleServicio[1].unidadMedida = 'unidades'), 'detalleServicio[1].unidadMedida'],
  ['detalle too short', (b) => (b.detalleServicio[0].detalle = 'ab'), 'detalleServicio[0].detalle'],
  ['lines not consecutive', (b) => (b.detalleServicio[1].numeroLinea = 3), 'detalleServicio[1].numeroLinea'],
  ['no taxes on a line', (b) => (b.detalleServicio[0].impuesto = []), 'detalleServicio[0].impuesto'],
  ['unknown tax code', (b) => (b.detalleServicio[1].impuesto[0].codigo = '55'), 'detalleServicio[1].impuesto[0].codigo'],
  ['unknown tarifa code', (b) => (b.detalleServicio[1].impuesto[0].codigoTarifa = '42'), 'detalleServicio[1].impuesto[0].codigoTarifa'],
  ['tarifa does not match its code', (b) => (b.detalleServicio[0].impuesto[0].tarifa = '4'), 'detalleServicio[0].impuesto[0].tarifa'],
  ['tax monto off by 1', (b) => (b.detalleServicio[0].impuesto[0].monto = '11701.00'), 'detalleServicio[0].impuesto[0].monto'],
  ['subTotal off by 1', (b) => (b.detalleServicio[1].subTotal = '3752.50'), 'detalleServicio[1].subTotal'],
  ['montoTotalLinea off by 1', (b) => (b.detalleServicio[0].montoTotalLinea = 101701), 'detalleServicio[0].montoTotalLinea'],
  ['totalComprobante off by 1', (b) => (b.resumenFactura.totalComprobante = '105940.195'), 'resumenFactura.totalComprobante'],
  ['discount above the amount', (b) => (b.detalleServicio[0].descuento = '100000.01'), 'detalleServicio[0].descuento'],
  ['exoneración above the rate', (b) =>
      (b.detalleServicio[0].impuesto[0].exoneracion = {
        tipoDocumento: '04', numeroDocumento: 'AL-00020402-24', nombreInstitucion: '01', fechaEmision: '2024-03-01T00:00:00', porcentajeExoneracion: 14,
      }), 'detalleServicio[0].impuesto[0].exoneracion.porcentajeExoneracion'],
  ['exoneración of an NC-only type', (b) =>
      (b.detalleServicio[0].impuesto[0].exoneracion = {
        tipoDocumento: '05', numeroDocumento: 'AL-00020402-24', nombreInstitucion: '01', fechaEmision: '2024-03-01T00:00:00', porcentajeExoneracion: 13,
      }), 'detalleServicio[0].impuesto[0].exoneracion.tipoDocumento'],
  ['unknown currency', (b) => (b.resumenFactura.codigoTipoMoneda.codigoMoneda = 'XYZ'), 'resumenFactura.codigoTipoMoneda.codigoMoneda'],
  ['USD without tipoCambio', (b) => (b.resumenFactura.codigoTipoMoneda.codigoMoneda = 'USD'), 'resumenFactura.codigoTipoMoneda.tipoCambio'],
  ['no payment method', (b) => (b.resumenFactura.mediosPago = []), 'resumenFactura.mediosPago'],
  ['unknown payment method', (b) => (b.resumenFactura.mediosPago[0].tipoMedioPago = '55'), 'resumenFactura.mediosPago[0].tipoMedioPago'],
  ['missing resumenFactura', (b) => void delete b.resumenFactura, 'resumenFactura'],
  ['NC without reference', (b) => (b.tipoDoc = '3'), 'informacionReferencia'],
  ['NC reference without clave', (b) => {
      b.tipoDoc = '3';
      b.informacionReferencia = [{ tipoDocIR: '01', numero: '123', fechaEmision: '2026-03-01T10:00:00', codigo: '01', razon: 'Anula factura' }];
    }, 'informacionReferencia[0].numero'],
  ['emisor is not the issuer', (b) => (b.emisor = '3101987654'), 'emisor'],
  ['otros cargos with zero amount', (b) => (b.otrosCargos = [{ tipoDocumento: '06', detalle: 'Servicio', montoCargo: '0', porcentaje: '10' }]), 'otrosCargos[0].montoCargo'],
  ['exoneración with an impossible date', (b) =>
      (b.detalleServicio[0].impuesto[0].exoneracion = {
        tipoDocumento: '04', numeroDocumento: 'AL-00020402-24', nombreInstitucion: '01', fechaEmision: '2024-02-30T00:00:00', porcentajeExoneracion: 13,
      }), 'detalleServicio[0].impuesto[0].exoneracion.fechaEmision'],
  ['NC reference with an impossible date', (b) => {
      b.tipoDoc = '3';
      b.informacionReferencia = [{ tipoDocIR: '01', numero: '5'.repeat(50), fechaEmision: '2026-13-01T10:00:00', codigo: '01', razon: 'Anula factura' }];
    }, 'informacionReferencia[0].fechaEmision'],
  ['credit sale without plazo', (b) => (b.condicionVenta = '02'), 'plazoCredito'],
];

describe('malformed bodies', () => {
  it('the base body is valid', () => {
    const r = parseDocument(validInvoice(), ISSUER);
    expect(r.findings).toEqual([]);
    expect(r.ok).toBe(true);
  });
  it('has at least 30 cases', () => expect(cases.length).toBeGreaterThanOrEqual(30));
  for (const [name, mutate, path] of cases) {
    it(`${name} → finding at ${path}`, () => {
      const body = validInvoice();
      mutate(body);
      let r: ReturnType<typeof parseDocument> | undefined;
      expect(() => (r = parseDocument(body, ISSUER))).not.toThrow();
      expect(r!.ok).toBe(false);
      const paths = r!.findings.map((f) => f.path);
      expect(paths, JSON.stringify(r!.findings)).toContain(path);
      for (const f of r!.findings) expect(f.message.length).toBeGreaterThan(3);
    });
  }
  it('non-object inputs never throw', () => {
    for (const input of [null, undefined, 42, 'text', [], true, { detalleServicio: [null] }, { resumenFactura: [] }]) {
      const r = parseDocument(input, ISSUER);
      expect(r.ok).toBe(false);
      expect(r.findings.length).toBeGreaterThan(0);
    }
  });
  it('issuer records are checked too', () => {
    const bad = parseIssuer({ ...ISSUER, identificacion: '12345', ubicacion: { ...ISSUER.ubicacion, provincia: '9' } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.findings.map((f) => f.path)).toEqual(expect.arrayContaining(['identificacion', 'ubicacion.provincia']));
    expect(parseIssuer(ISSUER).ok).toBe(true);
  });
});

describe('fuzzed bodies', () => {
  it('replacing any field of a valid body with any JSON value never throws', async () => {
    assertAnyFieldAnyValueNeverThrows(validInvoice, ISSUER, 1000);
  });
});
