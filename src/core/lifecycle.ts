/**
 * The life of a document, in one place: its states from submission to Hacienda's verdict, which of them are final,
 * which kind each `tipoDoc` of the spec's body names, and what a clave looks like.
 *
 *   pendiente (stored, queued) → enviado (POSTed) → recibido → procesando → aceptado | rechazado | error
 *
 * and fecr's own `credenciales_invalidas` (an extension: the spec names no document states): Hacienda's IdP refused
 * the issuer's usuarioHacienda/claveHacienda, so the document is held, not sent, and nothing of that issuer is tried
 * again until its credentials are updated; then it is `pendiente` again and sent (service/delivery/credentials.ts).
 */
import type { DocumentKind } from './model.js';
import { codeTable } from './code-table.js';

export { isClave, CLAVE_PATTERN } from './clave.js';

export const DOCUMENT_STATES = ['pendiente', 'credenciales_invalidas', 'enviado', 'recibido', 'procesando', 'aceptado', 'rechazado', 'error'] as const;
export type DocumentState = (typeof DOCUMENT_STATES)[number];

/** Held: the issuer's Hacienda credentials were refused; the document waits for `emisor update`, not for Hacienda. */
export const CREDENTIALS_REFUSED = 'credenciales_invalidas' satisfies DocumentState;

/** States in which nothing happens until the user acts (a wait for a verdict ends there too). */
export const HELD_STATES: readonly DocumentState[] = [CREDENTIALS_REFUSED];

/** Hacienda has decided: nothing more happens to the document (but its webhook and the poll's last answer). */
export const FINAL_STATES: readonly DocumentState[] = ['aceptado', 'rechazado', 'error'];

/** The spec's `tipoDoc` (Hacienda's code, with or without its leading zero) → the kind of comprobante. */
export const KIND_OF_TIPO_DOC: Readonly<Record<string, DocumentKind>> = codeTable({
  '1': 'FE', '01': 'FE',
  '2': 'ND', '02': 'ND',
  '3': 'NC', '03': 'NC',
  '4': 'TE', '04': 'TE',
  '8': 'FEC', '08': 'FEC',
  '9': 'FEE', '09': 'FEE',
  '10': 'REP',
});

/** The spec's `tipoDoc` of each kind (Hacienda's code without its leading zero). */
export const TIPO_DOC_OF_KIND: Readonly<Record<DocumentKind, string>> = { FE: '1', ND: '2', NC: '3', TE: '4', FEC: '8', FEE: '9', REP: '10' };
