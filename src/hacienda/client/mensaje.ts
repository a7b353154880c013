/**
 * Reading Hacienda's answer (MensajeHacienda, NOTES §6.1) as it comes back in `respuesta-xml`, and the
 * error list inside its DetalleMensaje (`[codigo, "mensaje", fila, columna]` lines).
 * Read-only summary for the client; amounts stay decimal strings.
 */
import { parseMensajeHaciendaXml, type MensajeHaciendaData } from '../../core/xml/parse.js';

export interface MensajeHaciendaError {
  codigo: number;
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

/**
 * Extracts `codigo, "mensaje", fila, columna` lines (optionally bracketed) from a DetalleMensaje text.
 * Lines that do not have that shape are ignored.
 */
export function parseDetalleErrors(detalle: string): MensajeHaciendaError[] {
  const out: MensajeHaciendaError[] = [];
  const re = /^\s*\[?\s*(-?\d+)\s*,\s*"((?:[^"\\]|\\.|"")*)"\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*\]?\s*,?\s*$/;
  for (const line of detalle.split(/\r?\n/)) {
    const m = re.exec(line);
    if (!m) continue;
    out.push({ codigo: Number(m[1]), mensaje: m[2]!.replace(/""/g, '"').replace(/\\"/g, '"'), fila: Number(m[3]), columna: Number(m[4]) });
  }
  return out;
}

/** Formats errors the way Hacienda lists them in DetalleMensaje (inverse of parseDetalleErrors). */
export function formatDetalleErrors(errors: readonly { codigo: number; mensaje: string; fila?: number; columna?: number }[]): string {
  const lines = errors.map((e) => `${e.codigo}, "${e.mensaje.replace(/"/g, '""').replace(/\r?\n/g, ' ')}", ${e.fila ?? 0}, ${e.columna ?? 0}`);
  return ['[', 'codigo, mensaje, fila, columna', ...lines, ']'].join('\n');
}
