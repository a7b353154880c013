/**
 * Keys before they expire (issue 29): the service looks at every issuer's certificate end (service/issuers.ts
 * certificateUntil) and, from 30 days before it (core/sign/cert-expiry.ts, the wording `fecr doctor`, `send` and
 * `batch` use), once a day per issuer:
 *
 *  - logs one warning line (once per worker process and Costa Rica day);
 *  - queues the webhook event `emisor.llave_por_vencer` (README "Webhook events") like `emisor.credenciales_invalidas`
 *    (delivery/credentials.ts): a delivery row and its `webhook` job in one transaction. Its `webhook-id` is
 *    `msg_llave_<issuer id>_<YYYY-MM-DD>`, unique in the store, so however many checks or workers run in a day the
 *    account receives one event per issuer and day.
 *
 * An ended certificate is not announced here: signing refuses it (service/issuers.ts issuerForSigning).
 */
import type { Logger } from 'pino';
import { certificateEndWarning, daysUntilExpiry } from '../../core/sign/cert-expiry.js';
import { queueWebhookDelivery } from '../../store/webhook-deliveries.js';
import type { ServiceContext } from '../context.js';
import { certificateUntil, isUniqueViolation, type StoredIssuerRecord } from '../issuers.js';

/** The webhook event of an issuer whose certificate (llave criptográfica) ends within 30 days. */
export const KEY_EXPIRING_EVENT = 'emisor.llave_por_vencer';

export interface KeyExpiringPayload {
  type: typeof KEY_EXPIRING_EVENT;
  emisor: { identificacion: string; ambiente: number };
  /** When the certificate ends (its notAfter), ISO 8601 instant. */
  vence: string;
  diasRestantes: number;
  /** The day (America/Costa_Rica) of this notice: one event per issuer and day. */
  fecha: string;
  /** The same line `fecr doctor`, `send` and `batch` print (English, as the CLI's). */
  mensaje: string;
  solucion: string;
}

const SOLUCION =
  'Obtenga una nueva llave criptográfica en Hacienda y actualice certificadoHacienda y pinCertificado del emisor (POST /api/actualizar/emisor, o fecr emisor update) antes de que venza: con la llave vencida no se firma ningún comprobante.';

const CR_DAY = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Costa_Rica', year: 'numeric', month: '2-digit', day: '2-digit' });

/** The Costa Rica calendar day of an instant, YYYY-MM-DD. */
export function costaRicaDay(at: number): string {
  return CR_DAY.format(new Date(at));
}

/** The `webhook-id` of an issuer's notice on a day. */
export function keyExpiringMessageId(issuerId: number, day: string): string {
  return `msg_llave_${issuerId}_${day}`;
}

/** What one worker remembers between checks: the day it last logged each issuer's warning. */
export type ExpiryLogMemory = Map<number, string>;

/**
 * One check of every issuer of the store at ctx.now(): logs and queues today's notices not given yet. Returns how
 * many webhook deliveries it queued (0 when today's exist or the accounts have no webhook URL).
 */
export async function checkCertificateExpiry(ctx: ServiceContext, log: Logger, logged: ExpiryLogMemory): Promise<number> {
  const now = ctx.now();
  const day = costaRicaDay(now);
  const rows = await ctx.store.db.selectFrom('issuers').selectAll().orderBy('id').execute();
  let queued = 0;
  for (const row of rows) {
    const until = certificateUntil(ctx, row);
    if (until === undefined) continue;
    const line = certificateEndWarning(row.identificacion, until, now);
    if (line === undefined) continue;
    const days = daysUntilExpiry(until, now);
    if (logged.get(row.id) !== day) {
      logged.set(row.id, day);
      log.warn({ issuer: row.identificacion, accountId: row.account_id, certificateUntil: new Date(until).toISOString(), days }, line);
    }
    const messageId = keyExpiringMessageId(row.id, day);
    const record = JSON.parse(row.record_json) as StoredIssuerRecord;
    const payload: KeyExpiringPayload = {
      type: KEY_EXPIRING_EVENT,
      emisor: { identificacion: row.identificacion, ambiente: Number(record.ambiente) },
      vence: new Date(until).toISOString(),
      diasRestantes: days,
      fecha: day,
      mensaje: line,
      solucion: SOLUCION,
    };
    try {
      const id = await ctx.store.db.transaction().execute(async (trx) => {
        const had = await trx.selectFrom('webhook_deliveries').select(['id']).where('message_id', '=', messageId).executeTakeFirst();
        return had ? null : queueWebhookDelivery(trx, now, { accountId: row.account_id, documentId: null, messageId, payload });
      });
      if (id !== null) queued++;
    } catch (e) {
      // Another worker queued today's notice at the same moment: it is delivered once.
      if (!isUniqueViolation(e)) throw e;
    }
  }
  return queued;
}
