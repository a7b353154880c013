/**
 * Builds the unsigned XML of a comprobante v4.4 (FE, ND, NC, TE; FEE, FEC and REP follow the
 * same tables) in canonical form, via the element tree of canonical.ts.
 *
 * - The root declares its namespace as the default `xmlns` and nothing else: no xsi/xsd
 *   declarations, no schemaLocation (the signer relies on this).
 * - Element order follows each XSD in schemas/xsd/2026/v4.4/ (SCHEMA_SET in kinds.ts). The kinds are subsets of one
 *   common sequence, so one builder with per-kind section rules (KIND_RULES) covers them all.
 * - Figures come from `totals` (src/core/totals.ts); the builder never computes amounts.
 *   Money: 5 decimals (`money`); Cantidad ≤3 decimals; Tarifa/TarifaExonerada as percent numbers
 *   (≤2 decimals); FactorCalculoIVA ≤4; PorcentajeOC ≤5.
 * - The builder does not check cardinalities the XSD enforces (e.g. a Receptor in FE, an
 *   InformacionReferencia in NC): it writes what the document has, and elements a kind does not
 *   have are left out. Input validation and XSD validation report the rest.
 * - ds:Signature is not written here: the signer inserts it before the closing root tag.
 *
 * ResumenFactura policy (all totals come from `totals.resumen`):
 * - always: CodigoTipoMoneda, the 12 classification totals the kind allows (TotalServGravados …
 *   TotalNoSujeto; FEE has no Exonerado/NoSujeto ones), TotalVenta, TotalDescuentos, TotalVentaNeta,
 *   every TotalDesgloseImpuesto entry of `totals`, TotalImpuesto, TotalComprobante — zeros included;
 * - only when non-zero: TotalImpAsumEmisorFabrica, TotalIVADevuelto (their presence triggers
 *   specific Hacienda checks);
 * - only when the document has OtrosCargos: TotalOtrosCargos;
 * - REP carries just CodigoTipoMoneda, TotalVenta, TotalVentaNeta, TotalDesgloseImpuesto,
 *   TotalImpuesto, MedioPago, TotalComprobante (its XSD).
 */
import type {
  Comprobante,
  Descuento,
  DocumentKind,
  Emisor,
  Exoneracion,
  Identificacion,
  Impuesto,
  InformacionReferencia,
  Linea,
  MedioPago,
  OtroCargo,
  Receptor,
  Telefono,
  Ubicacion,
} from '../model.js';
import { money, plain, type Decimal } from '../money.js';
import type { ImpuestoTotals, LineaTotals, ResumenTotals, Totals } from '../totals.js';
import { el, serialize, type XmlChild, type XmlElement } from './canonical.js';
import { KINDS } from './kinds.js';

export { KINDS, type KindInfo } from './kinds.js';

/** What each kind's XSD has; every flag names a section or element that some kind lacks. */
export interface KindRules {
  codigoActividadEmisor: boolean;
  codigoActividadReceptor: boolean;
  /** Emisor with NombreComercial, Ubicacion, Telefono (REP: Nombre, Identificacion, correos only). */
  emisorFull: boolean;
  /** Receptor with NombreComercial and Telefono (REP: Nombre, Identificacion, correo only). */
  receptorFull: boolean;
  receptorUbicacion: boolean;
  receptorOtrasSenasExtranjero: boolean;
  /** FEC: the seller abroad's OtrasSenasExtranjero. */
  emisorOtrasSenasExtranjero: boolean;
  /** FEE, NC, ND: PartidaArancelaria of a line. */
  partidaArancelaria: boolean;
  /** CondicionVentaOtros and PlazoCredito. */
  condicionVentaDetalle: boolean;
  /** CodigoCABYS, CodigoComercial, Cantidad, UnidadMedida, PrecioUnitario, Descuento... (not REP). */
  lineaMercancia: boolean;
  tipoTransaccion: boolean;
  ivaCobradoFabrica: boolean;
  baseImponible: boolean;
  exoneracion: boolean;
  impuestoAsumidoEmisorFabrica: boolean;
  impuestoNeto: boolean;
  otrosCargos: boolean;
  /** The classification totals (TotalServGravados ... TotalNoSujeto) and TotalDescuentos. */
  resumenClasificacion: boolean;
  resumenExoneradoNoSujeto: boolean;
  resumenImpAsumEmisorFabrica: boolean;
  resumenIVADevuelto: boolean;
  resumenOtrosCargos: boolean;
}

const BASE_RULES: KindRules = {
  codigoActividadEmisor: true,
  codigoActividadReceptor: true,
  emisorFull: true,
  receptorFull: true,
  receptorUbicacion: true,
  receptorOtrasSenasExtranjero: true,
  emisorOtrasSenasExtranjero: false,
  partidaArancelaria: false,
  condicionVentaDetalle: true,
  lineaMercancia: true,
  tipoTransaccion: true,
  ivaCobradoFabrica: true,
  baseImponible: true,
  exoneracion: true,
  impuestoAsumidoEmisorFabrica: true,
  impuestoNeto: true,
  otrosCargos: true,
  resumenClasificacion: true,
  resumenExoneradoNoSujeto: true,
  resumenImpAsumEmisorFabrica: true,
  resumenIVADevuelto: true,
  resumenOtrosCargos: true,
};

/** Section rules per kind (diffs of the XSD trees, NOTES §1.4). */
export const KIND_RULES: Readonly<Record<DocumentKind, KindRules>> = {
  FE: BASE_RULES,
  // NC/ND: ImpuestoAsumidoEmisorFabrica optional (we emit it); InformacionReferencia 1..10.
  NC: { ...BASE_RULES, partidaArancelaria: true },
  ND: { ...BASE_RULES, partidaArancelaria: true },
  TE: { ...BASE_RULES, codigoActividadReceptor: false, tipoTransaccion: false },
  FEE: {
    ...BASE_RULES,
    partidaArancelaria: true,
    codigoActividadReceptor: false,
    receptorUbicacion: false,
    ivaCobradoFabrica: false,
    baseImponible: false,
    exoneracion: false,
    impuestoAsumidoEmisorFabrica: false,
    impuestoNeto: false,
    resumenExoneradoNoSujeto: false,
    resumenIVADevuelto: false,
  },
  FEC: {
    ...BASE_RULES,
    emisorOtrasSenasExtranjero: true,
    receptorOtrasSenasExtranjero: false,
    ivaCobradoFabrica: false,
    impuestoAsumidoEmisorFabrica: false,
    resumenIVADevuelto: false,
  },
  REP: {
    ...BASE_RULES,
    codigoActividadEmisor: false,
    codigoActividadReceptor: false,
    emisorFull: false,
    receptorFull: false,
    receptorUbicacion: false,
    receptorOtrasSenasExtranjero: false,
    condicionVentaDetalle: false,
    lineaMercancia: false,
    tipoTransaccion: false,
    ivaCobradoFabrica: false,
    baseImponible: false,
    exoneracion: false,
    impuestoAsumidoEmisorFabrica: false,
    otrosCargos: false,
    resumenClasificacion: false,
    resumenExoneradoNoSujeto: false,
    resumenImpAsumEmisorFabrica: false,
    resumenIVADevuelto: false,
    resumenOtrosCargos: false,
  },
};

// ---------------------------------------------------------------------------------------------
// Leaf helpers

/** An element whose arguments are all children (el() would read a first element argument as attributes). */
function e(name: string, ...children: XmlChild[]): XmlElement {
  return el(name, children);
}

/** Number of characters as XSD counts them (code points). */
function xsdLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * A text element. Characters XML cannot carry never get this far (the input schema refuses them); should one,
 * serialize() throws an XmlCharError naming the element.
 */
function t(name: string, value: string): XmlElement {
  return e(name, value);
}

/** An optional text element: omitted when the value is undefined or empty. */
function opt(name: string, value: string | undefined): XmlElement | undefined {
  return value === undefined || value === '' ? undefined : t(name, value);
}

function m(name: string, value: Decimal): XmlElement {
  return e(name, money(value));
}

// ---------------------------------------------------------------------------------------------
// Shared builders

export function identificacionXml(name: string, id: Identificacion): XmlElement {
  return e(name, t('Tipo', id.tipo), t('Numero', id.numero));
}

export function ubicacionXml(u: Ubicacion): XmlElement {
  // Barrio is free text 5-50 in v4.4; a value that does not fit (e.g. a v4.3 code "01") is left out.
  const barrio = u.barrio?.trim();
  const barrioFits = barrio !== undefined && xsdLength(barrio) >= 5 && xsdLength(barrio) <= 50;
  return e(
    'Ubicacion',
    t('Provincia', u.provincia),
    t('Canton', u.canton),
    t('Distrito', u.distrito),
    barrioFits ? t('Barrio', barrio) : undefined,
    t('OtrasSenas', u.otrasSenas),
  );
}

export function telefonoXml(tel: Telefono | undefined): XmlElement | undefined {
  return tel && e('Telefono', t('CodigoPais', tel.codigoPais), t('NumTelefono', tel.numTelefono));
}

export function emisorXml(em: Emisor, rules: KindRules): XmlElement {
  if (!rules.emisorFull) {
    return e('Emisor', t('Nombre', em.nombre), identificacionXml('Identificacion', em.identificacion),
      em.correoElectronico.map((c) => t('CorreoElectronico', c)));
  }
  return e(
    'Emisor',
    t('Nombre', em.nombre),
    identificacionXml('Identificacion', em.identificacion),
    opt('NombreComercial', em.nombreComercial),
    em.ubicacion && ubicacionXml(em.ubicacion),
    rules.emisorOtrasSenasExtranjero && opt('OtrasSenasExtranjero', em.otrasSenasExtranjero),
    telefonoXml(em.telefono),
    em.correoElectronico.map((c) => t('CorreoElectronico', c)),
  );
}

export function receptorXml(r: Receptor, rules: KindRules): XmlElement {
  return e(
    'Receptor',
    t('Nombre', r.nombre),
    identificacionXml('Identificacion', r.identificacion),
    rules.receptorFull && opt('NombreComercial', r.nombreComercial),
    rules.receptorUbicacion && r.ubicacion && ubicacionXml(r.ubicacion),
    rules.receptorOtrasSenasExtranjero && opt('OtrasSenasExtranjero', r.otrasSenasExtranjero),
    rules.receptorFull && telefonoXml(r.telefono),
    opt('CorreoElectronico', r.correoElectronico),
  );
}

export function descuentoXml(d: Descuento): XmlElement {
  return e(
    'Descuento',
    m('MontoDescuento', d.montoDescuento),
    t('CodigoDescuento', d.codigoDescuento),
    opt('CodigoDescuentoOTRO', d.codigoDescuentoOtro),
    opt('NaturalezaDescuento', d.naturalezaDescuento),
  );
}

export function exoneracionXml(x: Exoneracion, montoExoneracion: Decimal): XmlElement {
  return e(
    'Exoneracion',
    t('TipoDocumentoEX1', x.tipoDocumento),
    opt('TipoDocumentoOTRO', x.tipoDocumentoOtro),
    t('NumeroDocumento', x.numeroDocumento),
    opt('Articulo', x.articulo),
    opt('Inciso', x.inciso),
    t('NombreInstitucion', x.nombreInstitucion),
    opt('NombreInstitucionOtros', x.nombreInstitucionOtros),
    t('FechaEmisionEX', x.fechaEmision),
    e('TarifaExonerada', plain(x.tarifaExonerada, 2)),
    m('MontoExoneracion', montoExoneracion),
  );
}

export function impuestoXml(i: Impuesto, figures: ImpuestoTotals, rules: KindRules, where: string): XmlElement {
  let exoneracion: XmlElement | undefined;
  if (rules.exoneracion && i.exoneracion) {
    if (!figures.montoExoneracion) throw new Error(`${where}: totals lack montoExoneracion for an exonerated tax`);
    exoneracion = exoneracionXml(i.exoneracion, figures.montoExoneracion);
  }
  return e(
    'Impuesto',
    t('Codigo', i.codigo),
    opt('CodigoImpuestoOTRO', i.codigoImpuestoOtro),
    opt('CodigoTarifaIVA', i.codigoTarifaIVA),
    i.tarifa && e('Tarifa', plain(i.tarifa, 2)),
    i.factorCalculoIVA && e('FactorCalculoIVA', plain(i.factorCalculoIVA, 4)),
    m('Monto', figures.monto),
    exoneracion,
  );
}

export function lineaDetalleXml(l: Linea, f: LineaTotals, rules: KindRules, where: string): XmlElement {
  if (f.impuestos.length !== l.impuestos.length) {
    throw new Error(`${where}: totals have ${f.impuestos.length} impuestos, the line has ${l.impuestos.length}`);
  }
  const impuestos = l.impuestos.map((imp, j) => impuestoXml(imp, f.impuestos[j]!, rules, `${where}.impuestos[${j}]`));
  if (!rules.lineaMercancia) {
    return e(
      'LineaDetalle',
      e('NumeroLinea', String(l.numeroLinea)),
      t('Detalle', l.detalle),
      m('MontoTotal', f.montoTotal),
      m('SubTotal', f.subTotal),
      impuestos,
      m('ImpuestoNeto', f.impuestoNeto),
      m('MontoTotalLinea', f.montoTotalLinea),
    );
  }
  return e(
    'LineaDetalle',
    e('NumeroLinea', String(l.numeroLinea)),
    rules.partidaArancelaria && opt('PartidaArancelaria', l.partidaArancelaria),
    t('CodigoCABYS', l.codigoCABYS),
    l.codigoComercial.map((c) => e('CodigoComercial', t('Tipo', c.tipo), t('Codigo', c.codigo))),
    e('Cantidad', plain(l.cantidad, 3)),
    t('UnidadMedida', l.unidadMedida),
    rules.tipoTransaccion && opt('TipoTransaccion', l.tipoTransaccion),
    opt('UnidadMedidaComercial', l.unidadMedidaComercial),
    t('Detalle', l.detalle),
    m('PrecioUnitario', l.precioUnitario),
    m('MontoTotal', f.montoTotal),
    l.descuentos.map(descuentoXml),
    m('SubTotal', f.subTotal),
    rules.ivaCobradoFabrica && opt('IVACobradoFabrica', l.ivaCobradoFabrica),
    // Required wherever the element exists; equals SubTotal when no other tax adds to it.
    rules.baseImponible && m('BaseImponible', f.baseImponible ?? f.subTotal),
    impuestos,
    rules.impuestoAsumidoEmisorFabrica && m('ImpuestoAsumidoEmisorFabrica', f.impuestoAsumidoEmisorFabrica),
    rules.impuestoNeto && m('ImpuestoNeto', f.impuestoNeto),
    m('MontoTotalLinea', f.montoTotalLinea),
  );
}

export function otrosCargosXml(o: OtroCargo): XmlElement {
  return e(
    'OtrosCargos',
    t('TipoDocumentoOC', o.tipoDocumento),
    opt('TipoDocumentoOTROS', o.tipoDocumentoOtros),
    o.identificacionTercero && identificacionXml('IdentificacionTercero', o.identificacionTercero),
    opt('NombreTercero', o.nombreTercero),
    t('Detalle', o.detalle),
    o.porcentaje && e('PorcentajeOC', plain(o.porcentaje, 5)),
    m('MontoCargo', o.montoCargo),
  );
}

export function medioPagoXml(mp: MedioPago): XmlElement {
  return e(
    'MedioPago',
    t('TipoMedioPago', mp.tipoMedioPago),
    opt('MedioPagoOtros', mp.medioPagoOtros),
    mp.totalMedioPago && m('TotalMedioPago', mp.totalMedioPago),
  );
}

export function resumenFacturaXml(doc: Comprobante, r: ResumenTotals, rules: KindRules): XmlElement {
  const clasif = rules.resumenClasificacion;
  const exo = clasif && rules.resumenExoneradoNoSujeto;
  return e(
    'ResumenFactura',
    e('CodigoTipoMoneda', t('CodigoMoneda', doc.moneda.codigoMoneda), m('TipoCambio', doc.moneda.tipoCambio)),
    clasif && m('TotalServGravados', r.totalServGravados),
    clasif && m('TotalServExentos', r.totalServExentos),
    exo && m('TotalServExonerado', r.totalServExonerado),
    exo && m('TotalServNoSujeto', r.totalServNoSujeto),
    clasif && m('TotalMercanciasGravadas', r.totalMercanciasGravadas),
    clasif && m('TotalMercanciasExentas', r.totalMercanciasExentas),
    exo && m('TotalMercExonerada', r.totalMercExonerada),
    exo && m('TotalMercNoSujeta', r.totalMercNoSujeta),
    clasif && m('TotalGravado', r.totalGravado),
    clasif && m('TotalExento', r.totalExento),
    exo && m('TotalExonerado', r.totalExonerado),
    exo && m('TotalNoSujeto', r.totalNoSujeto),
    m('TotalVenta', r.totalVenta),
    clasif && m('TotalDescuentos', r.totalDescuentos),
    m('TotalVentaNeta', r.totalVentaNeta),
    r.totalDesgloseImpuesto.map((d) =>
      e('TotalDesgloseImpuesto', t('Codigo', d.codigo), opt('CodigoTarifaIVA', d.codigoTarifaIVA),
        m('TotalMontoImpuesto', d.totalMontoImpuesto)),
    ),
    m('TotalImpuesto', r.totalImpuesto),
    rules.resumenImpAsumEmisorFabrica && !r.totalImpAsumEmisorFabrica.isZero() &&
      m('TotalImpAsumEmisorFabrica', r.totalImpAsumEmisorFabrica),
    rules.resumenIVADevuelto && !r.totalIVADevuelto.isZero() && m('TotalIVADevuelto', r.totalIVADevuelto),
    rules.resumenOtrosCargos && doc.otrosCargos.length > 0 && m('TotalOtrosCargos', r.totalOtrosCargos),
    doc.mediosPago.map(medioPagoXml),
    m('TotalComprobante', r.totalComprobante),
  );
}

export function informacionReferenciaXml(ir: InformacionReferencia): XmlElement {
  return e(
    'InformacionReferencia',
    t('TipoDocIR', ir.tipoDocIR),
    opt('TipoDocRefOTRO', ir.tipoDocRefOtro),
    opt('Numero', ir.numero),
    t('FechaEmisionIR', ir.fechaEmisionIR),
    opt('Codigo', ir.codigo),
    opt('CodigoReferenciaOTRO', ir.codigoReferenciaOtro),
    opt('Razon', ir.razon),
  );
}

// ---------------------------------------------------------------------------------------------

/** The element tree of the unsigned comprobante (for callers that want to add to it). */
export function comprobanteElement(doc: Comprobante, totals: Totals): XmlElement {
  const kind = KINDS[doc.kind];
  const rules = KIND_RULES[doc.kind];
  if (totals.lineas.length !== doc.lineas.length) {
    throw new Error(`totals have ${totals.lineas.length} lines, the document has ${doc.lineas.length}`);
  }
  const lineas = doc.lineas.map((l, i) => lineaDetalleXml(l, totals.lineas[i]!, rules, `lineas[${i}]`));
  const children: XmlChild[] = [
    t('Clave', doc.clave),
    t('ProveedorSistemas', doc.proveedorSistemas),
    rules.codigoActividadEmisor && opt('CodigoActividadEmisor', doc.codigoActividadEmisor),
    rules.codigoActividadReceptor && opt('CodigoActividadReceptor', doc.codigoActividadReceptor),
    t('NumeroConsecutivo', doc.numeroConsecutivo),
    t('FechaEmision', doc.fechaEmision),
    emisorXml(doc.emisor, rules),
    doc.receptor && receptorXml(doc.receptor, rules),
    t('CondicionVenta', doc.condicionVenta),
    rules.condicionVentaDetalle && opt('CondicionVentaOtros', doc.condicionVentaOtros),
    rules.condicionVentaDetalle && doc.plazoCredito !== undefined && e('PlazoCredito', String(doc.plazoCredito)),
    lineas.length > 0 && e('DetalleServicio', lineas),
    rules.otrosCargos && doc.otrosCargos.map(otrosCargosXml),
    resumenFacturaXml(doc, totals.resumen, rules),
    doc.informacionReferencia.map(informacionReferenciaXml),
  ];
  return el(kind.rootName, { xmlns: kind.namespace }, ...children);
}

/** Canonical serialization of the unsigned root element of a comprobante v4.4. */
export function buildComprobanteXml(doc: Comprobante, totals: Totals): string {
  return serialize(comprobanteElement(doc, totals));
}
