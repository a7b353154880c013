/**
 * Webhook events of the buyer's side (README "Webhook events"), delivered like every other event (Standard Webhooks
 * signing, retries; service/delivery/webhooks.ts runs the `webhook` jobs): a delivery row about a received document
 * (`recibido_id`, no `document_id`) and its job, inside the caller's transaction, when the account has a webhook URL.
 *
 *  - `recibido.importado`: a supplier's comprobante was imported (`estado` `pendiente`, or `invalido` with its
 *    `hallazgos`);
 *  - `recibido.decidido`: the account answered it (`decision` aceptado | parcial | rechazado, the MensajeReceptor's
 *    `consecutivoReceptor`). Hacienda's verdict on that MensajeReceptor then arrives as the usual document event,
 *    `folioId` `<clave>-<consecutivoReceptor>`, with its MensajeHacienda.
 */
import type { Finding } from '../../core/model.js';
import type { Executor } from '../../store/jobs.js';
import { queueWebhookDelivery } from '../../store/webhook-deliveries.js';

export type RecibidoEvent =
  | { type: 'recibido.importado'; estado: string; emisor: string | null; totalComprobante: string | null; hallazgos: Finding[]; avisos: Finding[] }
  | { type: 'recibido.decidido'; decision: 'aceptado' | 'parcial' | 'rechazado'; consecutivoReceptor: string; montoTotalImpuestoAcreditar: string | null; montoTotalDeGastoAplicable: string | null };

/** The payload: the spec's `folioId` (the clave, or the file's sha256 when it has none), `folioType` RECIBIDO, the event. */
export function recibidoPayload(folioId: string, event: RecibidoEvent): Record<string, unknown> {
  return { folioId, folioType: 'RECIBIDO', ...event };
}

export async function queueRecibidoEvent(trx: Executor, now: number, input: { accountId: number; recibidoId: number; folioId: string; event: RecibidoEvent }): Promise<number | null> {
  const suffix = input.event.type === 'recibido.importado' ? 'importado' : `decidido_${input.event.consecutivoReceptor}`;
  return queueWebhookDelivery(trx, now, {
    accountId: input.accountId,
    documentId: null,
    recibidoId: input.recibidoId,
    messageId: `msg_recibido_${input.recibidoId}_${suffix}`,
    payload: recibidoPayload(input.folioId, input.event),
  });
}
