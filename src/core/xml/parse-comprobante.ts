/**
 * Parsing of a received v4.4 comprobante: what an emulator needs to check a received document and recompute its
 * totals independently. Every value stays a string (see raw-document.ts).
 */
import type { DocumentKind } from '../model.js';
import { KINDS, kindOfRoot } from './kinds.js';
import { list, parseXmlRoot, rawFromDom, Reader, XmlParseError, type DomNodeLike, type RawDocument } from './raw-document.js';

export interface ParsedIdentificacion {
  tipo: string;
  numero: string;
}

export interface ParsedExoneracion {
  tipoDocumento: string;
  tipoDocumentoOtro?: string;
  numeroDocumento: string;
  articulo?: string;
  inciso?: string;
  nombreInstitucion: string;
  nombreInstitucionOtros?: string;
  fechaEmision: string;
  tarifaExonerada: string;
  montoExoneracion: string;
}

export interface ParsedImpuesto {
  codigo: string;
  codigoImpuestoOtro?: string;
  codigoTarifaIVA?: string;
  tarifa?: string;
  factorCalculoIVA?: string;
  monto: string;
  montoExportacion?: string;
  exoneracion?: ParsedExoneracion;
}

export interface ParsedDescuento {
  montoDescuento: string;
  codigoDescuento: string;
  codigoDescuentoOtro?: string;
  naturalezaDescuento?: string;
}

export interface ParsedLinea {
  numeroLinea: string;
  partidaArancelaria?: string;
  codigoCABYS?: string;
  codigoComercial: { tipo: string; codigo: string }[];
  cantidad?: string;
  unidadMedida?: string;
  tipoTransaccion?: string;
  unidadMedidaComercial?: string;
  detalle: string;
  precioUnitario?: string;
  montoTotal: string;
  descuentos: ParsedDescuento[];
  subTotal: string;
  ivaCobradoFabrica?: string;
  baseImponible?: string;
  impuestos: ParsedImpuesto[];
  impuestoAsumidoEmisorFabrica?: string;
  impuestoNeto?: string;
  montoTotalLinea: string;
  /** True when the line carries a DetalleSurtido (its components are not parsed). */
  tieneSurtido: boolean;
}

export interface ParsedOtroCargo {
  tipoDocumento: string;
  tipoDocumentoOtros?: string;
  identificacionTercero?: ParsedIdentificacion;
  nombreTercero?: string;
  detalle: string;
  porcentaje?: string;
  montoCargo: string;
}

export interface ParsedMedioPago {
  tipoMedioPago?: string;
  medioPagoOtros?: string;
  totalMedioPago?: string;
}

export interface ParsedDesglose {
  codigo: string;
  codigoTarifaIVA?: string;
  totalMontoImpuesto: string;
}

export interface ParsedResumen {
  codigoMoneda: string;
  tipoCambio: string;
  totalServGravados?: string;
  totalServExentos?: string;
  totalServExonerado?: string;
  totalServNoSujeto?: string;
  totalMercanciasGravadas?: string;
  totalMercanciasExentas?: string;
  totalMercExonerada?: string;
  totalMercNoSujeta?: string;
  totalGravado?: string;
  totalExento?: string;
  totalExonerado?: string;
  totalNoSujeto?: string;
  totalVenta: string;
  totalDescuentos?: string;
  totalVentaNeta: string;
  totalDesgloseImpuesto: ParsedDesglose[];
  totalImpuesto?: string;
  totalImpAsumEmisorFabrica?: string;
  totalIVADevuelto?: string;
  totalOtrosCargos?: string;
  totalComprobante: string;
}

export interface ParsedReferencia {
  tipoDocIR: string;
  numero?: string;
  fechaEmisionIR: string;
  codigo?: string;
  razon?: string;
}

export interface ParsedUbicacion {
  provincia: string;
  canton: string;
  distrito: string;
  barrio?: string;
  otrasSenas?: string;
}

export interface ParsedComprobante {
  kind: DocumentKind;
  rootName: string;
  namespace: string;
  clave: string;
  proveedorSistemas?: string;
  codigoActividadEmisor?: string;
  codigoActividadReceptor?: string;
  numeroConsecutivo: string;
  fechaEmision: string;
  emisor: {
    nombre: string;
    identificacion: ParsedIdentificacion;
    ubicacion?: { provincia: string; canton: string; distrito: string };
    correoElectronico: string[];
  };
  receptor?: {
    nombre: string;
    identificacion?: ParsedIdentificacion;
    correoElectronico?: string;
    nombreComercial?: string;
    ubicacion?: ParsedUbicacion;
    otrasSenasExtranjero?: string;
    telefono?: { codigoPais: string; numTelefono: string };
  };
  condicionVenta: string;
  condicionVentaOtros?: string;
  plazoCredito?: string;
  lineas: ParsedLinea[];
  otrosCargos: ParsedOtroCargo[];
  mediosPago: ParsedMedioPago[];
  resumen: ParsedResumen;
  informacionReferencia: ParsedReferencia[];
  /** Number of ds:Signature children of the root. */
  signatureCount: number;
}

function identificacion(r: Reader | undefined): ParsedIdentificacion | undefined {
  return r && { tipo: r.req('Tipo'), numero: r.req('Numero') };
}

function ubicacionOf(u: Reader | undefined): ParsedUbicacion | undefined {
  return u && { provincia: u.req('Provincia'), canton: u.req('Canton'), distrito: u.req('Distrito'), barrio: u.opt('Barrio'), otrasSenas: u.opt('OtrasSenas') };
}

function telefonoOf(t: Reader | undefined): { codigoPais: string; numTelefono: string } | undefined {
  return t && { codigoPais: t.req('CodigoPais'), numTelefono: t.req('NumTelefono') };
}

function impuesto(r: Reader): ParsedImpuesto {
  const x = r.child('Exoneracion');
  return {
    codigo: r.req('Codigo'),
    codigoImpuestoOtro: r.opt('CodigoImpuestoOTRO'),
    codigoTarifaIVA: r.opt('CodigoTarifaIVA'),
    tarifa: r.opt('Tarifa'),
    factorCalculoIVA: r.opt('FactorCalculoIVA'),
    monto: r.req('Monto'),
    montoExportacion: r.opt('MontoExportacion'),
    exoneracion: x && {
      tipoDocumento: x.req('TipoDocumentoEX1'),
      tipoDocumentoOtro: x.opt('TipoDocumentoOTRO'),
      numeroDocumento: x.req('NumeroDocumento'),
      articulo: x.opt('Articulo'),
      inciso: x.opt('Inciso'),
      nombreInstitucion: x.req('NombreInstitucion'),
      nombreInstitucionOtros: x.opt('NombreInstitucionOtros'),
      fechaEmision: x.req('FechaEmisionEX'),
      tarifaExonerada: x.req('TarifaExonerada'),
      montoExoneracion: x.req('MontoExoneracion'),
    },
  };
}

function linea(r: Reader): ParsedLinea {
  return {
    numeroLinea: r.req('NumeroLinea'),
    partidaArancelaria: r.opt('PartidaArancelaria'),
    codigoCABYS: r.opt('CodigoCABYS'),
    codigoComercial: r.all('CodigoComercial').map((c) => ({ tipo: c.req('Tipo'), codigo: c.req('Codigo') })),
    cantidad: r.opt('Cantidad'),
    unidadMedida: r.opt('UnidadMedida'),
    tipoTransaccion: r.opt('TipoTransaccion'),
    unidadMedidaComercial: r.opt('UnidadMedidaComercial'),
    detalle: r.req('Detalle'),
    precioUnitario: r.opt('PrecioUnitario'),
    montoTotal: r.req('MontoTotal'),
    descuentos: r.all('Descuento').map((d) => ({
      montoDescuento: d.req('MontoDescuento'),
      codigoDescuento: d.req('CodigoDescuento'),
      codigoDescuentoOtro: d.opt('CodigoDescuentoOTRO'),
      naturalezaDescuento: d.opt('NaturalezaDescuento'),
    })),
    subTotal: r.req('SubTotal'),
    ivaCobradoFabrica: r.opt('IVACobradoFabrica'),
    baseImponible: r.opt('BaseImponible'),
    impuestos: r.all('Impuesto').map(impuesto),
    impuestoAsumidoEmisorFabrica: r.opt('ImpuestoAsumidoEmisorFabrica'),
    impuestoNeto: r.opt('ImpuestoNeto'),
    montoTotalLinea: r.req('MontoTotalLinea'),
    tieneSurtido: r.has('DetalleSurtido'),
  };
}

const RESUMEN_OPTIONAL = [
  'TotalServGravados',
  'TotalServExentos',
  'TotalServExonerado',
  'TotalServNoSujeto',
  'TotalMercanciasGravadas',
  'TotalMercanciasExentas',
  'TotalMercExonerada',
  'TotalMercNoSujeta',
  'TotalGravado',
  'TotalExento',
  'TotalExonerado',
  'TotalNoSujeto',
  'TotalDescuentos',
  'TotalImpuesto',
  'TotalImpAsumEmisorFabrica',
  'TotalIVADevuelto',
  'TotalOtrosCargos',
] as const;

type OptionalResumenKey = Uncapitalize<(typeof RESUMEN_OPTIONAL)[number]>;

function resumen(r: Reader): ParsedResumen {
  const moneda = r.reqChild('CodigoTipoMoneda');
  const out: ParsedResumen = {
    codigoMoneda: moneda.req('CodigoMoneda'),
    tipoCambio: moneda.req('TipoCambio'),
    totalVenta: r.req('TotalVenta'),
    totalVentaNeta: r.req('TotalVentaNeta'),
    totalDesgloseImpuesto: r.all('TotalDesgloseImpuesto').map((d) => ({
      codigo: d.req('Codigo'),
      codigoTarifaIVA: d.opt('CodigoTarifaIVA'),
      totalMontoImpuesto: d.req('TotalMontoImpuesto'),
    })),
    totalComprobante: r.req('TotalComprobante'),
  };
  for (const name of RESUMEN_OPTIONAL) {
    const v = r.opt(name);
    if (v !== undefined) out[(name.charAt(0).toLowerCase() + name.slice(1)) as OptionalResumenKey] = v;
  }
  return out;
}

/**
 * Extracts what an emulator needs from a received v4.4 comprobante (FE, ND, NC, TE, FEC, FEE, REP).
 * Throws XmlParseError for malformed XML, an unknown root, a namespace other than the kind's v4.4
 * one, or a missing element the checks depend on. It does not replace XSD validation.
 */
export function parseComprobanteXml(xml: string): ParsedComprobante {
  return comprobanteFrom(parseXmlRoot(xml));
}

/** `parseComprobanteXml` on an already parsed DOM (see `rawFromDom`). */
export function parseComprobanteDom(node: DomNodeLike): ParsedComprobante {
  return comprobanteFrom(rawFromDom(node));
}

function comprobanteFrom(raw: RawDocument): ParsedComprobante {
  const kind = kindOfRoot(raw.rootName);
  if (!kind) throw new XmlParseError(`unknown root element ${raw.rootName}`);
  const info = KINDS[kind];
  if (raw.namespace !== info.namespace) {
    throw new XmlParseError(`${raw.rootName}: namespace "${raw.namespace ?? ''}" is not the v4.4 namespace ${info.namespace}`);
  }
  const r = new Reader(raw.body, `/${raw.rootName}`);
  const emisor = r.reqChild('Emisor');
  const ubicacion = emisor.child('Ubicacion');
  const receptor = r.child('Receptor');
  const resumenReader = r.reqChild('ResumenFactura');
  const detalle = r.child('DetalleServicio');
  return {
    kind,
    rootName: raw.rootName,
    namespace: raw.namespace,
    clave: r.req('Clave'),
    proveedorSistemas: r.opt('ProveedorSistemas'),
    codigoActividadEmisor: r.opt('CodigoActividadEmisor'),
    codigoActividadReceptor: r.opt('CodigoActividadReceptor'),
    numeroConsecutivo: r.req('NumeroConsecutivo'),
    fechaEmision: r.req('FechaEmision'),
    emisor: {
      nombre: emisor.req('Nombre'),
      identificacion: identificacion(emisor.reqChild('Identificacion'))!,
      ubicacion: ubicacion && {
        provincia: ubicacion.req('Provincia'),
        canton: ubicacion.req('Canton'),
        distrito: ubicacion.req('Distrito'),
      },
      correoElectronico: emisor.texts('CorreoElectronico'),
    },
    receptor: receptor && {
      nombre: receptor.req('Nombre'),
      identificacion: identificacion(receptor.child('Identificacion')),
      correoElectronico: receptor.opt('CorreoElectronico'),
      nombreComercial: receptor.opt('NombreComercial'),
      ubicacion: ubicacionOf(receptor.child('Ubicacion')),
      otrasSenasExtranjero: receptor.opt('OtrasSenasExtranjero'),
      telefono: telefonoOf(receptor.child('Telefono')),
    },
    condicionVenta: r.req('CondicionVenta'),
    condicionVentaOtros: r.opt('CondicionVentaOtros'),
    plazoCredito: r.opt('PlazoCredito'),
    lineas: detalle ? detalle.all('LineaDetalle').map(linea) : [],
    otrosCargos: r.all('OtrosCargos').map((o) => ({
      tipoDocumento: o.req('TipoDocumentoOC'),
      tipoDocumentoOtros: o.opt('TipoDocumentoOTROS'),
      identificacionTercero: identificacion(o.child('IdentificacionTercero')),
      nombreTercero: o.opt('NombreTercero'),
      detalle: o.req('Detalle'),
      porcentaje: o.opt('PorcentajeOC'),
      montoCargo: o.req('MontoCargo'),
    })),
    mediosPago: resumenReader.all('MedioPago').map((m) => ({
      tipoMedioPago: m.opt('TipoMedioPago'),
      medioPagoOtros: m.opt('MedioPagoOtros'),
      totalMedioPago: m.opt('TotalMedioPago'),
    })),
    resumen: resumen(resumenReader),
    informacionReferencia: r.all('InformacionReferencia').map((i) => ({
      tipoDocIR: i.req('TipoDocIR'),
      numero: i.opt('Numero'),
      fechaEmisionIR: i.req('FechaEmisionIR'),
      codigo: i.opt('Codigo'),
      razon: i.opt('Razon'),
    })),
    signatureCount: list(raw.body['Signature']).length,
  };
}
