/** Light queries of the `documents` table: ids and states only, no XML. */
import type { Kysely } from 'kysely';
import type { Database, DocumentState } from './schema.js';

/** The id and state of an account's document by clave (undefined when the account has none). */
export function documentStateOf(db: Kysely<Database>, accountId: number, clave: string): Promise<{ id: number; state: DocumentState } | undefined> {
  return db.selectFrom('documents').select(['id', 'state']).where('account_id', '=', accountId).where('clave', '=', clave).executeTakeFirst();
}

/**
 * The id and state of the document with this clave in any account (Hacienda's callback names a clave, not an
 * account); undefined when there is none.
 */
export function documentStateByClave(db: Kysely<Database>, clave: string): Promise<{ id: number; state: DocumentState } | undefined> {
  return db.selectFrom('documents').select(['id', 'state']).where('clave', '=', clave).executeTakeFirst();
}

/** The states of the documents with these ids (missing ids are left out). */
export function documentStates(db: Kysely<Database>, ids: readonly number[]): Promise<{ id: number; state: DocumentState }[]> {
  return db.selectFrom('documents').select(['id', 'state']).where('id', 'in', [...ids]).execute();
}

/** A document's state by id (undefined when there is none). */
export async function documentStateById(db: Kysely<Database>, id: number): Promise<DocumentState | undefined> {
  return (await db.selectFrom('documents').select('state').where('id', '=', id).executeTakeFirst())?.state;
}
