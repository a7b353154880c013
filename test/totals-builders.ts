/**
 * Small builders of Comprobante-shaped inputs for the totals tests (not a test file itself).
 */
import type { Comprobante, Descuento, Exoneracion, Impuesto, Linea, OtroCargo } from '../src/core/model.js';
import { dec } from '../src/core/money.js';

export const SERVICIO = '8311200000000'; // Servicios de consultoría en gestión estratégica empresarial
export const BIEN = '4522003990000'; // Computadores portátiles, notebooks y computadores de bolsillo, n.c.p.

export function exo(tarifaExonerada: string, numeroDocumento = 'AL-00020402-24'): Exoneracion {
  return {
    tipoDocumento: '04',
    numeroDocumento,
    nombreInstitucion: '01',
    fechaEmision: '2024-03-01T00:00:00-06:00',
    tarifaExonerada: dec(tarifaExonerada),
  };
}

/** IVA entry (Codigo 01) with its CodigoTarifaIVA and Tarifa. */
export function iva(codigoTarifaIVA: string, tarifa: string, exoneracion?: Exoneracion): Impuesto {
  const imp: Impuesto = { codigo: '01', codigoTarifaIVA, tarifa: dec(tarifa) };
  if (exoneracion) imp.exoneracion = exoneracion;
  return imp;
}

export const IVA13 = (): Impuesto => iva('08', '13');

export function desc(monto: string, codigoDescuento = '07'): Descuento {
  return { montoDescuento: dec(monto), codigoDescuento };
}

export interface LineaSpec {
  cabys?: string;
  cantidad?: string;
  precio: string;
  descuentos?: Descuento[];
  impuestos?: Impuesto[];
  ivaCobradoFabrica?: string;
  asumido?: string;
}

export function linea(spec: LineaSpec, numeroLinea = 1): Linea {
  const l: Linea = {
    numeroLinea,
    codigoCABYS: spec.cabys ?? SERVICIO,
    codigoComercial: [],
    cantidad: dec(spec.cantidad ?? '1'),
    unidadMedida: 'Unid',
    detalle: 'Línea de prueba',
    precioUnitario: dec(spec.precio),
    descuentos: spec.descuentos ?? [],
    impuestos: spec.impuestos ?? [IVA13()],
  };
  if (spec.ivaCobradoFabrica) l.ivaCobradoFabrica = spec.ivaCobradoFabrica;
  if (spec.asumido) l.impuestoAsumidoEmisorFabrica = dec(spec.asumido);
  return l;
}

export function cargo(montoCargo: string, tipoDocumento = '99'): OtroCargo {
  return { tipoDocumento, detalle: 'Cargo de prueba', montoCargo: dec(montoCargo) };
}

export function doc(
  lineas: LineaSpec[],
  otrosCargos: OtroCargo[] = [],
): Pick<Comprobante, 'lineas' | 'otrosCargos' | 'mediosPago'> {
  return {
    lineas: lineas.map((s, i) => linea(s, i + 1)),
    otrosCargos,
    mediosPago: [{ tipoMedioPago: '01' }],
  };
}
