/**
 * The queries of idempotency keys (issue 36, migration 0020): an account's key, the hash of the body it came with and
 * the document it made, kept for a window (24 h, service/documents.ts). The row is inserted in the transaction that
 * stores the document, so its primary key (account, key) decides between two concurrent submissions under one key.
 */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, IdempotencyKeysTable } from './schema.js';

export interface StoredKey {
  bodyHash: string;
  documentId: number;
  clave: string;
  /** The client API's answer, when the key came through it. */
  answer: { status: number; body: unknown } | null;
  createdAt: number;
}

/** The key's row (of any age: the caller compares createdAt with its window), with its document's clave. */
export async function findKey(db: Kysely<Database>, accountId: number, key: string): Promise<StoredKey | undefined> {
  const row = await db
    .selectFrom('idempotency_keys as k')
    .innerJoin('documents as d', 'd.id', 'k.document_id')
    .select(['k.body_hash', 'k.document_id', 'k.answer_status', 'k.answer_json', 'k.created_at', 'd.clave'])
    .where('k.account_id', '=', accountId)
    .where('k.key', '=', key)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    bodyHash: row.body_hash,
    documentId: Number(row.document_id),
    clave: row.clave,
    answer: row.answer_status !== null && row.answer_json !== null ? { status: Number(row.answer_status), body: JSON.parse(row.answer_json) as unknown } : null,
    createdAt: Number(row.created_at),
  };
}

/** Drops one key of the account when it is older than `since` (its window is over: it may be used again). */
export async function dropKeyIfExpired(db: Kysely<Database>, accountId: number, key: string, since: number): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('created_at', '<', since).execute();
}

/** Drops the account's keys older than `since` (their window is over: each may be used again), so the table stays small. */
export async function dropExpiredKeys(db: Kysely<Database>, accountId: number, since: number): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('created_at', '<', since).execute();
}

/** A key's row as inserted: the table's own columns (store/schema.ts IdempotencyKeysTable). */
export type NewKey = Insertable<IdempotencyKeysTable>;

/** Inserts the key (in the document's transaction): a key already held is a unique violation, which the caller resolves. */
export async function insertKey(db: Kysely<Database> | Transaction<Database>, row: NewKey): Promise<void> {
  await db.insertInto('idempotency_keys').values(row).execute();
}

/** Remembers a key for a document that already existed (the same body under its number): a key already held stays. */
export async function rememberKey(db: Kysely<Database>, row: NewKey): Promise<void> {
  await db
    .insertInto('idempotency_keys')
    .values(row)
    .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
    .execute();
}
