// The worker's queue runs the receptor mails (DEFERRED_JOB_TYPES) after the sends, polls and webhooks: jobs of the
// other types that are due are taken first, whatever their age; on SQLite at most `deferredConcurrency` mails run at
// once, and mails still run as soon as nothing else is due. On PostgreSQL graphile-worker's priority does the ordering.
// The queue runs with a recording job runner over the real store (both stores).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { openQueue } from '../src/service/delivery/queue.js';
import type { ServiceContext } from '../src/service/context.js';
import { completeJob, enqueueJob, pendingJobs } from '../src/store/jobs.js';
import type { Job, JobType } from '../src/store/schema.js';
import { ON_POSTGRES, openTestStore } from './helpers/stores.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-queue-'));
  const store = await openTestStore({ file: join(dir, 'fecr.db') });
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }), () => store.close());
  const ctx = { store, now: () => Date.now(), logger: pino({ level: 'silent' }) } as unknown as ServiceContext;
  return { ctx, store };
}

/** Runs every queued job with a runner that takes `ms` per job and records the order and the mails in flight. */
async function drain(ctx: ServiceContext, opts: { concurrency: number; deferredConcurrency: number; ms: number; onFirstStart?: () => Promise<void> }) {
  const started: JobType[] = [];
  let mailsNow = 0;
  let mailsMax = 0;
  const run = async (job: Job, owner: string) => {
    started.push(job.type);
    if (started.length === 1) await opts.onFirstStart?.();
    if (job.type === 'email') mailsMax = Math.max(mailsMax, ++mailsNow);
    await sleep(opts.ms);
    if (job.type === 'email') mailsNow--;
    await completeJob(ctx.store.db, job, owner, Date.now());
    return true;
  };
  const queue = openQueue(ctx, ctx.logger, { name: 'queue-test', concurrency: opts.concurrency, deferredConcurrency: opts.deferredConcurrency, pollIntervalMs: 10, leaseMs: 10_000, queuePollIntervalMs: 20 }, run);
  queue.start();
  cleanup.push(() => queue.stop());
  const deadline = Date.now() + 20_000;
  while ((await pendingJobs(ctx)).count > 0 && Date.now() < deadline) await sleep(20);
  await queue.stop();
  return { started, mailsMax };
}

describe('the receptor mails wait for the other jobs', () => {
  it('due mails, even older ones, start after every due send, poll and webhook; then all of them run', async () => {
    const { ctx, store } = await setup();
    const now = Date.now();
    // The mails were due first (an hour ago); the others are due now.
    for (let i = 0; i < 6; i++) await enqueueJob(store.db, { type: 'email', run_at: now - 3600_000 }, now);
    const others: JobType[] = ['send', 'poll', 'webhook', 'send', 'poll', 'webhook'];
    for (const type of others) await enqueueJob(store.db, { type, run_at: now }, now);
    const { started, mailsMax } = await drain(ctx, { concurrency: 3, deferredConcurrency: 2, ms: 40 });
    expect(started).toHaveLength(12);
    expect(started.slice(0, 6).sort()).toEqual([...others].sort());
    expect(started.slice(6)).toEqual(Array(6).fill('email'));
    // SQLite: no more than deferredConcurrency mails at once though 3 slots were free (PostgreSQL has no such limit).
    if (!ON_POSTGRES) expect(mailsMax).toBe(2);
  });

  it('mails run at once when nothing else is due, and a send that becomes due meanwhile is not kept waiting by them', async () => {
    const { ctx, store } = await setup();
    const now = Date.now();
    for (let i = 0; i < 8; i++) await enqueueJob(store.db, { type: 'email', run_at: now }, now);
    // Due 50 ms after the first mail started, while mails are running (8 mails, 2 at a time, 100 ms each: 400 ms).
    // Queued then, not at a time counted from before the queue started: with a fixed due time the send was due before
    // the first job was taken whenever queueing the mails and starting the queue took longer (PostgreSQL, a loaded
    // machine), and went first.
    const sendDue = async () => {
      const t = Date.now();
      await enqueueJob(store.db, { type: 'send', run_at: t + 50 }, t);
    };
    const { started, mailsMax } = await drain(ctx, { concurrency: 4, deferredConcurrency: 2, ms: 100, onFirstStart: sendDue });
    expect(started).toHaveLength(9);
    expect(started[0]).toBe('email');
    // The send took a free slot as soon as it was due: before the last mails started.
    const at = started.indexOf('send');
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(8);
    if (!ON_POSTGRES) expect(mailsMax).toBeLessThanOrEqual(2);
  });
});
