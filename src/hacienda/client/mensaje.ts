/**
 * Reading Hacienda's answer (MensajeHacienda, NOTES §6.1) as it comes back in `respuesta-xml`, and the
 * list inside its DetalleMensaje (read by core/xml/detalle-mensaje.ts).
 * Read-only summary for the client; amounts stay decimal strings.
 */
import { parseDetalleMensaje, type ErrorHacienda } from '../../core/xml/detalle-mensaje.js';
import { parseMensajeHaciendaXml, type MensajeHaciendaData } from '../../core/xml/parse-mensaje.js';

/** One item of DetalleMensaje's list (core/xml/detalle-mensaje.ts). */
export type MensajeHaciendaError = ErrorHacienda;

/** The parsed MensajeHacienda (core parser), plus the errors listed in DetalleMensaje. */
export interface MensajeHaciendaSummary extends MensajeHaciendaData {
  /** The items listed in DetalleMensaje (`codigo, ""mensaje"", fila, columna` lines), warnings marked `aviso`. */
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
  return { ...data, errores: parseDetalleMensaje(data.detalleMensaje, { aceptado: data.mensaje === 1 }), signed: data.signatureCount > 0 };
}

export { formatDetalleErrors, formatDetalleMensaje, parseDetalleMensaje, type DetalleItem, type ErrorHacienda } from '../../core/xml/detalle-mensaje.js';
