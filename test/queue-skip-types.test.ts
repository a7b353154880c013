// A worker told to skip a job type never takes its jobs (issue 30: a CLI command's worker in local mode leaves an
// account's `mailbox` job to `fecr serve`), and the recurring mailbox jobs are not pending work (pendingJobs), so
// waiting for an idle queue does not wait for them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { openQueue } from '../src/service/delivery/queue.js';
import type { ServiceContext } from '../src/service/context.js';
import { completeJob, enqueueJob, pendingJobs } from '../src/store/jobs.js';
import type { Job, JobType } from '../src/store/schema.js';
import { openTestStore, queuedJobs } from './helpers/stores.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

describe('QueueOptions.skipTypes', () => {
  it('the skipped type stays queued while the others run; it is not counted as pending', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fecr-queue-skip-'));
    const store = await openTestStore({ file: join(dir, 'fecr.db') });
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }), () => store.close());
    const ctx = { store, now: () => Date.now(), logger: pino({ level: 'silent' }) } as unknown as ServiceContext;
    const now = Date.now();
    await enqueueJob(store.db, { type: 'mailbox', account_id: 1, run_at: now - 1_000 }, now);
    for (const type of ['send', 'poll', 'webhook'] as JobType[]) await enqueueJob(store.db, { type, run_at: now }, now);
    expect((await pendingJobs(ctx)).count).toBe(3);
    const ran: JobType[] = [];
    const run = async (job: Job, owner: string) => {
      ran.push(job.type);
      await completeJob(store.db, job, owner, Date.now());
      return true;
    };
    const queue = openQueue(ctx, ctx.logger, { name: 'skip-test', concurrency: 4, deferredConcurrency: 1, pollIntervalMs: 10, leaseMs: 10_000, queuePollIntervalMs: 20, skipTypes: ['mailbox'] }, run);
    queue.start();
    cleanup.push(() => queue.stop());
    const deadline = Date.now() + 15_000;
    while ((await pendingJobs(ctx)).count > 0 && Date.now() < deadline) await sleep(20);
    await sleep(200);
    await queue.stop();
    expect(ran.sort()).toEqual(['poll', 'send', 'webhook']);
    const left = (await queuedJobs(store)).filter((j) => !j.done);
    expect(left.map((j) => j.type)).toEqual(['mailbox']);
  });
});
