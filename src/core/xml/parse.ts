/**
 * Parsing of received XML with fast-xml-parser 5:
 * - MensajeHacienda / MensajeReceptor (v4.4; v4.3 and v4.2 namespaces tolerated);
 * - comprobantes v4.4 (what an emulator needs to check a received document and recompute its
 *   totals independently).
 * Every value stays a string: numbers are never parsed (claves keep their leading zeros, money
 * never becomes a float). Namespace prefixes are accepted on any element (`<fe:Clave>`); names
 * are matched by local name. Entities (the five XML ones and numeric references) are decoded
 * here in one pass, CDATA is honoured, and DOCTYPE is refused (no entity expansion attacks).
 */
import { XMLParser } from 'fast-xml-parser';
import type { DocumentKind } from '../model.js';
import { escapeText } from './canonical.js';
import { KINDS, kindOfRoot, MENSAJE_HACIENDA, MENSAJE_RECEPTOR, NS_BASE_V42, NS_BASE_V43, NS_BASE_V44 } from './kinds.js';

export { buildMensajeHaciendaXml, buildMensajeReceptorXml } from './mensaje.js';
export type { MensajeHaciendaInput, MensajeReceptorInput } from './mensaje.js';

export class XmlParseError extends Error {
  override name = 'XmlParseError';
}

// ---------------------------------------------------------------------------------------------
// Generic layer: XML text → {rootName, namespace, body} with local names as keys.

type Node = string | NodeObject | Node[];
interface NodeObject {
  [key: string]: Node;
}

const ENTITY_RE = /&(?:#x([0-9a-fA-F]+)|#([0-9]+)|(lt|gt|amp|quot|apos));/g;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML end-of-line normalization of literal CRs, then entity decoding (`&#xD;` stays a CR). */
function decodeEntities(raw: string): string {
  const s = raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw;
  if (!s.includes('&')) return s;
  return s.replace(ENTITY_RE, (whole, hex: string | undefined, decimal: string | undefined, name: string | undefined) => {
    if (name) return NAMED[name]!;
    const cp = hex !== undefined ? parseInt(hex, 16) : parseInt(decimal!, 10);
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
  });
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  tagValueProcessor: (_name: string, value: string) => decodeEntities(value),
  attributeValueProcessor: (_name: string, value: string) => decodeEntities(value),
});

function localName(key: string): string {
  const i = key.indexOf(':');
  return i < 0 ? key : key.slice(i + 1);
}

/** Re-keys an object tree by local names (attributes and #text kept), merging same-named siblings. */
function stripPrefixes(node: Node): Node {
  if (typeof node === 'string') return node;
  if (Array.isArray(node)) return node.map(stripPrefixes);
  const out: NodeObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('@_xmlns')) continue;
    const name = key.startsWith('@_') ? '@_' + localName(key.slice(2)) : key === '#text' ? key : localName(key);
    const v = stripPrefixes(value);
    const prev = out[name];
    if (prev === undefined) out[name] = v;
    else out[name] = ([] as Node[]).concat(prev, v);
  }
  return out;
}

export interface RawDocument {
  rootName: string;
  namespace: string | undefined;
  body: NodeObject;
}

export function parseXmlRoot(xml: string): RawDocument {
  if (/<!DOCTYPE/i.test(xml)) throw new XmlParseError('DOCTYPE declarations are not allowed');
  // CDATA → escaped text, so every text node goes through the same entity decoding.
  const text = xml.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_m, c: string) => escapeText(c));
  let tree: NodeObject;
  try {
    tree = parser.parse(text, true) as NodeObject;
  } catch (err) {
    throw new XmlParseError(`not well-formed XML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const roots = Object.keys(tree).filter((k) => !k.startsWith('?') && !k.startsWith('#'));
  if (roots.length !== 1) throw new XmlParseError('expected exactly one root element');
  const rootKey = roots[0]!;
  const root = tree[rootKey];
  if (Array.isArray(root)) throw new XmlParseError('expected exactly one root element');
  const prefix = rootKey.includes(':') ? rootKey.slice(0, rootKey.indexOf(':')) : undefined;
  let namespace: string | undefined;
  let body: NodeObject = {};
  if (typeof root === 'object') {
    const ns = root[prefix ? `@_xmlns:${prefix}` : '@_xmlns'];
    namespace = typeof ns === 'string' ? ns : undefined;
    body = stripPrefixes(root) as NodeObject;
  }
  return { rootName: localName(rootKey), namespace, body };
}

/** The DOM interfaces `rawFromDom` reads (structural, so any W3C-like DOM such as @xmldom/xmldom fits). */
export interface DomNodeLike {
  nodeType: number;
  nodeName: string;
  localName?: string | null;
  namespaceURI?: string | null;
  nodeValue?: string | null;
  firstChild: DomNodeLike | null;
  nextSibling: DomNodeLike | null;
  attributes?: { length: number; [index: number]: { name: string; value: string } } | null;
}

/**
 * The same tree `parseXmlRoot` builds, from an already parsed DOM (element or document): one parse of a
 * received document can then serve both the signature verification (which needs a DOM) and the typed
 * views below. The DOM must come from a parser that decodes entities and CDATA (xmldom does) and the
 * text must have passed a well-formedness check; DOCTYPE is refused here too. As with fast-xml-parser,
 * each run of text between child elements is trimmed (comments and processing instructions are dropped and
 * do not split a run), runs are concatenated, attributes are keyed `@_localName` without `xmlns` declarations.
 */
export function rawFromDom(node: DomNodeLike): RawDocument {
  let root: DomNodeLike | null = node;
  if (node.nodeType === 9) {
    root = null;
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 10) throw new XmlParseError('DOCTYPE declarations are not allowed');
      if (c.nodeType === 1) {
        if (root) throw new XmlParseError('expected exactly one root element');
        root = c;
      }
    }
    if (!root) throw new XmlParseError('expected exactly one root element');
  }
  const body = domElementValue(root);
  return {
    rootName: localName(root.nodeName),
    namespace: root.namespaceURI ?? undefined,
    body: typeof body === 'string' ? {} : (body as NodeObject),
  };
}

function domElementValue(e: DomNodeLike): Node {
  let out: NodeObject | undefined;
  const attrs = e.attributes;
  if (attrs) {
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs[i]!;
      if (a.name.startsWith('xmlns')) continue;
      (out ??= {})['@_' + localName(a.name)] = a.value.trim();
    }
  }
  let text = '';
  let run = '';
  for (let c = e.firstChild; c; c = c.nextSibling) {
    const t = c.nodeType;
    if (t === 3 || t === 4) {
      run += c.nodeValue ?? '';
      continue;
    }
    if (t !== 1) continue; // comments and processing instructions do not split the text
    if (run !== '') {
      text += run.trim();
      run = '';
    }
    const name = localName(c.nodeName);
    const v = domElementValue(c);
    out ??= {};
    const prev = out[name];
    if (prev === undefined) out[name] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[name] = [prev, v];
  }
  if (run !== '') text += run.trim();
  if (!out) return text;
  if (text !== '') out['#text'] = text;
  return out;
}

function textOf(node: Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (typeof node === 'string') return node;
  if (Array.isArray(node)) return textOf(node[0]);
  const t = node['#text'];
  return typeof t === 'string' ? t : t === undefined ? '' : textOf(t);
}

function list(node: Node | undefined): Node[] {
  if (node === undefined) return [];
  return Array.isArray(node) ? node : [node];
}

function obj(node: Node | undefined): NodeObject {
  if (node === undefined || typeof node === 'string') return {};
  if (Array.isArray(node)) return obj(node[0]);
  return node;
}

/** A view on one element's children with required/optional accessors that report paths. */
class Reader {
  constructor(
    readonly node: NodeObject,
    readonly path: string,
  ) {}
  static of(node: Node | undefined, path: string): Reader {
    return new Reader(obj(node), path);
  }
  has(name: string): boolean {
    return this.node[name] !== undefined;
  }
  opt(name: string): string | undefined {
    return textOf(this.node[name]);
  }
  req(name: string): string {
    const v = this.opt(name);
    if (v === undefined) throw new XmlParseError(`${this.path}: missing element ${name}`);
    return v;
  }
  all(name: string): Reader[] {
    return list(this.node[name]).map((n, i, a) => Reader.of(n, a.length > 1 ? `${this.path}/${name}[${i + 1}]` : `${this.path}/${name}`));
  }
  texts(name: string): string[] {
    return list(this.node[name]).map((n) => textOf(n) ?? '');
  }
  child(name: string): Reader | undefined {
    const n = this.node[name];
    return n === undefined ? undefined : Reader.of(n, `${this.path}/${name}`);
  }
  reqChild(name: string): Reader {
    const c = this.child(name);
    if (!c) throw new XmlParseError(`${this.path}: missing element ${name}`);
    return c;
  }
}

// ---------------------------------------------------------------------------------------------
// MensajeHacienda / MensajeReceptor

export type MensajeVersion = '4.4' | '4.3' | '4.2';

function versionOf(namespace: string | undefined, lowerCamel: string): MensajeVersion | undefined {
  if (namespace === NS_BASE_V44 + lowerCamel) return '4.4';
  if (namespace === NS_BASE_V43 + lowerCamel) return '4.3';
  if (namespace === NS_BASE_V42 + lowerCamel) return '4.2';
  return undefined;
}

function mensajeCode(value: string, path: string): 1 | 2 | 3 {
  const v = value.trim();
  if (v === '1' || v === '2' || v === '3') return Number(v) as 1 | 2 | 3;
  throw new XmlParseError(`${path}/Mensaje: expected 1, 2 or 3, got "${value}"`);
}

export interface MensajeHaciendaData {
  version: MensajeVersion;
  clave: string;
  nombreEmisor: string;
  tipoIdentificacionEmisor: string;
  numeroCedulaEmisor: string;
  nombreReceptor?: string;
  tipoIdentificacionReceptor?: string;
  numeroCedulaReceptor?: string;
  mensaje: 1 | 2 | 3;
  estadoMensaje?: string;
  detalleMensaje?: string;
  montoTotalImpuesto?: string;
  totalFactura?: string;
  /** Number of ds:Signature children of the root. */
  signatureCount: number;
}

export interface MensajeReceptorData {
  version: MensajeVersion;
  clave: string;
  numeroCedulaEmisor: string;
  fechaEmisionDoc: string;
  mensaje: 1 | 2 | 3;
  detalleMensaje?: string;
  montoTotalImpuesto?: string;
  codigoActividad?: string;
  condicionImpuesto?: string;
  montoTotalImpuestoAcreditar?: string;
  montoTotalDeGastoAplicable?: string;
  totalFactura: string;
  numeroCedulaReceptor: string;
  numeroConsecutivoReceptor: string;
  signatureCount: number;
}

function expectRoot(raw: RawDocument, rootName: string, lowerCamel: string): MensajeVersion {
  if (raw.rootName !== rootName) throw new XmlParseError(`expected a ${rootName}, got ${raw.rootName}`);
  const version = versionOf(raw.namespace, lowerCamel);
  if (!version) throw new XmlParseError(`${rootName}: unknown namespace "${raw.namespace ?? ''}"`);
  return version;
}

function mensajeHaciendaFrom(raw: RawDocument): MensajeHaciendaData {
  const version = expectRoot(raw, MENSAJE_HACIENDA.rootName, 'mensajeHacienda');
  const r = new Reader(raw.body, `/${raw.rootName}`);
  return {
    version,
    clave: r.req('Clave'),
    nombreEmisor: r.req('NombreEmisor'),
    tipoIdentificacionEmisor: r.req('TipoIdentificacionEmisor'),
    numeroCedulaEmisor: r.req('NumeroCedulaEmisor'),
    nombreReceptor: r.opt('NombreReceptor'),
    tipoIdentificacionReceptor: r.opt('TipoIdentificacionReceptor'),
    numeroCedulaReceptor: r.opt('NumeroCedulaReceptor'),
    mensaje: mensajeCode(r.req('Mensaje'), r.path),
    estadoMensaje: r.opt('EstadoMensaje'),
    detalleMensaje: r.opt('DetalleMensaje'),
    montoTotalImpuesto: r.opt('MontoTotalImpuesto'),
    totalFactura: r.opt('TotalFactura'),
    signatureCount: list(raw.body['Signature']).length,
  };
}

function mensajeReceptorFrom(raw: RawDocument): MensajeReceptorData {
  const version = expectRoot(raw, MENSAJE_RECEPTOR.rootName, 'mensajeReceptor');
  const r = new Reader(raw.body, `/${raw.rootName}`);
  return {
    version,
    clave: r.req('Clave'),
    numeroCedulaEmisor: r.req('NumeroCedulaEmisor'),
    fechaEmisionDoc: r.req('FechaEmisionDoc'),
    mensaje: mensajeCode(r.req('Mensaje'), r.path),
    detalleMensaje: r.opt('DetalleMensaje'),
    montoTotalImpuesto: r.opt('MontoTotalImpuesto'),
    codigoActividad: r.opt('CodigoActividad'),
    condicionImpuesto: r.opt('CondicionImpuesto'),
    montoTotalImpuestoAcreditar: r.opt('MontoTotalImpuestoAcreditar'),
    montoTotalDeGastoAplicable: r.opt('MontoTotalDeGastoAplicable'),
    totalFactura: r.req('TotalFactura'),
    numeroCedulaReceptor: r.req('NumeroCedulaReceptor'),
    numeroConsecutivoReceptor: r.req('NumeroConsecutivoReceptor'),
    signatureCount: list(raw.body['Signature']).length,
  };
}

export function parseMensajeHaciendaXml(xml: string): MensajeHaciendaData {
  return mensajeHaciendaFrom(parseXmlRoot(xml));
}

export function parseMensajeReceptorXml(xml: string): MensajeReceptorData {
  return mensajeReceptorFrom(parseXmlRoot(xml));
}

export type ParsedMensaje = ({ type: 'MensajeHacienda' } & MensajeHaciendaData) | ({ type: 'MensajeReceptor' } & MensajeReceptorData);

/** Either message, told apart by its root element. */
export function parseMensajeXml(xml: string): ParsedMensaje {
  return mensajeFrom(parseXmlRoot(xml));
}

function mensajeFrom(raw: RawDocument): ParsedMensaje {
  if (raw.rootName === MENSAJE_HACIENDA.rootName) return { type: 'MensajeHacienda', ...mensajeHaciendaFrom(raw) };
  if (raw.rootName === MENSAJE_RECEPTOR.rootName) return { type: 'MensajeReceptor', ...mensajeReceptorFrom(raw) };
  throw new XmlParseError(`expected MensajeHacienda or MensajeReceptor, got ${raw.rootName}`);
}

/** `parseMensajeXml` on an already parsed DOM (see `rawFromDom`). */
export function parseMensajeDom(node: DomNodeLike): ParsedMensaje {
  return mensajeFrom(rawFromDom(node));
}

// ---------------------------------------------------------------------------------------------
// Comprobantes v4.4

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
  receptor?: { nombre: string; identificacion?: ParsedIdentificacion; correoElectronico?: string };
  condicionVenta: string;
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
    },
    condicionVenta: r.req('CondicionVenta'),
    plazoCredito: r.opt('PlazoCredito'),
    lineas: detalle ? detalle.all('LineaDetalle').map(linea) : [],
    otrosCargos: r.all('OtrosCargos').map((o) => ({
      tipoDocumento: o.req('TipoDocumentoOC'),
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
