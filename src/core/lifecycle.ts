/**
 * The life of a document, in one place: its states from submission to Hacienda's verdict, which of them are final,
 * which kind each `tipoDoc` of the spec's body names, and what a clave looks like.
 *
 *   pendiente (stored, queued) → enviado (POSTed) → recibido → procesando → aceptado | rechazado | error
 */
import type { DocumentKind } from './model.js';

export { isClave, CLAVE_PATTERN } from './clave.js';

export const DOCUMENT_STATES = ['pendiente', 'enviado', 'recibido', 'procesando', 'aceptado', 'rechazado', 'error'] as const;
export type DocumentState = (typeof DOCUMENT_STATES)[number];

/** Hacienda has decided: nothing more happens to the document (but its webhook and the poll's last answer). */
export const FINAL_STATES: readonly DocumentState[] = ['aceptado', 'rechazado', 'error'];

export function isFinalState(state: string): boolean {
  return (FINAL_STATES as readonly string[]).includes(state);
}

export function isDocumentState(state: string): state is DocumentState {
  return (DOCUMENT_STATES as readonly string[]).includes(state);
}

/** The spec's `tipoDoc` (Hacienda's code, with or without its leading zero) → the kind of comprobante. */
export const KIND_OF_TIPO_DOC: Readonly<Record<string, DocumentKind>> = { '1': 'FE', '01': 'FE', '3': 'NC', '03': 'NC', '4': 'TE', '04': 'TE' };
