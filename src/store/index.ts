/**
 * Opening the store: Kysely over better-sqlite3 (WAL) for the embedded mode, or over a pg Pool for the hosted
 * mode (many fecr processes on one PostgreSQL). The same migrations run on open in both. The service only sees
 * `Store` (a Kysely<Database>); on PostgreSQL the job queue is graphile-worker's (its schema is installed here
 * too, so an API-only process can enqueue jobs in its own transactions).
 */
import { mkdirSync } from 'node:fs';
import { ownerOnlyDatabase } from '../adapters/owner-only.js';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';
import { asStoreFault } from './faults.js';
import { migrate, type Store } from './store.js';
import type { Database } from './schema.js';
import type { OpenPostgresOptions } from './postgres.js';

export type { Database } from './schema.js';
export type { Store } from './store.js';
export { migrate } from './store.js';

/** Whether a --database value names a PostgreSQL database (postgres:// or postgresql://). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** Opens a PostgreSQL store for a postgres:// URL, else a SQLite store on that file path. */
export async function openStore(urlOrPath: string): Promise<Store> {
  return isPostgresUrl(urlOrPath) ? openPostgresStore({ url: urlOrPath }) : openSqliteStore({ file: urlOrPath });
}

/** The URL without its password, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/** Opens a PostgreSQL store; pg is loaded only then (the embedded mode never needs it). */
export async function openPostgresStore(opts: OpenPostgresOptions): Promise<Store> {
  return (await import('./postgres.js')).openPostgresStore(opts);
}

export interface OpenSqliteOptions {
  /** Path of the database file; ':memory:' for tests that need no file. */
  file: string;
}

export async function openSqliteStore(opts: OpenSqliteOptions): Promise<Store> {
  if (opts.file !== ':memory:') {
    mkdirSync(path.dirname(opts.file), { recursive: true, mode: 0o700 });
    ownerOnlyDatabase(opts.file);
  }
  const sqlite = new SQLite(opts.file);
  sqlite.pragma('journal_mode = WAL');
  if (opts.file !== ':memory:') ownerOnlyDatabase(opts.file);
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const where = opts.file === ':memory:' ? undefined : path.dirname(path.resolve(opts.file));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, where) }) });
  await migrate(db);
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/**
 * Kysely prepares every query anew; the service runs the same few dozen statements over and over, so
 * prepared statements are reused (bounded). Kysely runs one query at a time on this connection.
 *
 * Two faults are shaped here. A statement that fails with a full disk (SQLITE_FULL, or an I/O error of the
 * same cause) becomes a StoreFault naming the data dir. And when SQLite has already rolled the transaction back
 * by itself (it does on SQLITE_FULL), Kysely's ROLLBACK is a no-op instead of "cannot rollback - no transaction
 * is active", which used to hide the real error.
 */
function withStatementCache(sqlite: SQLite.Database, where: string | undefined, max = 256): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  const guard = <T>(run: () => T): T => {
    try {
      return run();
    } catch (e) {
      throw asStoreFault(e, where) ?? e;
    }
  };
  const wrap = (stmt: SQLite.Statement): SqliteStatement => ({
    reader: stmt.reader,
    all: (params: ReadonlyArray<unknown>) => guard(() => stmt.all(params)),
    run: (params: ReadonlyArray<unknown>) => guard(() => stmt.run(params)),
    iterate: (params: ReadonlyArray<unknown>) => guard(() => stmt.iterate(params)),
  });
  const noRollback: SqliteStatement = { reader: false, all: () => [], run: () => ({ changes: 0, lastInsertRowid: 0 }), iterate: () => [][Symbol.iterator]() };
  return {
    close: () => sqlite.close(),
    prepare: (sql: string) => {
      if (/^\s*rollback\s*$/i.test(sql) && !sqlite.inTransaction) return noRollback;
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = wrap(guard(() => sqlite.prepare(sql)));
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}
