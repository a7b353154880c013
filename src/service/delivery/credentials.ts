/**
 * A Hacienda password the IdP refuses (issue 25, point 7). Each failed login counts towards the real IdP's lock-out of
 * the taxpayer's account, so a refused credential is never retried on a timer:
 *
 *  - the first send or poll of an issuer whose login gets `invalid_grant` (401 or 400: wrong password, account
 *    disabled or locked; hacienda/client/token-manager.ts) records the refusal on the issuer row, holds every
 *    document of the issuer not sent yet (`credenciales_invalidas`, detalle_mensaje saying why and what to do),
 *    queues the webhook event `emisor.credenciales_invalidas`, and parks its own job (store/jobs.ts PARKED_RUN_AT);
 *  - every other send or poll of that issuer (queued then, or submitted later) sees the refusal on the row and parks
 *    itself without any IdP request; within one worker the TokenManager also refuses the same password at once, so
 *    jobs already past that check make no second login either;
 *  - an update of the issuer (`fecr emisor update`, POST /api/actualizar/emisor) clears the refusal, makes the held
 *    documents `pendiente` again and their parked jobs due now (service/issuers.ts updateIssuer,
 *    store/issuer-credentials.ts releaseIssuer). A parked send keeps its attempt count, so one tried before asks
 *    Hacienda (GET) before any POST: each held document is received once.
 *
 * Network errors, 5xx and 429 at the IdP are not refusals: those jobs are retried with backoff as before.
 */
import { BadCredentialsError } from '../../hacienda/index.js';
import type { Issuer, Job } from '../../store/schema.js';
import { PARKED_RUN_AT, rescheduleJob } from '../../store/jobs.js';
import { holdDocument, holdIssuerDocuments, recordRefusal, type Refusal } from '../../store/issuer-credentials.js';
import type { StoredIssuerRecord } from '../issuers.js';
import type { JobEnv } from './job.js';
import { queueWebhookEvent } from './webhooks.js';

/** The webhook event of an issuer whose Hacienda credentials were refused (README "Webhook events"). */
export const CREDENTIALS_REFUSED_EVENT = 'emisor.credenciales_invalidas';

export interface CredentialsRefusedPayload {
  type: typeof CREDENTIALS_REFUSED_EVENT;
  /** The clave of the document whose send (or status query) met the refusal. */
  folioId: string;
  folioType: 'INVOICE';
  emisor: { identificacion: string; usuarioHacienda: string; ambiente: number };
  /** What the IdP answered (its error_description, e.g. "Invalid user credentials"). */
  detalle: string;
  /** How many documents of the issuer were held at that moment. */
  comprobantesRetenidos: number;
  solucion: string;
}

const SOLUCION =
  'Actualice usuarioHacienda y claveHacienda del emisor (POST /api/actualizar/emisor, o fecr emisor update); los comprobantes retenidos se envían entonces, una vez cada uno.';

/** The IdP's refusal behind a failure, if that is what it was (also under an AmbiguousSubmissionError's cause). */
export function refusedCredentials(e: unknown): BadCredentialsError | undefined {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    if (cur instanceof BadCredentialsError) return cur;
  }
  return undefined;
}

/** The detalle_mensaje of a held document (Spanish, like the service's other messages). */
export function heldDetalle(identificacion: string, usuario: string, detail: string | null | undefined): string {
  return (
    `Hacienda rechazó las credenciales del emisor ${identificacion} (usuarioHacienda ${usuario}${detail ? `: ${detail}` : ''}). ` +
    'El comprobante no se envía hasta que se actualicen usuarioHacienda/claveHacienda del emisor (fecr emisor update o /api/actualizar/emisor); entonces se envía.'
  );
}

/**
 * The send or poll job `job` of document `doc` cannot go on: the IdP refused the issuer's credentials (`refusal`), or
 * they were refused before (`refusal` undefined: the issuer row says so, and no IdP request was made). Records or
 * confirms the refusal and parks the job, in one transaction with the job's lease; when the issuer was updated
 * meanwhile, the job is due again at once instead (with the new credentials).
 */
export async function holdForCredentials(
  env: JobEnv,
  job: Job,
  owner: string,
  doc: { id: number; clave: string; account_id: number },
  issuer: Issuer,
  refusal: BadCredentialsError | undefined,
): Promise<void> {
  const { ctx } = env;
  env.checkAlive();
  const now = ctx.now();
  const record = JSON.parse(issuer.record_json) as StoredIssuerRecord;
  const detail = refusal ? (refusal.detail ?? refusal.message) : undefined;
  let outcome = 'changed' as Refusal;
  let held = 0;
  let event = null as number | null;
  await ctx.store.db.transaction().execute(async (trx) => {
    outcome = await recordRefusal(trx, issuer.id, issuer.updated_at, now, detail);
    if (outcome === 'changed') {
      await rescheduleJob(trx, job, owner, now, 'the issuer was updated: trying its new credentials');
      return;
    }
    const detalle = heldDetalle(issuer.identificacion, record.usuarioHacienda, detail ?? issuer.hacienda_refused_detail);
    if (outcome === 'first') {
      held = await holdIssuerDocuments(trx, issuer.id, now, detalle);
      const payload: CredentialsRefusedPayload = {
        type: CREDENTIALS_REFUSED_EVENT,
        folioId: doc.clave,
        folioType: 'INVOICE',
        emisor: { identificacion: issuer.identificacion, usuarioHacienda: record.usuarioHacienda, ambiente: Number(record.ambiente) },
        detalle: detail ?? '',
        comprobantesRetenidos: held,
        solucion: SOLUCION,
      };
      // One event per refused credentials: the issuer's id and the updated_at they were read at.
      event = await queueWebhookEvent(trx, now, { accountId: doc.account_id, documentId: doc.id, messageId: `msg_credenciales_${issuer.id}_${issuer.updated_at}`, payload });
    }
    if (job.type === 'send') await holdDocument(trx, doc.id, now, detalle);
    await rescheduleJob(trx, job, owner, PARKED_RUN_AT, `credenciales_invalidas: ${detail ?? issuer.hacienda_refused_detail ?? 'refused before'}`);
  });
  const log = env.log.child({ clave: doc.clave, jobId: job.id, issuer: issuer.identificacion });
  if (outcome === 'first') log.error({ detail, held }, "Hacienda's IdP refused the issuer's credentials: its documents are held until the issuer is updated");
  else if (outcome === 'already') log.info({ type: job.type }, 'issuer credentials refused before: job held without an IdP request');
  else log.info('the issuer was updated while its credentials were refused: tried again');
  if (outcome === 'changed' || event !== null) env.wake();
}
