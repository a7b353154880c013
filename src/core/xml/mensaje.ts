/**
 * Builders of MensajeHacienda (Hacienda's answer; the emulator signs and sends one) and
 * MensajeReceptor (a receiver's acceptance), canonical by construction (NOTES §6).
 * Like comprobantes, the unsigned root declares only its default namespace; the signer adds
 * ds:Signature before the closing tag.
 */
import { dec, money, type Decimal } from '../money.js';
import { el, INVALID_XML_CHARS, serialize, type XmlChild, type XmlElement } from './canonical.js';
import { MENSAJE_HACIENDA, MENSAJE_RECEPTOR } from './kinds.js';

/** What a MensajeHacienda is about: the document's clave, its emisor and (when the document has one) its receptor. */
export interface MensajeHaciendaParties {
  clave: string;
  nombreEmisor: string;
  tipoIdentificacionEmisor: string;
  numeroCedulaEmisor: string;
  nombreReceptor?: string;
  tipoIdentificacionReceptor?: string;
  numeroCedulaReceptor?: string;
}

export interface MensajeHaciendaInput extends MensajeHaciendaParties {
  /** 1 Aceptado, 3 Rechazado (2 is not used by Hacienda). */
  mensaje: 1 | 3;
  /** Defaults to "Aceptado" / "Rechazado" (max 9 characters). */
  estadoMensaje?: string;
  detalleMensaje: string;
  montoTotalImpuesto?: Decimal | string;
  totalFactura: Decimal | string;
}

export interface MensajeReceptorInput {
  clave: string;
  /** Cédula of the issuer (seller) of the confirmed document. */
  numeroCedulaEmisor: string;
  /** xs:dateTime of the confirmation. */
  fechaEmisionDoc: string;
  /** 1 Aceptado, 2 Aceptado parcialmente, 3 Rechazado. */
  mensaje: 1 | 2 | 3;
  detalleMensaje?: string;
  montoTotalImpuesto?: Decimal | string;
  codigoActividad?: string;
  condicionImpuesto?: string;
  montoTotalImpuestoAcreditar?: Decimal | string;
  montoTotalDeGastoAplicable?: Decimal | string;
  totalFactura: Decimal | string;
  numeroCedulaReceptor: string;
  numeroConsecutivoReceptor: string;
}

function e(name: string, ...children: XmlChild[]): XmlElement {
  return el(name, children);
}

function t(name: string, value: string): XmlElement {
  if (INVALID_XML_CHARS.test(value)) throw new Error(`${name}: contains a character not allowed in XML`);
  return e(name, value);
}

function opt(name: string, value: string | undefined): XmlElement | undefined {
  return value === undefined || value === '' ? undefined : t(name, value);
}

function amount(name: string, value: Decimal | string | undefined): XmlElement | undefined {
  return value === undefined ? undefined : e(name, money(dec(value)));
}

/** Hacienda writes its amounts with 5 decimals, and a zero as `0` (NOTES §6.3). */
function haciendaAmount(name: string, value: Decimal | string | undefined): XmlElement | undefined {
  if (value === undefined) return undefined;
  const d = dec(value);
  return e(name, d.isZero() ? '0' : money(d));
}

export function mensajeHaciendaElement(m: MensajeHaciendaInput): XmlElement {
  return el(
    MENSAJE_HACIENDA.rootName,
    { xmlns: MENSAJE_HACIENDA.namespace },
    t('Clave', m.clave),
    t('NombreEmisor', m.nombreEmisor),
    t('TipoIdentificacionEmisor', m.tipoIdentificacionEmisor),
    t('NumeroCedulaEmisor', m.numeroCedulaEmisor),
    opt('NombreReceptor', m.nombreReceptor),
    opt('TipoIdentificacionReceptor', m.tipoIdentificacionReceptor),
    opt('NumeroCedulaReceptor', m.numeroCedulaReceptor),
    e('Mensaje', String(m.mensaje)),
    t('EstadoMensaje', m.estadoMensaje ?? (m.mensaje === 1 ? 'Aceptado' : 'Rechazado')),
    t('DetalleMensaje', m.detalleMensaje),
    haciendaAmount('MontoTotalImpuesto', m.montoTotalImpuesto),
    haciendaAmount('TotalFactura', m.totalFactura),
  );
}

/** Canonical serialization of an unsigned MensajeHacienda v4.4. */
export function buildMensajeHaciendaXml(m: MensajeHaciendaInput): string {
  return serialize(mensajeHaciendaElement(m));
}

export function mensajeReceptorElement(m: MensajeReceptorInput): XmlElement {
  return el(
    MENSAJE_RECEPTOR.rootName,
    { xmlns: MENSAJE_RECEPTOR.namespace },
    t('Clave', m.clave),
    t('NumeroCedulaEmisor', m.numeroCedulaEmisor),
    t('FechaEmisionDoc', m.fechaEmisionDoc),
    e('Mensaje', String(m.mensaje)),
    opt('DetalleMensaje', m.detalleMensaje),
    amount('MontoTotalImpuesto', m.montoTotalImpuesto),
    opt('CodigoActividad', m.codigoActividad),
    opt('CondicionImpuesto', m.condicionImpuesto),
    amount('MontoTotalImpuestoAcreditar', m.montoTotalImpuestoAcreditar),
    amount('MontoTotalDeGastoAplicable', m.montoTotalDeGastoAplicable),
    amount('TotalFactura', m.totalFactura),
    t('NumeroCedulaReceptor', m.numeroCedulaReceptor),
    t('NumeroConsecutivoReceptor', m.numeroConsecutivoReceptor),
  );
}

/** Canonical serialization of an unsigned MensajeReceptor v4.4. */
export function buildMensajeReceptorXml(m: MensajeReceptorInput): string {
  return serialize(mensajeReceptorElement(m));
}
