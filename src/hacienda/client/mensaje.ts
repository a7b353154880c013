/**
 * Reading Hacienda's answer (MensajeHacienda, NOTES §6.1) as it comes back in `respuesta-xml`, and the
 * error list inside its DetalleMensaje (`[codigo, "mensaje", fila, columna]` lines).
 * Read-only summary for the client; amounts stay decimal strings.
 */
import { parseMensajeHaciendaXml, type MensajeHaciendaData } from '../../core/xml/parse-mensaje.js';

export interface MensajeHaciendaError {
  /** Hacienda's code; null for a line that is a plain sentence (Hacienda lists signature failures so). */
  codigo: number | null;
  mensaje: string;
  fila: number;
  columna: number;
}

/** The parsed MensajeHacienda (core parser), plus the errors listed in DetalleMensaje. */
export interface MensajeHaciendaSummary extends MensajeHaciendaData {
  /** Errors listed in DetalleMensaje (`[codigo, "mensaje", fila, columna]` lines). */
  errores: MensajeHaciendaError[];
  /** True when the XML carries a ds:Signature (not verified here). */
  signed: boolean;
}

/** Parses a MensajeHacienda (v4.4, v4.3 or v4.2 namespace); undefined when the XML is not one. */
export function parseMensajeHaciendaSummary(xml: Buffer | string): MensajeHaciendaSummary | undefined {
  let data: MensajeHaciendaData;
  try {
    data = parseMensajeHaciendaXml(typeof xml === 'string' ? xml : xml.toString('utf8'));
  } catch {
    return undefined;
  }
  return { ...data, errores: data.detalleMensaje ? parseDetalleErrors(data.detalleMensaje) : [], signed: data.signatureCount > 0 };
}

const LIST_HEADER = 'codigo, mensaje, fila, columna';
/** `-52, ""text"", 0, 0` (Hacienda, text between doubled quotes, `\"` inside) or `-52, "text", 0, 0`. */
const CODED = /^\s*\[?\s*(-?\d+)\s*,\s*(?:""(.*)""|"((?:[^"\\]|\\.|"")*)")\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*\]?\s*,?\s*$/;

/**
 * The list of a DetalleMensaje, as Hacienda writes it (NOTES §6.3): after the `codigo, mensaje, fila, columna`
 * heading, one `codigo, ""mensaje"", fila, columna` line per item, lines ending in CR LF; a line without a code
 * is a plain sentence (signature failures). Also reads the single-quoted form of older answers. Lines outside the
 * list (the opening sentence, or production's lone `.`; the "tiene los siguientes errores" heading, the brackets) are
 * not items.
 */
export function parseDetalleErrors(detalle: string): MensajeHaciendaError[] {
  const out: MensajeHaciendaError[] = [];
  let inList = false;
  for (const raw of detalle.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (line === LIST_HEADER || line === `[${LIST_HEADER}`) {
      inList = true;
      continue;
    }
    const m = CODED.exec(line);
    if (m) {
      const text = m[2] !== undefined ? m[2].replace(/\\"/g, '"') : m[3]!.replace(/""/g, '"').replace(/\\"/g, '"');
      out.push({ codigo: Number(m[1]), mensaje: text, fila: Number(m[4]), columna: Number(m[5]) });
      continue;
    }
    if (!inList || line === '' || line === '[' || line === ']') continue;
    out.push({ codigo: null, mensaje: line, fila: 0, columna: 0 });
  }
  return out;
}

/** One item of the list: coded (`-52, ""…"", 0, 0`) or a plain sentence. */
export interface DetalleItem {
  codigo: number;
  mensaje: string;
  fila?: number;
  columna?: number;
  /** A plain sentence, without code, fila and columna. */
  sinCodigo?: boolean;
}

/**
 * DetalleMensaje as Hacienda writes it (NOTES §6.3, the inverse of parseDetalleErrors): the opening (the sandbox's
 * sentence; production's `.`), alone when there is no item, else an empty line, then the items. Accepted (warnings
 * only): the list heading and the items, without the "errores" heading. Rejected: "El comprobante electrónico tiene
 * los siguientes errores: ", the bracketed list, an empty line before the closing bracket. Line ends inside the list
 * are CR LF.
 */
export function formatDetalleMensaje(opening: string, accepted: boolean, items: readonly DetalleItem[]): string {
  if (items.length === 0) return opening;
  const lines = items.map((e) => (e.sinCodigo ? e.mensaje : `${e.codigo}, ""${e.mensaje.replace(/"/g, '\\"').replace(/\r?\n/g, ' ')}"", ${e.fila ?? 0}, ${e.columna ?? 0}`));
  const list = `${LIST_HEADER}\r\n${lines.map((l) => `${l}\r\n`).join('')}`;
  if (accepted) return `${opening}\n\n${list}`;
  return `${opening}\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\n${list}\r\n]`;
}

/** The list alone, as in a rejection (kept for callers that format a few errors). */
export function formatDetalleErrors(errors: readonly DetalleItem[]): string {
  return formatDetalleMensaje('', false, errors).replace(/^\n\n/, '');
}
