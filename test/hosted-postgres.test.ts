// Hosted mode (issue 6): many fecr processes on one PostgreSQL.
//  - the queue on PostgreSQL: a dead worker's jobs (heartbeat stopped, or a lock owner that never registered)
//    are unlocked by a live worker, re-run with GET before POST, and a stale owner cannot complete them;
//  - real child processes: `fecr serve --role auth`, two `--role api` (one verifying with the keys in the
//    database, one through the auth server's JWKS URL), two `--role worker`, one emulator, 2 000 submissions
//    spread over both APIs, one worker killed with SIGKILL mid-run: every document reaches Hacienda exactly once
//    and every webhook is delivered.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { createAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { completeJob, LeaseLostError, pendingJobs } from '../src/store/jobs.js';
import { SecretBox } from '../src/service/secrets.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { openPostgresStore, type Store } from '../src/store/index.js';
import { validInvoice } from './helpers/bodies.js';
import { tempDir } from './helpers/cli.js';
import { mapLimit, postJson, startWebhookReceiver, waitUntil, type WebhookReceiver } from './helpers/e2e.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { createTestDatabase, PG_AVAILABLE, type TestDatabase } from './helpers/stores.js';

let testIssuer: TestIssuer;
beforeAll(() => {
  testIssuer = makeTestIssuer();
});

function makeCtx(store: Store, key: Buffer, emulatorUrl: string): ServiceContext {
  return {
    store,
    secrets: new SecretBox(key),
    logger: pino({ level: 'silent' }),
    now: Date.now,
    randomBytes: (n) => randomBytes(n),
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: emulatorUrl }) },
  };
}

describe.skipIf(!PG_AVAILABLE)('the queue on PostgreSQL (graphile-worker)', () => {
  let database: TestDatabase;
  let emu: RunningEmulator;
  let ctx: ServiceContext;
  let accountId: number;

  beforeAll(async () => {
    database = await createTestDatabase();
    emu = await startEmulator({ processingDelayMs: 20 });
    ctx = makeCtx(await openPostgresStore({ url: database.url, max: 5 }), randomBytes(32), emu.url);
    accountId = (await createAccount(ctx, { base: 'cola', password: 'password-123' })).account.id;
    await registerIssuer(ctx, accountId, { ...testIssuer.issuer });
  });
  afterAll(async () => {
    await ctx?.store.close();
    await emu?.close();
    await database?.drop();
  });

  it("frees the jobs of a worker whose heartbeat stopped and of an owner that never registered; a stale owner cannot complete", async () => {
    const docs: { clave: string }[] = [];
    for (let i = 0; i < 6; i++) docs.push(await submitDocument(ctx, accountId, { ...validInvoice(), numeroReferencia: 100 + i }));
    const db = ctx.store.db;
    const ids = (await sql<{ id: string }>`select id from graphile_worker.jobs where task_identifier = 'fecr_send' order by id`.execute(db)).rows.map((r) => r.id);
    expect(ids).toHaveLength(6);
    // A worker that died holding three jobs (heartbeat a minute old), and one killed before its first heartbeat
    // holding the other three (locked a minute ago).
    const old = Date.now() - 60_000;
    await db.insertInto('queue_workers').values({ id: 'pool-dead', name: 'dead', host: 'h', pid: 1, started_at: old, seen_at: old }).execute();
    await sql`update graphile_worker._private_jobs set locked_by = 'pool-dead', locked_at = now(), attempts = 1 where id = any(${ids.slice(0, 3)}::bigint[])`.execute(db);
    await sql`update graphile_worker._private_jobs set locked_by = 'pool-ghost', locked_at = now() - interval '1 minute', attempts = 1 where id = any(${ids.slice(3)}::bigint[])`.execute(db);

    const worker = startWorker(ctx, { leaseMs: 900, queuePollIntervalMs: 50, firstPollDelayMs: 30, pollMaxIntervalMs: 200 });
    try {
      await waitUntil(async () => (await pendingJobs(ctx)).count === 0, { timeoutMs: 20_000, label: 'queue drained' });
    } finally {
      await worker.stop();
    }
    for (const d of docs) {
      const row = await db.selectFrom('documents').select('state').where('clave', '=', d.clave).executeTakeFirstOrThrow();
      expect(row.state).toBe('aceptado');
    }
    const recs = emu.state.receptions().filter((r) => docs.some((d) => d.clave === r.clave));
    expect(recs).toHaveLength(6);
    for (const r of recs) expect([r.acceptedPosts, r.duplicatePosts]).toEqual([1, 0]);
    // The re-runs were second attempts: Hacienda was asked first (GET before POST).
    expect(worker.stats.sent).toBe(6);
    expect(await db.selectFrom('queue_workers').select('id').where('id', '=', 'pool-dead').executeTakeFirst()).toBeUndefined();
    // The live worker deregistered on stop.
    expect(await db.selectFrom('queue_workers').selectAll().execute()).toHaveLength(0);

    // The lease guard: completing a job another owner holds fails and changes nothing.
    const d = await submitDocument(ctx, accountId, { ...validInvoice(), numeroReferencia: 200 });
    const [job] = (await sql<{ id: string }>`select id from graphile_worker.jobs where key = ${`send:${d.documentId}`}`.execute(db)).rows;
    await sql`update graphile_worker._private_jobs set locked_by = 'pool-b', locked_at = now() where id = ${job!.id}`.execute(db);
    await expect(completeJob(db, { id: Number(job!.id) }, 'pool-a', Date.now())).rejects.toBeInstanceOf(LeaseLostError);
    await completeJob(db, { id: Number(job!.id) }, 'pool-b', Date.now());
    expect((await pendingJobs(ctx)).count).toBe(0);
  });
});

interface Ready {
  authUrl: string;
  baseUrl: string;
  haciendaUrl?: string;
  roles: string[];
  store: string;
}

describe.skipIf(!PG_AVAILABLE)('fecr serve processes on one PostgreSQL', () => {
  const N = Number(process.env.FECR_HOSTED_TEST_DOCS ?? 2000);
  const dir = tempDir('fecr-hosted-');
  const key = randomBytes(32);
  const procs: Spawned<Ready>[] = [];
  let database: TestDatabase;
  let emu: RunningEmulator;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;
  let ctx: ServiceContext;

  beforeAll(async () => {
    database = await createTestDatabase('fecr_hosted');
    emu = await startEmulator({ processingDelayMs: 50 });
    receiver = await startWebhookReceiver();
    env = {
      HOME: dir,
      FECR_DATA_DIR: join(dir, 'data'),
      FECR_NO_KEYCHAIN: '1',
      FECR_DATABASE_URL: database.url,
      FECR_MASTER_KEY: key.toString('base64'),
      FECR_LOG_LEVEL: 'warn',
    };
    ctx = makeCtx(await openPostgresStore({ url: database.url, max: 4 }), key, emu.url);
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await ctx?.store.close();
    await receiver?.close();
    await emu?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start with a master key that does not open the database', async () => {
    // The database gets its first signing key from an auth process with the right key …
    const auth = await spawnFecr<Ready>(['serve', '--role', 'auth'], { env });
    procs.push(auth);
    expect(auth.ready).toMatchObject({ roles: ['auth'], store: 'postgres', baseUrl: '' });
    // … and a process with another key stops at once with a clear message.
    const wrong = spawnFecr<Ready>(['serve', '--role', 'api', '--public-auth-url', auth.ready.authUrl], {
      env: { ...env, FECR_MASTER_KEY: randomBytes(32).toString('base64') },
    });
    await expect(wrong).rejects.toThrow(/FECR_MASTER_KEY does not open this database/);
  });

  it(`two API and two worker processes take ${N} submissions; a worker killed mid-run loses nothing`, { timeout: 240_000 }, async () => {
    const auth = procs[0]!;
    const { account, webhookSecret } = await createAccount(ctx, { base: 'hosted', password: 'password-hosted-1', webhookUrl: receiver.url });
    receiver.secret = webhookSecret ?? undefined;
    await registerIssuer(ctx, account.id, { ...testIssuer.issuer });

    const hacienda = ['--hacienda-url', emu.url];
    const [api1, api2] = await Promise.all([
      spawnFecr<Ready>(['serve', '--role', 'api', '--public-auth-url', auth.ready.authUrl, ...hacienda], { env }),
      spawnFecr<Ready>(['serve', '--role', 'api', '--auth-jwks-url', `${auth.ready.authUrl}/.well-known/jwks.json`, ...hacienda], { env }),
    ]);
    procs.push(api1, api2);
    const workerEnv = { ...env, FECR_WORKER_LEASE_MS: '3000', FECR_WORKER_CONCURRENCY: '16', FECR_QUEUE_POLL_MS: '100' };
    const workerArgs = ['serve', '--role', 'worker', ...hacienda, '--public-api-url', api1.ready.baseUrl];
    const workers = await Promise.all([spawnFecr<Ready>(workerArgs, { env: workerEnv }), spawnFecr<Ready>(workerArgs, { env: workerEnv })]);
    procs.push(...workers);
    for (const w of workers) expect(w.ready).toMatchObject({ roles: ['worker'], baseUrl: '', store: 'postgres' });

    const login = await postJson(`${auth.ready.authUrl}/login`, { base: 'hosted', password: 'password-hosted-1' });
    expect(login.status).toBe(200);
    const token = login.body.token as string;

    // Kill one worker (SIGKILL) once a fifth of the documents reached Hacienda.
    let killedAt = -1;
    const killer = setInterval(() => {
      if (killedAt < 0 && emu.state.receptions().length >= N / 5) {
        killedAt = emu.state.receptions().length;
        workers[0]!.child.kill('SIGKILL');
      }
    }, 20);
    const apis = [api1.ready.baseUrl, api2.ready.baseUrl];
    const t0 = Date.now();
    let claves: string[];
    try {
      claves = await mapLimit(
        Array.from({ length: N }, (_, i) => i),
        32,
        async (i) => {
          const r = await postJson(`${apis[i % 2]}/api/enviar/items`, { ...validInvoice(), numeroReferencia: 10_000 + i }, token);
          if (r.status !== 200) throw new Error(`submission ${i} via ${apis[i % 2]}: ${r.status} ${r.text.slice(0, 300)}`);
          return r.body.clave as string;
        },
      );
      const submittedMs = Date.now() - t0;
      expect(new Set(claves).size).toBe(N);
      const decided = async () =>
        Number((await ctx.store.db.selectFrom('documents').select((eb) => eb.fn.countAll().as('n')).where('state', 'in', ['aceptado', 'rechazado', 'error']).executeTakeFirstOrThrow()).n);
      // The receiver has a webhook before its sender marks the delivery entregado (and a worker killed between the
      // two leaves it for the survivor to send again, same webhook-id): wait for the rows too.
      const delivered = async () =>
        Number((await ctx.store.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll().as('n')).where('state', '=', 'entregado').executeTakeFirstOrThrow()).n);
      await waitUntil(async () => killedAt >= 0 && (await decided()) === N && receiver.claves().size === N && (await delivered()) === N, {
        timeoutMs: 180_000,
        intervalMs: 250,
        label: 'every document decided and its webhook delivered',
        describe: () => `killed at ${killedAt} receptions; ${emu.state.receptions().length} receptions; ${receiver.claves().size} webhooks; survivor log: ${workers[1]!.stderr().slice(-1500)}`,
      });
      console.log(`[hosted] ${N} submissions in ${submittedMs} ms; all decided and delivered in ${Date.now() - t0} ms; worker killed at ${killedAt} receptions`);
    } finally {
      clearInterval(killer);
    }
    expect(workers[0]!.child.signalCode).toBe('SIGKILL');

    // Hacienda received each document exactly once.
    const mine = new Set(claves);
    const recs = emu.state.receptions().filter((r) => mine.has(r.clave));
    expect(recs).toHaveLength(N);
    const twice = recs.filter((r) => r.acceptedPosts !== 1 || r.duplicatePosts !== 0);
    expect(twice, JSON.stringify(twice.slice(0, 3))).toEqual([]);
    // Every document aceptado, one delivery each, delivered; every webhook verified, one webhook-id per clave.
    const states = await ctx.store.db.selectFrom('documents').select(['state']).execute();
    expect(states.filter((s) => s.state !== 'aceptado')).toEqual([]);
    const deliveries = await ctx.store.db.selectFrom('webhook_deliveries').select(['state', 'message_id']).execute();
    expect(deliveries).toHaveLength(N);
    expect(deliveries.filter((d) => d.state !== 'entregado')).toEqual([]);
    expect(receiver.claves()).toEqual(mine);
    const idsPerClave = new Map<string, Set<string>>();
    for (const r of receiver.received.filter((x) => x.verified)) {
      const set = idsPerClave.get(r.clave!) ?? new Set<string>();
      set.add(r.headers['webhook-id']!);
      idsPerClave.set(r.clave!, set);
    }
    expect([...idsPerClave.values()].every((s) => s.size === 1)).toBe(true);
    // The survivor freed the dead worker's jobs; the receptor mails, which come after the documents' own jobs, go
    // too, and then nothing is left in the queue.
    expect(workers[1]!.stderr()).toContain('unlocked the jobs of workers that stopped');
    await waitUntil(async () => (await pendingJobs(ctx)).count === 0, { timeoutMs: 180_000, intervalMs: 250, label: 'the receptor mails after the webhooks' });
    const mails = await ctx.store.db.selectFrom('email_deliveries').select(['state']).execute();
    expect(mails.filter((m) => m.state !== 'enviado')).toEqual([]);
  });
});
