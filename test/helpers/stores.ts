// The store a service test runs on. `FECR_TEST_STORE=postgres` (the "postgres" vitest project) runs the same
// service/server/e2e test files on PostgreSQL at 127.0.0.1:5432 (trust auth, user postgres): each store gets a
// uniquely named database, dropped when the store closes. Otherwise SQLite files in temp dirs.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import pg from 'pg';
import { openPostgresStore, openSqliteStore, type Store } from '../../src/store/index.js';

export type TestDialect = 'sqlite' | 'postgres';

export const TEST_STORE: TestDialect = process.env.FECR_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
export const ON_POSTGRES = TEST_STORE === 'postgres';

/** The server to create test databases on. */
export const PG_ADMIN_URL = process.env.FECR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function probe(url: string, timeoutMs = 1_500): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname, port: Number(u.port || 5432) });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** Whether PostgreSQL answers at PG_ADMIN_URL (it does on every machine of the project and in CI). */
export const PG_AVAILABLE: boolean = await probe(PG_ADMIN_URL);
if (!PG_AVAILABLE) {
  console.warn(`[fecr tests] PostgreSQL is not reachable at ${PG_ADMIN_URL}: the PostgreSQL tests are skipped (start it, or set FECR_TEST_PG_URL)`);
}

function urlFor(name: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A new empty database (fecr_test_<random>); `drop()` removes it (connections still open are ended). */
export async function createTestDatabase(prefix = 'fecr_test'): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  let dropped = false;
  return {
    url: urlFor(name),
    name,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await admin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/**
 * The test store: SQLite at `file`, or (FECR_TEST_STORE=postgres, or `dialect` given) a fresh PostgreSQL
 * database dropped on close. `reopen()` opens the same database again (a restart).
 */
export async function openTestStore(opts: { file: string; dialect?: TestDialect }): Promise<Store & { reopen(): Promise<Store>; database?: TestDatabase }> {
  const dialect = opts.dialect ?? TEST_STORE;
  if (dialect === 'sqlite') {
    const store = await openSqliteStore({ file: opts.file });
    return Object.assign(store, { reopen: () => openSqliteStore({ file: opts.file }) });
  }
  const database = await createTestDatabase();
  const store = await openPostgresStore({ url: database.url, max: 5 });
  let open = 1;
  const wrap = (s: Store): Store => ({
    ...s,
    close: async () => {
      await s.close();
      if (--open === 0) await database.drop();
    },
  });
  const first = wrap(store);
  return Object.assign(first, {
    database,
    reopen: async () => {
      open++;
      return wrap(await openPostgresStore({ url: database.url, max: 5 }));
    },
  });
}

/** Rows of the job queue (both stores): the `jobs` table on SQLite, graphile-worker's jobs on PostgreSQL. */
export async function queuedJobs(store: Store, filter: { documentId?: number } = {}): Promise<{ type: string; done: boolean; attempts: number; run_at: number }[]> {
  if (store.dialect === 'postgres') {
    const { sql } = await import('kysely');
    const r = await sql<{ task_identifier: string; payload: any; attempts: number; run_at: Date }>`select t.identifier as task_identifier, j.payload, j.attempts, j.run_at from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id order by j.id`.execute(store.db);
    return r.rows
      .filter((row) => filter.documentId === undefined || row.payload?.document_id === filter.documentId)
      .map((row) => ({ type: row.task_identifier.replace(/^fecr_/, ''), done: false, attempts: row.attempts, run_at: new Date(row.run_at).getTime() }));
  }
  let q = store.db.selectFrom('jobs').selectAll();
  if (filter.documentId !== undefined) q = q.where('document_id', '=', filter.documentId);
  const rows = await q.orderBy('id').execute();
  return rows.map((j) => ({ type: j.type, done: j.done_at !== null, attempts: j.attempts, run_at: j.run_at }));
}

/** All text of the store's tables (secret-at-rest checks): the file bytes on SQLite, a dump on PostgreSQL. */
export async function storeText(store: Store): Promise<string> {
  const { sql } = await import('kysely');
  const tables = ['accounts', 'signing_keys', 'revoked_tokens', 'issuers', 'documents', 'jobs', 'webhook_deliveries'];
  const parts: string[] = [];
  for (const t of tables) {
    const r = await sql<{ row: string }>`select t::text as row from ${sql.table(t)} t`.execute(store.db);
    parts.push(...r.rows.map((x) => x.row));
  }
  if (store.dialect === 'postgres') {
    const r = await sql<{ row: string }>`select payload::text as row from graphile_worker._private_jobs`.execute(store.db);
    parts.push(...r.rows.map((x) => x.row));
  }
  return parts.join('\n');
}

/**
 * The environment of a `fecr serve` child (and the CLI commands of the same test) for the test store: on
 * PostgreSQL a fresh database in FECR_DATABASE_URL and a random FECR_MASTER_KEY (shared by every process of the
 * test); nothing on SQLite (the data dir's fecr.db). `drop()` removes the database.
 */
export async function serviceStoreEnv(dialect: TestDialect = TEST_STORE): Promise<{ env: Record<string, string>; url?: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') return { env: {}, drop: async () => undefined };
  const database = await createTestDatabase();
  return {
    env: { FECR_DATABASE_URL: database.url, FECR_MASTER_KEY: randomBytes(32).toString('base64') },
    url: database.url,
    drop: () => database.drop(),
  };
}
