/**
 * Synchronous checks of the POST /recepcion JSON body (OAS `RecepcionPostRequest`, NOTES §4.3). A failure
 * becomes 400 with `X-Error-Cause` and `validation-exception: true`, like Hacienda.
 */
import { parseIsoDateTime } from '../core/dates.js';
import type { IdRef } from './store.js';

export interface RecepcionPost {
  clave: string;
  fecha: string;
  emisor: IdRef;
  receptor?: IdRef;
  callbackUrl?: string;
  consecutivoReceptor?: string;
  xml: Buffer;
}

/** Base64 with padding: this plus a length that is a multiple of 4 (cheaper than matching groups of four). */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

function party(v: unknown, name: 'emisor' | 'receptor'): IdRef | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `El campo ${name} debe ser un objeto con tipoIdentificacion y numeroIdentificacion.`;
  const o = v as Record<string, unknown>;
  const tipo = o['tipoIdentificacion'];
  const numero = o['numeroIdentificacion'];
  if (typeof tipo !== 'string' || tipo === '') return `El campo ${name}.tipoIdentificacion es requerido.`;
  if (!/^\d{2}$/.test(tipo)) return `El campo ${name}.tipoIdentificacion no es válido (2 dígitos).`;
  if (typeof numero !== 'string' || numero === '') return `El campo ${name}.numeroIdentificacion es requerido.`;
  if (numero.length > 12) return `El campo ${name}.numeroIdentificacion excede el largo máximo de 12 caracteres.`;
  if (!/^[A-Za-z0-9]+$/.test(numero)) return `El campo ${name}.numeroIdentificacion no es válido.`;
  return { tipoIdentificacion: tipo, numeroIdentificacion: numero };
}

/** The validated body, or the X-Error-Cause text. */
export function parseRecepcionPost(body: unknown): RecepcionPost | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'El cuerpo de la solicitud debe ser un objeto JSON.';
  const b = body as Record<string, unknown>;
  const clave = b['clave'];
  if (typeof clave !== 'string' || clave === '') return 'El campo clave es requerido.';
  if (clave.length > 50) return 'El campo clave excede el largo máximo de 50 caracteres.';
  if (!/^[A-Za-z0-9]{50}$/.test(clave)) return `La clave [${clave}] no es válida: debe tener 50 caracteres alfanuméricos.`;
  const fecha = b['fecha'];
  if (typeof fecha !== 'string' || fecha === '') return 'El campo fecha es requerido.';
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(fecha) || !parseIsoDateTime(fecha)) {
    return `El campo fecha [${fecha}] no tiene el formato yyyy-MM-dd'T'HH:mm:ssZ (RFC 3339).`;
  }
  const emisor = party(b['emisor'], 'emisor');
  if (typeof emisor === 'string') return b['emisor'] === undefined ? 'El campo emisor es requerido.' : emisor;
  const out: RecepcionPost = { clave, fecha, emisor, xml: Buffer.alloc(0) };
  if (b['receptor'] !== undefined && b['receptor'] !== null) {
    const receptor = party(b['receptor'], 'receptor');
    if (typeof receptor === 'string') return receptor;
    out.receptor = receptor;
  }
  const cb = b['callbackUrl'];
  if (cb !== undefined && cb !== null && cb !== '') {
    if (typeof cb !== 'string') return 'El campo callbackUrl debe ser texto.';
    let u: URL;
    try {
      u = new URL(cb);
    } catch {
      return `El campo callbackUrl [${cb}] no es un URL válido.`;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return `El campo callbackUrl [${cb}] debe usar http o https.`;
    out.callbackUrl = cb;
  }
  const cr = b['consecutivoReceptor'];
  if (cr !== undefined && cr !== null && cr !== '') {
    if (typeof cr !== 'string' || !/^\d{20}$/.test(cr)) return 'El campo consecutivoReceptor debe tener 20 dígitos.';
    if (!out.receptor) return 'El campo receptor es requerido para un mensaje de confirmación del receptor.';
    out.consecutivoReceptor = cr;
  }
  const x = b['comprobanteXml'];
  if (typeof x !== 'string' || x === '') return 'El campo comprobanteXml es requerido.';
  const compact = /\s/.test(x) ? x.replace(/\s+/g, '') : x;
  if (compact.length % 4 !== 0 || !BASE64_CHARS.test(compact)) return 'El campo comprobanteXml debe estar codificado en Base64.';
  out.xml = Buffer.from(compact, 'base64');
  if (out.xml.length === 0) return 'El campo comprobanteXml está vacío.';
  return out;
}
