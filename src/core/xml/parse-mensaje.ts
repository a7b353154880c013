/**
 * Parsing of a received MensajeHacienda or MensajeReceptor (v4.4; the v4.3 and v4.2 namespaces tolerated).
 * Throws XmlParseError for malformed XML, another root or a missing element.
 */
import type { MensajeHaciendaParties } from './mensaje.js';
import { MENSAJE_HACIENDA, MENSAJE_RECEPTOR, NS_BASE_V42, NS_BASE_V43, NS_BASE_V44 } from './kinds.js';
import { list, parseXmlRoot, rawFromDom, Reader, XmlParseError, type DomNodeLike, type RawDocument } from './raw-document.js';

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

export interface MensajeHaciendaData extends MensajeHaciendaParties {
  version: MensajeVersion;
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
