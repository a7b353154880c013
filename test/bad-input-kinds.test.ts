// Malformed bodies of the kinds of issue 15 (ND 02, FEC 08, FEE 09, REP 10): each yields a finding at the path
// named, and none throws. Each kind starts from one of its fixtures, which must be valid as it is.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { ISSUER } from './helpers/bodies.js';
import { assertAnyFieldAnyValueNeverThrows } from './helpers/fuzz-body.js';

type Body = Record<string, any>;
type Case = [string, (b: Body) => unknown, string];

const fixture = (name: string) => (): Body => JSON.parse(readFileSync(new URL(`../fixtures/documents/${name}.json`, import.meta.url), 'utf8'));

const KINDS: Record<string, { base: () => Body; cases: Case[] }> = {
  ND: {
    base: fixture('16-nd-bienes-servicios'),
    cases: [
      ['without reference', (b) => void delete b.informacionReferencia, 'informacionReferencia'],
      ['empty references', (b) => (b.informacionReferencia = []), 'informacionReferencia'],
      ['reference without codigo', (b) => void delete b.informacionReferencia[0].codigo, 'informacionReferencia[0].codigo'],
      ['reference without razon', (b) => void delete b.informacionReferencia[0].razon, 'informacionReferencia[0].razon'],
      ['reference numero not a clave', (b) => (b.informacionReferencia[0].numero = '00100001010000000102'), 'informacionReferencia[0].numero'],
      ['reference codigo 17 (REP only)', (b) => (b.informacionReferencia[0].codigo = '17'), 'informacionReferencia[0].codigo'],
      ['receptor ""', (b) => (b.receptor = ''), 'receptor'],
      ['foreign receptor', (b) => (b.receptor.identificacion = { tipo: '05', numero: 'P1234567' }), 'receptor.identificacion.tipo'],
      ['condicionVenta 11 (REP only)', (b) => (b.condicionVenta = '11'), 'condicionVenta'],
      ['line total off by 1', (b) => (b.detalleServicio[0].montoTotalLinea = 45766), 'detalleServicio[0].montoTotalLinea'],
      ['totalComprobante off by 1', (b) => (b.resumenFactura.totalComprobante = '68366.00'), 'resumenFactura.totalComprobante'],
      ['proveedor on a nota', (b) => (b.proveedor = { nombre: 'Alguien Más', identificacion: { tipo: '01', numero: '301230456' } }), 'proveedor'],
    ],
  },
  FEC: {
    base: fixture('17-fec-agricultor'),
    cases: [
      ['without proveedor', (b) => void delete b.proveedor, 'proveedor'],
      ['with a receptor object', (b) => (b.receptor = { nombre: 'Otro Comprador', identificacion: { tipo: '02', numero: '3101987654' } }), 'receptor'],
      ['proveedor no contribuyente without condicionVenta 13', (b) => (b.proveedor.identificacion = { tipo: '06', numero: 'NC1' }), 'proveedor.identificacion.tipo'],
      ['proveedor of an unknown identification type', (b) => (b.proveedor.identificacion.tipo = '09'), 'proveedor.identificacion.tipo'],
      ['proveedor física with 8 digits', (b) => (b.proveedor.identificacion.numero = '30123045'), 'proveedor.identificacion.numero'],
      ['proveedor abroad without otrasSenasExtranjero', (b) => (b.proveedor.identificacion = { tipo: '05', numero: 'US1' }), 'proveedor.otrasSenasExtranjero'],
      ['proveedor nombre too short', (b) => (b.proveedor.nombre = 'Juan'), 'proveedor.nombre'],
      ['proveedor bad phone', (b) => (b.proveedor.telefono = '12'), 'proveedor.telefono'],
      ['proveedor unknown field', (b) => (b.proveedor.cedula = '301230456'), 'proveedor.cedula'],
      ['without reference', (b) => void delete b.informacionReferencia, 'informacionReferencia'],
      ['ivaCobradoFabrica on a line', (b) => (b.detalleServicio[0].ivaCobradoFabrica = '01'), 'detalleServicio[0].ivaCobradoFabrica'],
      ['tax off by 1', (b) => (b.detalleServicio[0].impuesto[0].monto = '3701.00'), 'detalleServicio[0].impuesto[0].monto'],
    ],
  },
  FEE: {
    base: fixture('20-fee-cafe-usd'),
    cases: [
      ['receptor ""', (b) => (b.receptor = ''), 'receptor'],
      ['national receptor', (b) => (b.receptor.identificacion = { tipo: '02', numero: '4000001021' }), 'receptor.identificacion.tipo'],
      ['receptor with ubicacion', (b) => (b.receptor.ubicacion = { provincia: '1', canton: '01', distrito: '01', direccion: 'San José centro' }), 'receptor.ubicacion'],
      ['good without partidaArancelaria', (b) => void delete b.detalleServicio[0].partidaArancelaria, 'detalleServicio[0].partidaArancelaria'],
      ['partidaArancelaria of 8 digits', (b) => (b.detalleServicio[0].partidaArancelaria = '09011100'), 'detalleServicio[0].partidaArancelaria'],
      ['exoneración', (b) =>
          (b.detalleServicio[0].impuesto[0].exoneracion = {
            tipoDocumento: '04', numeroDocumento: 'AL-00020402-24', nombreInstitucion: '01', fechaEmision: '2024-03-01T00:00:00', porcentajeExoneracion: 0,
          }), 'detalleServicio[0].impuesto[0].exoneracion'],
      ['codigoActividadReceptor', (b) => (b.codigoActividadReceptor = '6201.0'), 'codigoActividadReceptor'],
      ['ivaCobradoFabrica on a line', (b) => (b.detalleServicio[0].ivaCobradoFabrica = '01'), 'detalleServicio[0].ivaCobradoFabrica'],
      ['USD without tipoCambio', (b) => void delete b.resumenFactura.codigoTipoMoneda.tipoCambio, 'resumenFactura.codigoTipoMoneda.tipoCambio'],
      ['subTotal off by 1', (b) => (b.detalleServicio[0].subTotal = '3201.00'), 'detalleServicio[0].subTotal'],
      ['totalVenta off by 1', (b) => (b.resumenFactura.totalVenta = '3199.00'), 'resumenFactura.totalVenta'],
      ['condicionVenta 09 (REP only)', (b) => (b.condicionVenta = '09'), 'condicionVenta'],
    ],
  },
  REP: {
    base: fixture('23-rep-credito-90-dias'),
    cases: [
      ['without reference', (b) => void delete b.informacionReferencia, 'informacionReferencia'],
      ['reference to an exportación (19)', (b) => (b.informacionReferencia[0].tipoDocIR = '19'), 'informacionReferencia[0].tipoDocIR'],
      ['reference without numero', (b) => void delete b.informacionReferencia[0].numero, 'informacionReferencia[0].numero'],
      ['without condicionVenta', (b) => void delete b.condicionVenta, 'condicionVenta'],
      ['condicionVenta 10 (the sale, not its payment)', (b) => (b.condicionVenta = '10'), 'condicionVenta'],
      ['receptor ""', (b) => (b.receptor = ''), 'receptor'],
      ['no payment method', (b) => (b.resumenFactura.mediosPago = []), 'resumenFactura.mediosPago'],
      ['payment above the amount invoiced', (b) => (b.detalleServicio[0].montoTotal = '250000.01'), 'detalleServicio[0].montoTotal'],
      ['a line with a CABYS code (not a payment line)', (b) => (b.detalleServicio[0].codigo = '8313200000100'), 'detalleServicio[0].codigo'],
      ['a line without subTotal', (b) => void delete b.detalleServicio[0].subTotal, 'detalleServicio[0].subTotal'],
      ['tax off by 1', (b) => (b.detalleServicio[0].impuesto[0].monto = '32501.00'), 'detalleServicio[0].impuesto[0].monto'],
      ['totalComprobante with the tax (it is TotalVenta)', (b) => (b.resumenFactura.totalComprobante = '282500.00'), 'resumenFactura.totalComprobante'],
      ['otros cargos', (b) => (b.otrosCargos = [{ tipoDocumento: '06', detalle: 'Servicio', montoCargo: '100' }]), 'otrosCargos'],
    ],
  },
};

for (const [kind, { base, cases }] of Object.entries(KINDS)) {
  describe(`malformed ${kind} bodies`, () => {
    it('the base fixture is valid', () => {
      const r = parseDocument(base(), ISSUER);
      expect(r.findings).toEqual([]);
      expect(r.ok && r.doc.kind).toBe(kind);
    });
    it('has at least 10 cases', () => expect(cases.length).toBeGreaterThanOrEqual(10));
    for (const [name, mutate, path] of cases) {
      it(`${name} → finding at ${path}`, () => {
        const body = base();
        mutate(body);
        let r: ReturnType<typeof parseDocument> | undefined;
        expect(() => (r = parseDocument(body, ISSUER))).not.toThrow();
        expect(r!.ok).toBe(false);
        expect(r!.findings.map((f) => f.path), JSON.stringify(r!.findings)).toContain(path);
        for (const f of r!.findings) expect(f.message.length).toBeGreaterThan(3);
      });
    }
    it('replacing any field with any JSON value never throws', async () => {
      assertAnyFieldAnyValueNeverThrows(base, ISSUER, 300);
    });
  });
}
