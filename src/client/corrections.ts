/**
 * Issue 30: annul a comprobante (an NC), replace one Hacienda rejected, record a payment against a credit sale (a REP),
 * and who references a comprobante with its balance (`fecr status`). Types only (the interface is in backend.ts, beside
 * Backend, so that the two do not import each other): the local and
 * remote ends are in client/corrections-backends.ts (the use cases in service/corrections.ts; the hosted service's
 * routes in src/server/api-documentos.ts).
 */
export type { DocumentLinks, PaymentRequest, ReferenciaDe } from '../service/corrections.js';
export type { CorrectionsApi } from './backend.js';
