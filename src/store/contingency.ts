/** The provisional comprobantes of outages (migration 0016) and the documents owed to Hacienda (unsent, or signed in contingency). */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { ContingencyProvisionalsTable, Database, DocumentState } from './schema.js';

export type ProvisionalRow = Selectable<ContingencyProvisionalsTable>;

const asRow = (r: ProvisionalRow): ProvisionalRow => ({
  ...r,
  id: Number(r.id),
  fecha_ms: Number(r.fecha_ms),
  recorded_at: Number(r.recorded_at),
  replaced_at: r.replaced_at === null ? null : Number(r.replaced_at),
});

/** Stores a provisional comprobante; undefined when the account has one of that issuer under that number already. */
export async function insertProvisional(db: Kysely<Database>, row: Omit<ProvisionalRow, 'id' | 'replaced_by' | 'replaced_at'>): Promise<ProvisionalRow | undefined> {
  const inserted = await db
    .insertInto('contingency_provisionals')
    .values({ ...row, replaced_by: null, replaced_at: null })
    .onConflict((oc) => oc.columns(['account_id', 'emisor', 'numero']).doNothing())
    .returningAll()
    .executeTakeFirst();
  return inserted ? asRow(inserted) : undefined;
}

export async function provisionalByNumero(db: Kysely<Database>, accountId: number, emisor: string, numero: string): Promise<ProvisionalRow | undefined> {
  const r = await db.selectFrom('contingency_provisionals').selectAll().where('account_id', '=', accountId).where('emisor', '=', emisor).where('numero', '=', numero).executeTakeFirst();
  return r ? asRow(r) : undefined;
}

export async function provisionalById(db: Kysely<Database>, accountId: number, id: number): Promise<ProvisionalRow | undefined> {
  const r = await db.selectFrom('contingency_provisionals').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return r ? asRow(r) : undefined;
}

export async function markProvisionalReplaced(db: Kysely<Database>, id: number, clave: string, at: number): Promise<void> {
  await db.updateTable('contingency_provisionals').set({ replaced_by: clave, replaced_at: at }).where('id', '=', id).execute();
}

/** The account's provisional comprobantes with the state of the document that replaces each (null: none yet), oldest first. */
export async function provisionalsWithReplacement(db: Kysely<Database>, accountId: number): Promise<(ProvisionalRow & { replacement_state: DocumentState | null })[]> {
  const rows = await db
    .selectFrom('contingency_provisionals as p')
    .leftJoin('documents as d', (j) => j.onRef('d.clave', '=', 'p.replaced_by').onRef('d.account_id', '=', 'p.account_id'))
    .selectAll('p')
    .select('d.state as replacement_state')
    .where('p.account_id', '=', accountId)
    .orderBy('p.fecha_ms')
    .orderBy('p.id')
    .execute();
  return rows.map((r) => ({ ...asRow(r), replacement_state: r.replacement_state ?? null }));
}

/**
 * What the account owes Hacienda of its own documents, oldest first: every one signed but not received by Hacienda yet
 * (`pendiente`, or held for its issuer's refused credentials), whatever its situación (issue 36: an outage with the
 * contingency setting off leaves situación 1 documents unsent), and those whose clave says situación 2 or 3 (its 42nd
 * character, core/clave.ts) that Hacienda has not accepted.
 */
export async function owedDocuments(db: Kysely<Database>, accountId: number) {
  const unsent: DocumentState[] = ['pendiente', 'credenciales_invalidas'];
  const rows = await db
    .selectFrom('documents')
    .select(['clave', 'kind', 'state', 'created_at', 'numero_referencia', 'total_comprobante', 'moneda'])
    .where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('state', 'in', unsent), eb.and([eb(sql<string>`substr(clave, 42, 1)`, 'in', ['2', '3']), eb('state', '!=', 'aceptado')])]))
    // A MensajeReceptor's row is keyed by the supplier's clave and its own consecutivo (longer than 50): not ours.
    .where(sql<number>`length(clave)`, '=', 50)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, created_at: Number(r.created_at), numero_referencia: Number(r.numero_referencia) }));
}
