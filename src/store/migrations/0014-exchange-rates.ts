/**
 * Exchange rates (issue 29): a foreign-currency body with `tipoCambio` left out or `"auto"` gets the BCCR reference
 * selling rate of its Costa Rica day from Hacienda's indicator API; the rate is kept here, one row per currency and
 * day, so every later document of that day takes it without another request. `fuente` is the URL it came from.
 */
import type { Kysely, Migration } from 'kysely';

export const exchangeRates: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('exchange_rates')
      .addColumn('moneda', 'text', (c) => c.notNull())
      .addColumn('fecha', 'text', (c) => c.notNull())
      .addColumn('venta', 'text', (c) => c.notNull())
      .addColumn('fuente', 'text', (c) => c.notNull())
      .addColumn('fetched_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('exchange_rates_pk', ['moneda', 'fecha'])
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('exchange_rates').execute();
  },
};
