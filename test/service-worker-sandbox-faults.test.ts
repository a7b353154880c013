// The service's worker against the two faults the real sandbox shows (issue 19), on the real emulator and a real
// store: the index delay (a GET right after the 202 answers 404 for a while) and per-issuer per-minute quotas
// (POST /recepcion answers 429 with Retry-After to the next minute). Every document must end aceptado with
// exactly one accepted POST per clave and no duplicate POST.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveEndpoints } from '../src/hacienda/client/index.js';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../src/emulator/index.js';
import { createAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { findIssuer, registerIssuer } from '../src/service/issuers.js';
import { SecretBox } from '../src/service/secrets.js';
import { startWorker, type Worker, type WorkerOptions } from '../src/service/delivery/worker.js';
import type { DocumentRow } from '../src/store/schema.js';
import { ISSUER } from './helpers/bodies.js';
import { BODIES, FAST_WORKER, storeSigned, withTimeout, type Kind } from './helpers/worker-docs.js';
import { openTestStore } from './helpers/stores.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';

const KINDS: Kind[] = ['FE', 'NC', 'TE'];
const { webhookBackoffBaseMs: _w1, webhookBackoffMaxMs: _w2, ...FAST } = FAST_WORKER;

let seq = 5000;
let testIssuer: TestIssuer;
const dirs: string[] = [];
beforeAll(() => {
  testIssuer = makeTestIssuer();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Env {
  ctx: ServiceContext;
  accountId: number;
  issuerId: number;
}

async function makeEnv(emu: RunningEmulator, now: () => number = Date.now): Promise<Env> {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-sandbox-faults-'));
  dirs.push(dir);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const ctx: ServiceContext = {
    store: await openTestStore({ file: join(dir, 'fecr.db') }),
    secrets: new SecretBox(randomBytes(32)),
    logger: pino({ level: 'debug' }, sink),
    now,
    randomBytes: (n) => randomBytes(n),
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: emu.url }) },
  };
  const { account } = await createAccount(ctx, { base: 'acme', password: 'password-123' });
  await registerIssuer(ctx, account.id, { ...testIssuer.issuer });
  const row = await findIssuer(ctx, account.id, ISSUER.identificacion);
  return { ctx, accountId: account.id, issuerId: row!.id };
}

/** A signed document of `kind` stored with its send job (test/helpers/worker-docs.ts). */
async function submit(env: Env, kind: Kind): Promise<{ id: number; clave: string }> {
  const body = BODIES[kind]();
  body['numeroReferencia'] = ++seq;
  return storeSigned(env, testIssuer, body);
}

async function stateOf(ctx: ServiceContext, clave: string): Promise<DocumentRow['state']> {
  return (await ctx.store.db.selectFrom('documents').select('state').where('clave', '=', clave).executeTakeFirstOrThrow()).state;
}


async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  await withTimeout(
    (async () => {
      while (!cond()) await new Promise((r) => setTimeout(r, 5));
    })(),
    ms,
    what,
  );
}

/** Runs a worker until the queue is empty; returns it stopped. */
async function runToIdle(env: Env, opts: WorkerOptions, ms = 20_000): Promise<Worker> {
  const worker = startWorker(env.ctx, opts);
  try {
    await withTimeout(worker.idle(), ms, 'worker idle');
  } finally {
    await worker.stop();
  }
  return worker;
}

async function expectAllAcceptedOnce(emu: RunningEmulator, env: Env, docs: { clave: string }[]): Promise<void> {
  for (const d of docs) expect(await stateOf(env.ctx, d.clave)).toBe('aceptado');
  const recs = emu.state.receptions();
  expect(recs.map((r) => r.clave).sort()).toEqual(docs.map((d) => d.clave).sort());
  for (const r of recs) expect({ clave: r.clave, acceptedPosts: r.acceptedPosts, duplicatePosts: r.duplicatePosts }).toEqual({ clave: r.clave, acceptedPosts: 1, duplicatePosts: 0 });
}

async function withEmulator(opts: EmulatorOptions, fn: (emu: RunningEmulator) => Promise<void>): Promise<void> {
  const emu = await startEmulator(opts);
  try {
    await fn(emu);
  } finally {
    await emu.close();
  }
}

describe('index delay: a 404 right after the 202 is not a lost document', () => {
  it('after a 202, polls that see 404 for 1 s keep polling: every document ends aceptado', async () => {
    await withEmulator({ processingDelayMs: 20, faults: { indexDelayMs: 1_000 } }, async (emu) => {
      const env = await makeEnv(emu);
      const docs = [];
      for (const k of KINDS) docs.push(await submit(env, k));
      await runToIdle(env, FAST);
      await expectAllAcceptedOnce(emu, env, docs);
      expect(emu.state.faultStats.indexDelayed).toBeGreaterThan(0);
      await env.ctx.store.close();
    });
  });

  it("the first POST's answer is lost and the GET before a re-POST sees 404 (index delay): the worker asks again, never POSTs twice", async () => {
    // Only POSTs draw from `random`: the first draw (< 0.5) loses the first POST's answer, every other is kept.
    let draws = 0;
    const random = () => (draws++ === 0 ? 0 : 0.99);
    await withEmulator(
      { processingDelayMs: 20, random, faults: { indexDelayMs: 1_500, lostResponseRate: 0.5, methods: ['POST'], targets: ['recepcion'] } },
      async (emu) => {
        const env = await makeEnv(emu);
        const doc = await submit(env, 'FE');
        const worker = await runToIdle(env, FAST);
        expect(emu.state.faultStats.lostResponses).toBe(1);
        expect(emu.state.faultStats.indexDelayed).toBeGreaterThan(0); // the GET after the lost answer saw 404
        await expectAllAcceptedOnce(emu, env, [doc]);
        expect(worker.stats.confirmedByStatus).toBe(1); // found by GET, not by a second POST
        await env.ctx.store.close();
      },
    );
  });

  it('30 % of POST answers lost with a 1 s index delay: 12 documents, each POSTed once', async () => {
    await withEmulator(
      { processingDelayMs: 20, seed: 11, faults: { indexDelayMs: 1_000, lostResponseRate: 0.3, methods: ['POST'], targets: ['recepcion'] } },
      async (emu) => {
        const env = await makeEnv(emu);
        const docs = [];
        for (let i = 0; i < 12; i++) docs.push(await submit(env, KINDS[i % 3]!));
        await runToIdle(env, FAST);
        expect(emu.state.faultStats.lostResponses).toBeGreaterThan(0);
        await expectAllAcceptedOnce(emu, env, docs);
        await env.ctx.store.close();
      },
    );
  });

  it('the wait is bounded: past indexDelayToleranceMs the worker POSTs again, Hacienda says "ya fue recibido", and the document is not lost', async () => {
    let draws = 0;
    const random = () => (draws++ === 0 ? 0 : 0.99);
    await withEmulator(
      { processingDelayMs: 20, random, faults: { indexDelayMs: 4_000, lostResponseRate: 0.5, methods: ['POST'], targets: ['recepcion'] } },
      async (emu) => {
        const env = await makeEnv(emu);
        const doc = await submit(env, 'TE');
        const started = Date.now();
        await runToIdle(env, { ...FAST, indexDelayToleranceMs: 500 });
        expect(await stateOf(env.ctx, doc.clave)).toBe('aceptado');
        const rec = emu.state.receptions().find((r) => r.clave === doc.clave);
        expect(rec).toMatchObject({ acceptedPosts: 1, duplicatePosts: 1 });
        expect(Date.now() - started).toBeGreaterThanOrEqual(4_000); // the polls waited out the index delay
        await env.ctx.store.close();
      },
    );
  });
});

describe('per-issuer per-minute quota', () => {
  it('quota 5, 8 documents of one issuer: 5 accepted at once, 3 answered 429 once each, sent again at the next minute; all aceptado, no duplicate', async () => {
    // One clock for the emulator and the service, 30 s into a minute; the test moves it to the next minute
    // instead of waiting (the Retry-After, ~28 s, is longer than the worker's client waits inline).
    let offset = (((30_000 - (Date.now() % 60_000)) % 60_000) + 60_000) % 60_000;
    const now = () => Date.now() + offset;
    await withEmulator({ processingDelayMs: 20, now, faults: { quotaPerMinute: 5 } }, async (emu) => {
      const env = await makeEnv(emu, now);
      const docs = [];
      for (let i = 0; i < 8; i++) docs.push(await submit(env, KINDS[i % 3]!));
      const windowEnd = (Math.floor(now() / 60_000) + 1) * 60_000;
      const worker = startWorker(env.ctx, { ...FAST, leaseMs: 300_000 });
      try {
        await until(() => emu.state.receptions().length === 5 && emu.state.faultStats.quotaLimited >= 3, 15_000, '5 receptions and 3 429s');
        await new Promise((r) => setTimeout(r, 1_000));
        // Retry-After honoured: no POST again before the next minute.
        expect(emu.state.faultStats.quotaLimited).toBe(3);
        const waiting = await env.ctx.store.db.selectFrom('jobs').select(['run_at']).where('type', '=', 'send').where('done_at', 'is', null).execute();
        expect(waiting).toHaveLength(3);
        for (const j of waiting) expect(Number(j.run_at)).toBeGreaterThanOrEqual(windowEnd);
        // The next minute.
        offset += windowEnd - now() + 50;
        worker.wake();
        await withTimeout(worker.idle(), 20_000, 'worker idle');
      } finally {
        await worker.stop();
      }
      await expectAllAcceptedOnce(emu, env, docs);
      expect(emu.state.faultStats.quotaLimited).toBe(3);
      await env.ctx.store.close();
    });
  });
});
