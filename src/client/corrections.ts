/**
 * Issue 30: annul a comprobante (an NC), replace one Hacienda rejected, record a payment against a credit sale (a REP),
 * and who references a comprobante with its balance (`fecr status`). Types only, as client/reports.ts: the local and
 * remote ends are in client/corrections-backends.ts (the use cases in service/corrections.ts; the hosted service's
 * routes in src/server/api-documentos.ts).
 */
import type { SubmitOutcome } from './backend.js';
import type { DocumentLinks, PaymentRequest } from '../service/corrections.js';

export type { DocumentLinks, PaymentRequest, ReferenciaDe } from '../service/corrections.js';

export interface CorrectionsApi {
  /** Signs and queues the NC that annuls an accepted comprobante in full (as `submit` does a body). */
  annul(clave: string, opts?: { razon?: string }): Promise<SubmitOutcome>;
  /** Signs and queues `body` as the replacement of a rejected comprobante (CodigoReferencia 16, TipoDocIR 10). */
  replace(clave: string, body: unknown, opts?: { razon?: string }): Promise<SubmitOutcome>;
  /** Signs and queues the REP of a payment received against an accepted credit sale. */
  payment(clave: string, p: PaymentRequest): Promise<SubmitOutcome>;
  /** The documents that reference a comprobante, and a sale's balance; null for an unknown clave. */
  links(clave: string): Promise<DocumentLinks | null>;
}
