/** What the service sees of a store, and the migrations both dialects run on open. */
import { Migrator, type Kysely } from 'kysely';
import { isStoreFault, StoreFault, storeFaultOf } from './faults.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export interface Store {
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  /** PostgreSQL only: the connection URL (graphile-worker runners open their own pool with it). */
  url?: string;
  close(): Promise<void>;
}

export async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  // A full disk or a lost connection is said as such, not as a broken migration.
  if (error && isStoreFault(error)) throw error;
  const fault = error ? storeFaultOf(error) : undefined;
  if (fault) throw new StoreFault(fault.kind, fault.code, undefined, { cause: error });
  if (error || failed) throw new Error(`store migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String((error as Error)?.message ?? error)}`);
}

