/**
 * The domain model of a comprobante electrónico v4.4, independent of any input format.
 * Input (spec body, CSV, ...) is parsed and normalized into these types; totals are computed
 * from them; the XML builder writes them. Element names follow the ANEXOS v4.4 (lowerCamel).
 * Amounts are Decimals; dates are xs:dateTime strings with the Costa Rica offset (-06:00).
 */
import type { Decimal } from './money.js';

/** Kinds of comprobante (ANEXOS Nota 2). */
export type DocumentKind = 'FE' | 'ND' | 'NC' | 'TE' | 'FEC' | 'FEE' | 'REP';

/** Tipo de comprobante codes (consecutivo positions 9-10, ANEXOS p.65). */
export const TIPO_COMPROBANTE: Record<DocumentKind, string> = {
  FE: '01',
  ND: '02',
  NC: '03',
  TE: '04',
  FEC: '08',
  FEE: '09',
  REP: '10',
};

export interface Identificacion {
  /** 01 física, 02 jurídica, 03 DIMEX, 04 NITE, 05 extranjero, 06 no contribuyente */
  tipo: string;
  numero: string;
}

export interface Telefono {
  codigoPais: string; // 3 digits, e.g. "506"
  numTelefono: string; // 8-20 digits
}

export interface Ubicacion {
  provincia: string; // 1 digit
  canton: string; // 2 digits
  distrito: string; // 2 digits
  barrio?: string; // free text, 5-50 chars in v4.4
  otrasSenas: string; // 5-250 chars
}

export interface Emisor {
  nombre: string;
  identificacion: Identificacion;
  nombreComercial?: string;
  /** Required in every kind but the FEC, whose Emisor (the seller) may be abroad or not registered. */
  ubicacion?: Ubicacion;
  /** FEC only: the address of a seller abroad (identificación 05). */
  otrasSenasExtranjero?: string;
  telefono?: Telefono;
  correoElectronico: string[]; // 1..4 (FEC 0..4)
}

export interface Receptor {
  nombre: string;
  identificacion: Identificacion;
  nombreComercial?: string;
  ubicacion?: Ubicacion;
  otrasSenasExtranjero?: string;
  telefono?: Telefono;
  correoElectronico?: string;
}

export interface CodigoComercial {
  tipo: string; // 01, 02, 03, 04, 99
  codigo: string;
}

export interface Descuento {
  montoDescuento: Decimal;
  codigoDescuento: string; // Nota 20
  codigoDescuentoOtro?: string;
  naturalezaDescuento?: string;
}

export interface Exoneracion {
  tipoDocumento: string; // TipoDocumentoEX1, Nota 10.1
  tipoDocumentoOtro?: string;
  numeroDocumento: string;
  articulo?: string;
  inciso?: string;
  nombreInstitucion: string; // Nota 23 code
  nombreInstitucionOtros?: string;
  fechaEmision: string; // xs:dateTime
  /** Percentage points exonerated (13 = the whole general VAT rate). */
  tarifaExonerada: Decimal;
}

export interface Impuesto {
  codigo: string; // Nota 8: 01 IVA, ...
  codigoImpuestoOtro?: string;
  codigoTarifaIVA?: string; // Nota 8.1, required for codigo 01 and 07
  tarifa?: Decimal; // percent, e.g. 13
  factorCalculoIVA?: Decimal; // codigo 08 only
  exoneracion?: Exoneracion;
}

export interface Linea {
  numeroLinea: number;
  codigoCABYS: string; // 13 digits
  codigoComercial: CodigoComercial[];
  cantidad: Decimal;
  unidadMedida: string;
  unidadMedidaComercial?: string;
  tipoTransaccion?: string;
  detalle: string;
  precioUnitario: Decimal;
  descuentos: Descuento[];
  /** Nota 21: "01" IVA cobrado a nivel de fábrica, "02" exento por sistema especial. */
  ivaCobradoFabrica?: string;
  impuestos: Impuesto[];
  /** ImpuestoAsumidoEmisorFabrica; zero when not applicable. */
  impuestoAsumidoEmisorFabrica?: Decimal;
  /** FEE, NC, ND: the 12-digit partida arancelaria of a good (Nota 17). */
  partidaArancelaria?: string;
  /**
   * REP only: the amount of the payment (the XML's SubTotal, editable in a recibo de pago), on which the IVA is
   * computed; MontoTotal (cantidad 1 × precioUnitario) is then the amount originally invoiced without taxes.
   */
  montoPago?: Decimal;
}

export interface OtroCargo {
  tipoDocumento: string; // Nota 16
  tipoDocumentoOtros?: string;
  identificacionTercero?: Identificacion;
  nombreTercero?: string;
  detalle: string;
  porcentaje?: Decimal;
  montoCargo: Decimal;
}

export interface MedioPago {
  tipoMedioPago: string; // Nota 6
  medioPagoOtros?: string;
  totalMedioPago?: Decimal;
}

export interface InformacionReferencia {
  tipoDocIR: string; // Nota 10
  tipoDocRefOtro?: string;
  numero?: string; // clave of the referenced document
  fechaEmisionIR: string; // xs:dateTime
  codigo?: string; // Nota 9
  codigoReferenciaOtro?: string;
  razon?: string;
}

export interface Moneda {
  codigoMoneda: string; // ISO 4217
  tipoCambio: Decimal; // 1 for CRC
}

/** A comprobante with every input decided; totals are derived from it (see totals.ts). */
export interface Comprobante {
  kind: DocumentKind;
  clave: string;
  numeroConsecutivo: string;
  situacion: '1' | '2' | '3';
  proveedorSistemas: string;
  codigoActividadEmisor: string; // 6 chars; '' when absent (REP; an FEC whose seller has none)
  codigoActividadReceptor?: string;
  fechaEmision: string; // xs:dateTime, -06:00
  emisor: Emisor;
  receptor?: Receptor;
  condicionVenta: string; // Nota 5
  condicionVentaOtros?: string;
  plazoCredito?: number;
  lineas: Linea[];
  otrosCargos: OtroCargo[];
  moneda: Moneda;
  mediosPago: MedioPago[];
  informacionReferencia: InformacionReferencia[];
}

/** A problem with an input, addressed by the path of the field in the input body. */
export interface Finding {
  path: string; // e.g. "detalleServicio[2].impuesto[0].tarifa"
  message: string;
}
