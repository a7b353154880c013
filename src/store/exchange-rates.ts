/** The exchange-rate cache (migration 0014): one selling rate per currency and Costa Rica day. */
import type { Kysely } from 'kysely';
import type { Database, ExchangeRatesTable } from './schema.js';

export type ExchangeRate = Pick<ExchangeRatesTable, 'moneda' | 'fecha' | 'venta' | 'fuente' | 'fetched_at'>;

export async function cachedRate(db: Kysely<Database>, moneda: string, fecha: string): Promise<ExchangeRate | undefined> {
  const row = await db.selectFrom('exchange_rates').selectAll().where('moneda', '=', moneda).where('fecha', '=', fecha).executeTakeFirst();
  return row ? { ...row, fetched_at: Number(row.fetched_at) } : undefined;
}

/** Keeps a rate; the first one stored for a day stays (two senders racing store the same figure). */
export async function storeRate(db: Kysely<Database>, rate: ExchangeRate): Promise<void> {
  await db
    .insertInto('exchange_rates')
    .values(rate)
    .onConflict((oc) => oc.columns(['moneda', 'fecha']).doNothing())
    .execute();
}

/** Drops a day's cached rate (one the service no longer takes: service/exchange-rate.ts PLAUSIBLE_RATES). */
export async function forgetRate(db: Kysely<Database>, moneda: string, fecha: string): Promise<void> {
  await db.deleteFrom('exchange_rates').where('moneda', '=', moneda).where('fecha', '=', fecha).execute();
}
