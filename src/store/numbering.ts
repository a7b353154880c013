/**
 * The numbering of an issuer's documents (migration 0013): a series is issuer + kind + sucursal + terminal. Its next
 * free number is one after the highest `documents.numero_referencia` of the series, or the series' start
 * (`document_numbering.next_numero`) when that is higher; 1 for a series never used. No counter is bumped: the
 * documents themselves are the record, and their unique index (documents_numbering) is what makes a number taken.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface Series {
  issuerId: number;
  kind: string;
  sucursal: number;
  terminal: number;
}

/** A series as stored: its highest number used (null: none) and its start (null: none set). */
export interface SeriesState {
  kind: string;
  sucursal: number;
  terminal: number;
  highest: number | null;
  start: number | null;
}

/** The next free number of a series: max(start, highest used + 1, 1). */
export function nextOf(s: Pick<SeriesState, 'highest' | 'start'>): number {
  return Math.max(1, (s.highest ?? 0) + 1, s.start ?? 1);
}

/** The highest number used in a series (null: none). */
export async function highestUsed(db: Kysely<Database>, s: Series): Promise<number | null> {
  const r = await db
    .selectFrom('documents')
    .select((eb) => eb.fn.max('numero_referencia').as('n'))
    .where('issuer_id', '=', s.issuerId)
    .where('kind', '=', s.kind)
    .where('sucursal', '=', s.sucursal)
    .where('terminal', '=', s.terminal)
    .executeTakeFirst();
  return r?.n === null || r?.n === undefined ? null : Number(r.n);
}

/** The series' start (null: none set). */
export async function startOf(db: Kysely<Database>, s: Series): Promise<number | null> {
  const r = await db
    .selectFrom('document_numbering')
    .select('next_numero')
    .where('issuer_id', '=', s.issuerId)
    .where('kind', '=', s.kind)
    .where('sucursal', '=', s.sucursal)
    .where('terminal', '=', s.terminal)
    .executeTakeFirst();
  return r ? Number(r.next_numero) : null;
}

/** The next free number of a series (two reads; whoever inserts a document under it first takes it). */
export async function nextFree(db: Kysely<Database>, s: Series): Promise<number> {
  const [highest, start] = await Promise.all([highestUsed(db, s), startOf(db, s)]);
  return nextOf({ highest, start });
}

/** Every series of an issuer that has documents or a start, ordered by kind, sucursal, terminal. */
export async function seriesOf(db: Kysely<Database>, issuerId: number): Promise<SeriesState[]> {
  const [used, starts] = await Promise.all([
    db
      .selectFrom('documents')
      .select((eb) => ['kind', 'sucursal', 'terminal', eb.fn.max('numero_referencia').as('n')])
      .where('issuer_id', '=', issuerId)
      .groupBy(['kind', 'sucursal', 'terminal'])
      .execute(),
    db.selectFrom('document_numbering').select(['kind', 'sucursal', 'terminal', 'next_numero']).where('issuer_id', '=', issuerId).execute(),
  ]);
  const byKey = new Map<string, SeriesState>();
  const at = (kind: string, sucursal: number, terminal: number): SeriesState => {
    const k = `${kind}|${sucursal}|${terminal}`;
    let s = byKey.get(k);
    if (!s) byKey.set(k, (s = { kind, sucursal: Number(sucursal), terminal: Number(terminal), highest: null, start: null }));
    return s;
  };
  for (const u of used) at(u.kind, u.sucursal, u.terminal).highest = u.n === null ? null : Number(u.n);
  for (const st of starts) at(st.kind, st.sucursal, st.terminal).start = Number(st.next_numero);
  return [...byKey.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.sucursal - b.sucursal || a.terminal - b.terminal);
}

/**
 * Sets where a series starts, in one transaction with the check that no number at or above it is used; returns the
 * highest number used when that refuses it (nothing changed), else null.
 */
export async function setStart(db: Kysely<Database>, s: Series, next: number, now: number): Promise<{ refusedBy: number } | null> {
  return db.transaction().execute(async (trx) => {
    // Written first, so that on SQLite the transaction holds the write lock before it reads (no other writer between).
    await trx
      .insertInto('document_numbering')
      .values({ issuer_id: s.issuerId, kind: s.kind, sucursal: s.sucursal, terminal: s.terminal, next_numero: next, updated_at: now })
      .onConflict((oc) => oc.columns(['issuer_id', 'kind', 'sucursal', 'terminal']).doUpdateSet({ next_numero: next, updated_at: now }))
      .execute();
    const highest = await highestUsed(trx, s);
    if (highest !== null && next <= highest) throw new Refused(highest);
    return null;
  }).catch((e: unknown) => {
    if (e instanceof Refused) return { refusedBy: e.highest };
    throw e;
  });
}

class Refused extends Error {
  constructor(readonly highest: number) {
    super(`number ${highest} is used`);
  }
}
