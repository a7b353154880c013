/**
 * The `poll` job: GET the status; recibido/procesando/unknown → again after 300 ms doubling to 30 s (after 24 h,
 * hourly); aceptado/rechazado/error → in ONE transaction: the MensajeHacienda, mensaje, detalle, state and
 * decided_at on the document, the job done, the webhook delivery + its job (when the account has a webhook URL; for a
 * rejection also fecr's `documento.rechazado` event with the reasons as data), and
 * on aceptado the receptor's mail + its job (email.ts; when the document has recipients). The issuer's credentials
 * refused by the IdP → the job parked until the issuer is updated, the document keeping its state (credentials.ts).
 */
import { FINAL_STATES } from '../../core/lifecycle.js';
import type { ReceptionStatus } from '../../hacienda/index.js';
import type { DocumentState, Job } from '../../store/schema.js';
import { completeJob, rescheduleJob } from '../../store/jobs.js';
import { errText, issuerOf, loadDocumentForPoll, notBeforeRetryAfter, type JobEnv } from './job.js';
import { holdForCredentials, refusedCredentials } from './credentials.js';
import { queueAcceptedMail } from './email.js';
import { createDelivery, queueRejectedEvent } from './webhooks.js';

/** When to ask again: firstPollDelayMs doubling per query up to pollMaxIntervalMs (±10 %); slowly after pollWindowMs. */
function pollDelay(env: JobEnv, job: Job, now: number): number {
  if (now - job.created_at > env.o.pollWindowMs) return env.o.pollSlowIntervalMs;
  const step = Math.min(env.o.pollMaxIntervalMs, env.o.firstPollDelayMs * 2 ** Math.max(0, job.attempts - 1));
  return Math.round(step * (0.9 + 0.2 * env.random()));
}

export async function runPoll(env: JobEnv, job: Job, owner: string): Promise<void> {
  const { ctx } = env;
  const db = ctx.store.db;
  const doc = await loadDocumentForPoll(ctx, job);
  if (!doc || FINAL_STATES.includes(doc.state)) {
    env.checkAlive();
    return completeJob(db, job, owner, ctx.now(), doc ? null : 'document not found');
  }
  const issuer = await issuerOf(ctx, doc.issuer_id);
  if (!issuer) {
    env.checkAlive();
    return rescheduleJob(db, job, owner, ctx.now() + env.o.pollSlowIntervalMs, 'issuer not found');
  }
  // Hacienda refused the issuer's credentials: no IdP request until they are updated (credentials.ts).
  if (issuer.hacienda_refused_at !== null) return holdForCredentials(env, job, owner, doc, issuer, undefined);
  env.stats.polls++;
  let st: ReceptionStatus;
  try {
    st = await env.clientFor(issuer).getStatus(doc.clave);
  } catch (e) {
    const refused = refusedCredentials(e);
    if (refused) return holdForCredentials(env, job, owner, doc, issuer, refused);
    env.stats.retries++;
    const delay = notBeforeRetryAfter(env, e, pollDelay(env, job, ctx.now()));
    env.log.warn({ clave: doc.clave, err: errText(e), retryInMs: delay }, 'status query failed; will retry');
    env.checkAlive();
    return rescheduleJob(db, job, owner, ctx.now() + delay, errText(e));
  }
  env.checkAlive();
  const now = ctx.now();
  // A verdict without its MensajeHacienda yet: ask again a few times before storing it without one.
  const verdictWithoutXml = (st.estado === 'aceptado' || st.estado === 'rechazado') && !st.respuestaXml && job.attempts < 10;
  if (st.estado === 'recibido' || st.estado === 'procesando' || st.estado === 'unknown' || verdictWithoutXml) {
    await db.transaction().execute(async (trx) => {
      await rescheduleJob(trx, job, owner, now + pollDelay(env, job, now), st.estado === 'unknown' ? 'Hacienda does not know the clave yet' : verdictWithoutXml ? 'verdict without respuesta-xml yet' : null);
      if ((st.estado === 'recibido' || st.estado === 'procesando') && st.estado !== doc.state) {
        await trx
          .updateTable('documents')
          .set({ state: st.estado, updated_at: now })
          .where('id', '=', doc.id)
          .where('state', 'not in', FINAL_STATES)
          .execute();
      }
    });
    return;
  }
  // A verdict: aceptado, rechazado or error.
  const responseXml = st.respuestaXml ? st.respuestaXml.toString('utf8') : null;
  const mensaje = st.mensaje?.mensaje ?? (st.estado === 'aceptado' ? 1 : st.estado === 'rechazado' ? 3 : null);
  const detalle = st.mensaje?.detalleMensaje ?? (st.estado === 'error' ? `Hacienda indicó ind-estado ${st.indEstado ?? 'error'}` : null);
  let deliveryId: number | null = null;
  let mailId: number | null = null;
  await db.transaction().execute(async (trx) => {
    await completeJob(trx, job, owner, now);
    const res = await trx
      .updateTable('documents')
      .set({ state: st.estado as DocumentState, response_xml: responseXml, mensaje, detalle_mensaje: detalle, decided_at: now, updated_at: now })
      .where('id', '=', doc.id)
      .where('state', 'not in', FINAL_STATES)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1 && responseXml) {
      deliveryId = await createDelivery(trx, now, { accountId: doc.account_id, documentId: doc.id, clave: doc.clave, mensajeHaciendaXml: responseXml });
      // fecr's own event for a rejection: the reasons as data (the spec's body above stays exact).
      if (st.estado === 'rechazado') await queueRejectedEvent(trx, now, { accountId: doc.account_id, documentId: doc.id, clave: doc.clave, mensaje, detalleMensaje: detalle });
      if (st.estado === 'aceptado') mailId = await queueAcceptedMail(ctx, trx, now, doc);
    }
  });
  env.stats.decided++;
  env.hints?.forget(doc.clave);
  env.log.info({ clave: doc.clave, estado: st.estado, mensaje, deliveryId, mailId }, 'Hacienda decided');
  if (deliveryId !== null || mailId !== null) env.wake();
}
