/**
 * Idempotency keys of submissions (issue 36; Stripe's contract): a key names one intent of its account for 24 h. The
 * same key with the same body (service/documents.ts hashBody of the body as submitted, before fecr numbers it) answers
 * the document it made, and for the client API the status and body it answered; the same key with another body is a
 * 409 naming the key. The key is stored with the document in one transaction (store/idempotency.ts), so two
 * concurrent submissions under one key make one document. A submission refused (a 400) stores no key.
 */
import type { ServiceContext } from './context.js';
import { ServiceError } from './service-error.js';
import { dropExpiredKeys, dropKeyIfExpired, findKey, rememberKey, type NewKey } from '../store/idempotency.js';

/** How long a key holds: 24 h, as Stripe's keys. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** How often an account's expired keys are swept (per process): an hour, far below the window. */
const SWEEP_MS = 60 * 60 * 1000;
/** When this process last swept each account's expired keys (ctx.now). */
const sweptAt = new Map<number, number>();

/** What the client API answered for a key, replayed as it was. */
export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

export interface Idempotency {
  key: string;
  /** hashBody of the body as submitted. */
  bodyHash: string;
  /** The answer to store with the key (the client API's), made from the document submitted. */
  answer?: (r: { clave: string; numeroReferencia: number }) => IdempotentAnswer;
}

/** The same key with another body (409 conflict): the key and the document it made. */
export class IdempotencyConflictError extends ServiceError {
  constructor(
    readonly key: string,
    readonly clave: string,
  ) {
    super(409, 'conflict', `La clave de idempotencia "${key}" ya fue usada en las últimas 24 horas con un cuerpo distinto (documento ${clave}); use otra clave para otro documento`, [
      { path: 'Idempotency-Key', message: `ya fue usada con otro cuerpo (documento ${clave})` },
    ]);
    this.name = 'IdempotencyConflictError';
  }
}

/**
 * The document an earlier submission under the key made within the window: the same body → it (and its stored answer);
 * another body → IdempotencyConflictError. None → undefined (the account's rows past the window are dropped: free again).
 */
export async function earlierUnderKey(
  ctx: ServiceContext,
  accountId: number,
  idem: Idempotency,
): Promise<{ clave: string; documentId: number; answer: IdempotentAnswer | null } | undefined> {
  const now = ctx.now();
  const since = now - IDEMPOTENCY_WINDOW_MS;
  // The account's keys past their window, dropped at most once per SWEEP_MS in this process (so the table stays small
  // without a DELETE per submission); the key asked for, at once when its window is over (it is free again).
  if ((sweptAt.get(accountId) ?? -Infinity) <= now - SWEEP_MS) {
    sweptAt.set(accountId, now);
    await dropExpiredKeys(ctx.store.db, accountId, since);
  }
  const row = await findKey(ctx.store.db, accountId, idem.key);
  if (row && row.createdAt < since) await dropKeyIfExpired(ctx.store.db, accountId, idem.key, since);
  if (!row || row.createdAt < since) return undefined;
  if (row.bodyHash !== idem.bodyHash) throw new IdempotencyConflictError(idem.key, row.clave);
  return { clave: row.clave, documentId: row.documentId, answer: row.answer };
}

/** The key's row for a document just made (or found: the same body under its number), with the answer to replay. */
export function keyRow(accountId: number, idem: Idempotency, documentId: number, clave: string, now: number): NewKey {
  const answer = idem.answer?.({ clave, numeroReferencia: Number(clave.slice(31, 41)) });
  return {
    account_id: accountId,
    key: idem.key,
    body_hash: idem.bodyHash,
    document_id: documentId,
    answer_status: answer ? answer.status : null,
    answer_json: answer ? JSON.stringify(answer.body) : null,
    created_at: now,
  };
}

/** A key that found a document already made under its number (no new row of documents): it names that document now. */
export async function rememberKeyFor(ctx: ServiceContext, accountId: number, idem: Idempotency, documentId: number, clave: string): Promise<void> {
  await rememberKey(ctx.store.db, keyRow(accountId, idem, documentId, clave, ctx.now()));
}
