// Valid request bodies and an issuer record shared by tests (figures worked by hand below).
import type { IssuerRecord } from '../../src/core/input/schema.js';

export const ISSUER: IssuerRecord = {
  identificacion: '3101123456',
  tipoIdentificacion: '02',
  codigoActividad: '6201.0',
  sucursal: 1,
  nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA',
  nombreComercial: 'Software Tico',
  telefono: '+506 2222-3333',
  correoElectronico: 'facturas@softwaretico.cr',
  ubicacion: { provincia: '1', canton: '01', distrito: '08', barrio: 'Barrio Escalante', direccion: 'Avenida 7, calles 31 y 33, casa 3125' },
  ambiente: 2,
  usuarioHacienda: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr',
  claveHacienda: Buffer.from('secreto').toString('base64'),
  pinCertificado: '1234',
  certificadoHacienda: 'AA==',
};

/**
 * FE, 2 lines:
 *  1. 2 × 50000 consultoría (service 8311200000000) − 10000 discount = 90000; IVA 13 % = 11700 → 101700
 *  2. 3 × 1250.50 software (goods 4781400000000), IVA 13 % of 3751.5 = 487.695 → 4239.195
 *  TotalServGravados 100000, TotalMercanciasGravadas 3751.5, TotalVenta 103751.5, TotalDescuentos 10000,
 *  TotalVentaNeta 93751.5, TotalImpuesto 12187.695, TotalComprobante 105939.195
 */
export function validInvoice(): Record<string, any> {
  return {
    emisor: '3101123456',
    numeroReferencia: 1,
    codigoActividad: '6201.0',
    tipoDoc: '1',
    folioType: 'INVOICE',
    fechaEmision: '2026-03-15T10:30:00-06:00',
    receptor: {
      nombre: 'BANCO NACIONAL DE COSTA RICA',
      identificacion: { tipo: '02', numero: '4000001021' },
      correoElectronico: 'proveedores@bncr.fi.cr',
      telefono: '22122000',
    },
    detalleServicio: [
      {
        numeroLinea: 1,
        codigo: '8311200000000',
        detalle: 'Consultoría en gestión estratégica',
        cantidad: 2,
        unidadMedida: 'Sp',
        precioUnitario: '50000.00',
        subTotal: '100000.00',
        descuento: '10000.00',
        montoTotal: '90000.00',
        impuestoNeto: 11700,
        montoTotalLinea: 101700,
        impuesto: [{ codigo: '01', codigoTarifa: '08', tarifa: '13', monto: '11700.00' }],
      },
      {
        numeroLinea: 2,
        codigo: '4781400000000',
        detalle: 'Licencia de herramienta de desarrollo',
        cantidad: 3,
        unidadMedida: 'Unid',
        precioUnitario: '1250.50',
        subTotal: '3751.50',
        descuento: '0.00',
        montoTotal: '3751.50',
        impuestoNeto: 487.695,
        montoTotalLinea: 4239.195,
        impuesto: [{ codigo: '01', codigoTarifa: '08', tarifa: '13', monto: '487.695' }],
      },
    ],
    resumenFactura: {
      codigoTipoMoneda: { codigoMoneda: 'CRC' },
      mediosPago: [{ tipoMedioPago: '04', totalMedioPago: '105939.195' }],
      totalComprobante: '105939.195',
    },
  };
}
