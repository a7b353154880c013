/** The queue of webhook deliveries: a delivery row and its `webhook` job, queued together. */
import { enqueueJob, type Executor } from './jobs.js';

export interface NewWebhookDelivery {
  accountId: number;
  /** The document the event is about; null for an event about a received document. */
  documentId: number | null;
  /** The received document (recibido) the event is about, if any. */
  recibidoId?: number;
  /** The delivery's `webhook-id` (unique). */
  messageId: string;
  /** The event, stored as JSON and sent as it is. */
  payload: object;
}

/**
 * Inside the caller's transaction, when the account has a webhook URL: inserts the delivery (`pendiente`, to that
 * URL) and its `webhook` job, due now. Returns the delivery's id, or null when the account has no webhook.
 */
export async function queueWebhookDelivery(trx: Executor, now: number, input: NewWebhookDelivery): Promise<number | null> {
  const account = await trx.selectFrom('accounts').select(['webhook_url']).where('id', '=', input.accountId).executeTakeFirst();
  if (!account?.webhook_url) return null;
  const row = await trx
    .insertInto('webhook_deliveries')
    .values({
      account_id: input.accountId,
      document_id: input.documentId,
      ...(input.recibidoId !== undefined ? { recibido_id: input.recibidoId } : {}),
      message_id: input.messageId,
      url: account.webhook_url,
      payload: JSON.stringify(input.payload),
      state: 'pendiente',
      attempts: 0,
      last_status: null,
      last_error: null,
      created_at: now,
      delivered_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await enqueueJob(trx, { type: 'webhook', delivery_id: row.id, run_at: now }, now);
  return row.id;
}
