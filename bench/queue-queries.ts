/**
 * The SQLite queue's per-document queries as the queue grows (issue 31), old against new in the same run: a store
 * migrated to the newest schema, filled with N jobs (all but 100 done, as after a batch of N/2 documents); then
 *  - the lease (leaseJobs' UPDATE … WHERE id IN (due subquery)) with the outer `done_at is null` (old: SQLite walks
 *    jobs_due_by_type over every due job) and with `+done_at is null` (new: the rows by id);
 *  - a document's job by document_id (the worker's "is this document's send still open") without the index
 *    jobs_by_document (old: every job of the type read) and with it (new; migration 0018).
 * Usage: node --import tsx bench/queue-queries.ts [jobs=5000,20000] [rounds=200]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { openSqliteStore } from '../src/store/index.js';

const sizes = (process.argv[2] ?? '5000,20000').split(',').map(Number);
const rounds = Number(process.argv[3] ?? 200);
const time = (db: SQLite.Database, sql: string): number => {
  const stmt = db.prepare(sql);
  const t = performance.now();
  for (let i = 0; i < rounds; i++) stmt.all();
  return Math.round(((performance.now() - t) / rounds) * 1000) / 1000;
};
const out: Record<string, unknown>[] = [];
for (const n of sizes) {
  const dir = mkdtempSync(join(os.tmpdir(), 'fecr-bench-queue-'));
  const file = join(dir, 'fecr.db');
  await (await openSqliteStore({ file })).close?.();
  const db = new SQLite(file);
  db.pragma('foreign_keys = OFF');
  const ins = db.prepare('insert into jobs (type, document_id, run_at, attempts, created_at, done_at) values (?, ?, ?, 0, 0, ?)');
  db.transaction(() => {
    for (let i = 0; i < n; i++) ins.run(i % 2 ? 'send' : 'poll', i, i, i < n - 100 ? i : null);
  })();
  db.exec('analyze');
  const due = `select "id" from "jobs" where "done_at" is null and "run_at" <= ${n * 2} and ("lease_until" is null or "lease_until" < 0) and "type" in ('send','poll','webhook') order by run_at + 0, "id" limit 8`;
  const lease = (plus: string) => `update "jobs" set "lease_owner" = 'x', "attempts" = "attempts" + 1 where "id" in (${due}) and ${plus}"done_at" is null and ("lease_until" is null or "lease_until" < 0) returning *`;
  const byDoc = `select "attempts", "lease_owner", "done_at" from "jobs" where "document_id" = ${n - 50} and "type" = 'send'`;
  db.exec('drop index if exists jobs_by_document');
  const row = { jobs: n, leaseOldMs: time(db, lease('')), leaseNewMs: time(db, lease('+')), byDocumentOldMs: time(db, byDoc), byDocumentNewMs: 0 };
  db.exec('create index jobs_by_document on jobs (document_id)');
  row.byDocumentNewMs = time(db, byDoc);
  out.push(row);
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}`, date: new Date().toISOString(), loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10), rounds, results: out }, null, 2));
