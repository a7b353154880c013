/**
 * Opening the store: Kysely over better-sqlite3 (WAL) for the embedded mode. Migrations run on open.
 * The service only sees `Store` (a Kysely<Database>), so a PostgreSQL dialect slots in here.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type SqliteDatabase } from 'kysely';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export type { Database } from './schema.js';

export interface Store {
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  close(): Promise<void>;
}

export interface OpenSqliteOptions {
  /** Path of the database file; ':memory:' for tests that need no file. */
  file: string;
}

export async function openSqliteStore(opts: OpenSqliteOptions): Promise<Store> {
  if (opts.file !== ':memory:') mkdirSync(path.dirname(opts.file), { recursive: true });
  const sqlite = new SQLite(opts.file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  await migrate(db);
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

export async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) throw new Error(`store migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String((error as Error)?.message ?? error)}`);
}

/**
 * Kysely prepares every query anew; the service runs the same few dozen statements over and over, so
 * prepared statements are reused (bounded). Kysely runs one query at a time on this connection.
 */
function withStatementCache(sqlite: SQLite.Database, max = 256): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare: (sql: string) => {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = sqlite.prepare(sql);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}
