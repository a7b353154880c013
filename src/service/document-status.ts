/**
 * A stored document row → the client API's DocumentStatus (src/api/contract.ts). One mapping for the client API's
 * `/api/consultar/estado` and `/api/consultar/documentos` and for the local backend, so both modes print the same.
 */
import type { MailStatus } from '../api/contract.js';
import type { DocumentSummary } from './documents.js';
import type { DocumentStatus } from '../api/contract.js';
import { parseDetalleMensaje } from '../core/xml/detalle-mensaje.js';

/** `mail`: the document's latest mail to its receptor (null: none). */
export function documentStatusFromRow(row: Omit<DocumentSummary, 'id' | 'account_id' | 'issuer_id' | 'body_hash'>, mail: MailStatus | null = null): DocumentStatus {
  return {
    clave: row.clave,
    estado: row.state,
    mensaje: row.mensaje === null ? null : Number(row.mensaje),
    detalleMensaje: row.detalle_mensaje,
    // Hacienda's list as data; under aceptado every item is a warning.
    errores: parseDetalleMensaje(row.detalle_mensaje, { aceptado: row.state === 'aceptado' }),
    kind: row.kind,
    // Clave positions 22–41 are the NumeroConsecutivo.
    numeroConsecutivo: row.clave.slice(21, 41),
    fechaEmision: row.fecha_emision,
    totalComprobante: row.total_comprobante,
    moneda: row.moneda,
    receptorNombre: row.receptor_nombre,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    decidedAt: row.decided_at === null ? null : new Date(Number(row.decided_at)).toISOString(),
    correo: mail,
  };
}
