/**
 * The `send` job: POST the signed document to Hacienda with the issuer's own credentials. A job tried before
 * (attempts > 1, e.g. after a kill -9 mid-POST) first GETs the status and skips the POST when Hacienda already has
 * the clave; the client itself never re-POSTs blindly either. Received → document `enviado` + a `poll` job. A 400
 * validation answer (the document itself is wrong) → document `error` with Hacienda's cause in detalle_mensaje
 * (no webhook: nothing was processed; the error stays visible on the document). The IdP refusing the issuer's
 * credentials → the document held (`credenciales_invalidas`) and the job parked until the issuer is updated, with no
 * further IdP request (credentials.ts). Network, 5xx, 429 and other IdP problems → retried with exponential backoff
 * and jitter; a 429 whose Retry-After is longer than the
 * client waits inline (a per-issuer quota) → retried no sooner than Retry-After says. After a POST whose answer
 * was lost, a 404 from the status query within `indexDelayToleranceMs` (30 s) is Hacienda's index delay, asked
 * again rather than re-POSTed (the reception client's part).
 *
 * fecha, emisor and receptor of the POST are the document's columns, stored at submission; only a row stored
 * before those columns existed (migration 0004) has its stored XML read, with the core parser.
 */
import { parseComprobanteXml } from '../../core/xml/parse-comprobante.js';
import { partiesOf } from '../../core/parties.js';
import { mensajeReceptorKey } from '../../core/received/mensaje-key.js';
import { describeFailure, ReceptionValidationError, type IdentificacionApi, type ReceptionStatus } from '../../hacienda/index.js';
import type { DocumentRow, Job } from '../../store/schema.js';
import { completeJob, enqueueJob, rescheduleJob } from '../../store/jobs.js';
import { CREDENTIALS_REFUSED } from '../../core/lifecycle.js';
import { holdForCredentials, refusedCredentials } from './credentials.js';
import { backoff, errText, issuerOf, loadDocument, notBeforeRetryAfter, type JobEnv } from './job.js';

/** The states a document is sent from: waiting, or held for its issuer's credentials (released, or sent meanwhile). */
const UNSENT = ['pendiente', CREDENTIALS_REFUSED] as const;

export interface SendRequest {
  fecha: string;
  emisor: IdentificacionApi;
  receptor?: IdentificacionApi;
}

type Parties = Pick<DocumentRow, 'xml' | 'fecha_emision' | 'emisor_tipo' | 'emisor_numero' | 'receptor_tipo' | 'receptor_numero'>;

/**
 * The POST /recepcion fields of a stored document. The receptor goes only when Hacienda's API can carry it
 * (01-04, ≤ 12 characters).
 */
export function sendRequestOf(doc: Parties): SendRequest {
  if (doc.emisor_tipo !== null && doc.emisor_numero !== null) {
    const receptor = doc.receptor_tipo !== null && doc.receptor_numero !== null ? { tipo: doc.receptor_tipo, numero: doc.receptor_numero } : undefined;
    return apiParties(doc.fecha_emision, { tipo: doc.emisor_tipo, numero: doc.emisor_numero }, receptor);
  }
  // Stored before migration 0004: read from the signed XML.
  return submitMeta(doc.xml);
}

/** The POST /recepcion fields read from a signed comprobante with the core parser (rows without the columns). */
export function submitMeta(xml: string): SendRequest {
  const parsed = parseComprobanteXml(xml);
  const { issuer, counterpart } = partiesOf(parsed);
  return apiParties(parsed.fechaEmision, issuer ?? parsed.emisor.identificacion, counterpart);
}

function apiParties(fecha: string, e: { tipo: string; numero: string }, r: { tipo: string; numero: string } | undefined): SendRequest {
  const emisor = { tipoIdentificacion: e.tipo, numeroIdentificacion: e.numero };
  const receptor = r && /^0[1-4]$/.test(r.tipo) && /^[A-Za-z0-9]{1,12}$/.test(r.numero) ? { tipoIdentificacion: r.tipo, numeroIdentificacion: r.numero } : undefined;
  return { fecha, emisor, ...(receptor ? { receptor } : {}) };
}

export async function runSend(env: JobEnv, job: Job, owner: string): Promise<void> {
  const { ctx } = env;
  const db = ctx.store.db;
  const doc = await loadDocument(ctx, job);
  if (!doc) {
    env.checkAlive();
    return completeJob(db, job, owner, ctx.now(), 'document not found');
  }
  if (doc.state !== 'pendiente' && doc.state !== CREDENTIALS_REFUSED) {
    // Already sent (its poll job was queued with the state change): nothing to do.
    env.checkAlive();
    return completeJob(db, job, owner, ctx.now());
  }
  const issuer = await issuerOf(ctx, doc.issuer_id);
  let request: SendRequest;
  try {
    request = sendRequestOf(doc);
  } catch (e) {
    return sendFailedForGood(env, job, owner, doc.id, doc.clave, `El comprobante almacenado no se puede leer: ${errText(e)}`);
  }
  if (!issuer) return sendFailedForGood(env, job, owner, doc.id, doc.clave, 'El emisor del comprobante ya no está registrado.');
  // Hacienda refused the issuer's credentials: no IdP request until they are updated.
  if (issuer.hacienda_refused_at !== null) return holdForCredentials(env, job, owner, doc, issuer, undefined);
  const client = env.clientFor(issuer);
  const log = env.log.child({ clave: doc.clave, jobId: job.id, attempt: job.attempts });
  let how: 'post' | 'status';
  try {
    let found: ReceptionStatus | undefined;
    if (job.attempts > 1) {
      // Tried before, maybe by a worker killed mid-POST: ask Hacienda before sending again. (A 404 here is
      // trusted: a killed worker's job runs again only after its lease, 30 s, the index-delay tolerance; should
      // it still be the index delay, the POST is refused as "ya fue recibido" and the document is not lost.)
      const st = await client.getStatus(doc.clave);
      if (st.estado !== 'unknown') found = st;
    }
    if (found) {
      how = 'status';
      env.stats.confirmedByStatus++;
    } else {
      // A MensajeReceptor (kind MR05/06/07) is stored under Hacienda's key for it, <clave>-<consecutivoReceptor>.
      const mr = mensajeReceptorKey(doc.clave);
      const res = await client.submit({
        clave: mr ? mr.clave : doc.clave,
        ...(mr ? { consecutivoReceptor: mr.consecutivoReceptor } : {}),
        ...request,
        comprobanteXml: doc.xml,
        ...(env.o.callbackUrl ? { callbackUrl: env.o.callbackUrl } : {}),
      });
      how = res.confirmedByStatus || res.status === 'already-received' ? 'status' : 'post';
      if (how === 'post') env.stats.sent++;
      else env.stats.confirmedByStatus++;
    }
  } catch (e) {
    if (e instanceof ReceptionValidationError) {
      log.warn({ cause: e.detail }, 'Hacienda refused the document');
      return sendFailedForGood(env, job, owner, doc.id, doc.clave, `Hacienda rechazó el envío: ${e.detail ?? e.message}`);
    }
    const refused = refusedCredentials(e);
    if (refused) return holdForCredentials(env, job, owner, doc, issuer, refused);
    env.stats.retries++;
    const delay = notBeforeRetryAfter(env, e, backoff(job.attempts, env.o.sendBackoffBaseMs, env.o.sendBackoffMaxMs, env.random));
    log.warn({ err: errText(e), retryInMs: delay }, 'sending to Hacienda failed; will retry');
    env.checkAlive();
    // The cause in words (DNS, TLS, HTTP status): what `fecr send` says of a document not sent yet.
    return rescheduleJob(db, job, owner, ctx.now() + delay, describeFailure(e));
  }
  env.checkAlive();
  const now = ctx.now();
  await db.transaction().execute(async (trx) => {
    await completeJob(trx, job, owner, now);
    await trx
      .updateTable('documents')
      .set({ state: 'enviado', updated_at: now })
      .where('id', '=', doc.id)
      .where('state', 'in', UNSENT)
      .execute();
    await enqueueJob(trx, { type: 'poll', document_id: doc.id, run_at: now + env.o.firstPollDelayMs }, now);
  });
  env.hints?.sentDocument(doc.clave, doc.id);
  log.info({ how }, 'document sent to Hacienda');
}

async function sendFailedForGood(env: JobEnv, job: Job, owner: string, documentId: number, clave: string, detalle: string): Promise<void> {
  env.checkAlive();
  const now = env.ctx.now();
  await env.ctx.store.db.transaction().execute(async (trx) => {
    await completeJob(trx, job, owner, now, detalle);
    await trx
      .updateTable('documents')
      .set({ state: 'error', detalle_mensaje: detalle, updated_at: now, decided_at: now })
      .where('id', '=', documentId)
      .where('state', 'in', UNSENT)
      .execute();
  });
  env.log.warn({ clave, detalle }, 'document not sent: error');
}
