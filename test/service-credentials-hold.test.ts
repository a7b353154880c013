// Issue 25, point 7: a Hacienda password the IdP refuses is not retried for ever. The worker against the emulator in
// strict mode (only the users it knows, with their passwords), a real store (SQLite; PostgreSQL in the "postgres"
// project) and a webhook receiver that verifies the Standard Webhooks signature:
//  - N pending documents of an issuer with a wrong password cause ONE failed login at the emulator, reach
//    `credenciales_invalidas`, and the account's webhook gets `emisor.credenciales_invalidas`; another issuer's
//    documents are accepted meanwhile; a document submitted while held makes no login either;
//  - after the issuer's update with the right password the held documents reach aceptado, each POSTed once;
//  - an IdP that is down (503) or throttling (429) is not a refusal: the documents stay pendiente and are retried.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { resolveEndpoints } from '../src/hacienda/client/index.js';
import { createAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { startWorker, type Worker } from '../src/service/delivery/worker.js';
import { findIssuer, registerIssuer, updateIssuer } from '../src/service/issuers.js';
import { SecretBox } from '../src/service/secrets.js';
import { listDeliveries } from '../src/service/delivery/webhooks.js';
import { PARKED_RUN_AT } from '../src/store/jobs.js';
import type { DocumentState } from '../src/store/schema.js';
import { ISSUER } from './helpers/bodies.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { openTestStore, queuedJobs } from './helpers/stores.js';
import { BODIES, FAST_WORKER, storeSigned, withTimeout } from './helpers/worker-docs.js';

const RIGHT = 'secreto'; // ISSUER.claveHacienda is its base64
const WRONG = 'clave-equivocada';
const OTHER_ID = '3101654321';
const OTHER_USER = 'cpj-3-101-654321@stag.comprobanteselectronicos.go.cr';
const OTHER_PASSWORD = 'otra-clave';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

let seq = 5000;
const dirs: string[] = [];
let bad: TestIssuer; // the test issuer, registered with a wrong claveHacienda
let other: TestIssuer; // a second issuer of the same account, with its right password

beforeAll(() => {
  const t = makeTestIssuer();
  bad = { ...t, issuer: { ...t.issuer, claveHacienda: b64(WRONG) } };
  const p12 = createTestP12({ id: OTHER_ID, type: '02', pin: '4321', name: 'OTRA EMPRESA SOCIEDAD ANONIMA' });
  other = {
    p12,
    creds: loadP12(p12, '4321', new Date()),
    issuer: {
      ...ISSUER,
      identificacion: OTHER_ID,
      nombre: 'OTRA EMPRESA SOCIEDAD ANONIMA',
      nombreComercial: 'Otra Empresa',
      usuarioHacienda: OTHER_USER,
      claveHacienda: b64(OTHER_PASSWORD),
      pinCertificado: '4321',
      certificadoHacienda: p12.toString('base64'),
    },
  };
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Hook {
  headers: IncomingHttpHeaders;
  payload: any;
}

async function startReceiver(): Promise<{ url: string; hooks: Hook[]; secret: string; close(): Promise<void> }> {
  const self = { url: '', hooks: [] as Hook[], secret: '', close: async (): Promise<void> => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Only deliveries whose signature verifies are recorded.
      try {
        const payload = new Webhook(self.secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
        self.hooks.push({ headers: req.headers, payload });
      } catch {
        // unsigned or wrongly signed: not recorded
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
  self.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return self;
}

interface Env {
  ctx: ServiceContext;
  accountId: number;
  badId: number;
  otherId: number;
}

async function makeEnv(emu: RunningEmulator, webhookUrl: string): Promise<Env & { webhookSecret: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-cred-hold-'));
  dirs.push(dir);
  const ctx: ServiceContext = {
    store: await openTestStore({ file: join(dir, 'fecr.db') }),
    secrets: new SecretBox(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    now: Date.now,
    randomBytes: (n) => randomBytes(n),
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: emu.url }) },
  };
  const { account, webhookSecret } = await createAccount(ctx, { base: 'acme', password: 'password-123', webhookUrl });
  await registerIssuer(ctx, account.id, bad.issuer);
  await registerIssuer(ctx, account.id, other.issuer);
  const badRow = await findIssuer(ctx, account.id, bad.issuer.identificacion);
  const otherRow = await findIssuer(ctx, account.id, OTHER_ID);
  return { ctx, accountId: account.id, badId: badRow!.id, otherId: otherRow!.id, webhookSecret: webhookSecret ?? '' };
}

/** A signed FE of `issuer` stored with its send job. */
async function submit(env: Env, issuer: TestIssuer): Promise<{ id: number; clave: string }> {
  const body = BODIES.FE();
  body['emisor'] = issuer.issuer.identificacion;
  body['numeroReferencia'] = ++seq;
  return storeSigned({ ctx: env.ctx, accountId: env.accountId, issuerId: issuer === other ? env.otherId : env.badId }, issuer, body);
}

async function states(env: Env, docs: { clave: string }[]): Promise<DocumentState[]> {
  const rows = await env.ctx.store.db.selectFrom('documents').select(['clave', 'state']).where('clave', 'in', docs.map((d) => d.clave)).execute();
  return docs.map((d) => rows.find((r) => r.clave === d.clave)!.state);
}

/** Polls `check` until it holds or `ms` pass; the last value is returned either way. */
async function eventually<T>(check: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an issuer whose Hacienda password is refused', () => {
  let emu: RunningEmulator;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let env: Env;
  let worker: Worker | undefined;

  beforeAll(async () => {
    emu = await startEmulator({ processingDelayMs: 30, users: { [ISSUER.usuarioHacienda]: RIGHT, [OTHER_USER]: OTHER_PASSWORD } });
    receiver = await startReceiver();
    const made = await makeEnv(emu, receiver.url);
    receiver.secret = made.webhookSecret;
    env = made;
  });
  afterAll(async () => {
    await worker?.stop();
    await env?.ctx.store.close();
    await receiver?.close();
    await emu?.close();
  });

  it('N pending documents make ONE failed IdP login; they are held (credenciales_invalidas), the webhook says so, the other issuer is accepted', async () => {
    const N = 6;
    const held: { id: number; clave: string }[] = [];
    for (let i = 0; i < N; i++) held.push(await submit(env, bad));
    const fine = [await submit(env, other), await submit(env, other)];
    worker = startWorker(env.ctx, FAST_WORKER);

    const got = await eventually(() => states(env, held), (s) => s.every((x) => x === 'credenciales_invalidas'), 10_000);
    expect(got).toEqual(Array(N).fill('credenciales_invalidas'));
    // The other issuer's documents go through meanwhile.
    expect(await eventually(() => states(env, fine), (s) => s.every((x) => x === 'aceptado'), 15_000)).toEqual(['aceptado', 'aceptado']);
    // Time for today's retries (backoff 20–200 ms) to show up: none come.
    await sleep(1_500);
    expect(emu.state.idp.failedGrants).toBe(1);
    expect(emu.state.idp.grantsByUser[ISSUER.usuarioHacienda]).toBeUndefined();
    expect(await states(env, held)).toEqual(Array(N).fill('credenciales_invalidas'));
    // Nothing of the held issuer reached the reception API.
    expect(emu.state.receptions().filter((r) => held.some((d) => d.clave === r.clave))).toHaveLength(0);

    // The detalle says why and what to do; the issuer row keeps the IdP's answer.
    const row = await env.ctx.store.db.selectFrom('documents').select(['detalle_mensaje', 'decided_at']).where('id', '=', held[0]!.id).executeTakeFirstOrThrow();
    expect(row.detalle_mensaje).toContain(`Hacienda rechazó las credenciales del emisor ${ISSUER.identificacion}`);
    expect(row.detalle_mensaje).toContain('Invalid user credentials');
    expect(row.detalle_mensaje).toContain('fecr emisor update');
    expect(row.decided_at).toBeNull();
    const issuerRow = await findIssuer(env.ctx, env.accountId, ISSUER.identificacion);
    expect(issuerRow!.hacienda_refused_at).toBeGreaterThan(0);
    expect(issuerRow!.hacienda_refused_detail).toBe('Invalid user credentials');

    // The jobs are parked, not due: the worker is idle although they are not done.
    await withTimeout(worker.idle(), 10_000, 'worker idle with held documents');
    for (const d of held) expect((await queuedJobs(env.ctx.store, { documentId: d.id })).filter((j) => j.type === 'send' && !j.done)).toHaveLength(1);

    // One signed webhook event for the issuer, once.
    const events = await eventually(async () => receiver.hooks.filter((h) => h.payload.type === 'emisor.credenciales_invalidas'), (e) => e.length > 0, 5_000);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({
      type: 'emisor.credenciales_invalidas',
      folioType: 'INVOICE',
      emisor: { identificacion: ISSUER.identificacion, usuarioHacienda: ISSUER.usuarioHacienda, ambiente: 2 },
      detalle: 'Invalid user credentials',
    });
    expect(held.map((d) => d.clave)).toContain(events[0]!.payload.folioId);
    expect(events[0]!.payload.comprobantesRetenidos).toBeGreaterThanOrEqual(1);
    expect(events[0]!.payload.solucion).toContain('/api/actualizar/emisor');
    expect(events[0]!.headers['webhook-id']).toMatch(/^msg_credenciales_/);
    const deliveries = await listDeliveries(env.ctx, env.accountId);
    expect(deliveries.filter((d) => d.messageId === events[0]!.headers['webhook-id'])).toMatchObject([{ state: 'entregado' }]);
  });

  it('a document submitted while the issuer is held is held at once, without an IdP request', async () => {
    const d = await submit(env, bad);
    worker!.wake();
    expect(await eventually(() => states(env, [d]), (s) => s[0] === 'credenciales_invalidas', 5_000)).toEqual(['credenciales_invalidas']);
    await sleep(300);
    expect(emu.state.idp.failedGrants).toBe(1);
    expect(receiver.hooks.filter((h) => h.payload.type === 'emisor.credenciales_invalidas')).toHaveLength(1);
  });

  it('after the update with the right password the held documents are accepted, each POSTed once; no new failed login', async () => {
    const held = await env.ctx.store.db.selectFrom('documents').select(['id', 'clave']).where('issuer_id', '=', env.badId).execute();
    expect(held.length).toBe(7);
    const r = await updateIssuer(env.ctx, env.accountId, { ...bad.issuer, claveHacienda: b64(RIGHT) });
    expect(r.released?.slice().sort((a, b) => a - b)).toEqual(held.map((d) => Number(d.id)).sort((a, b) => a - b));
    worker!.wake();
    const got = await eventually(() => states(env, held), (s) => s.every((x) => x === 'aceptado'), 20_000);
    expect(got).toEqual(Array(held.length).fill('aceptado'));
    const recs = emu.state.receptions().filter((x) => held.some((d) => d.clave === x.clave));
    expect(recs).toHaveLength(held.length);
    for (const x of recs) expect(x).toMatchObject({ acceptedPosts: 1, duplicatePosts: 0, estado: 'aceptado', username: ISSUER.usuarioHacienda });
    expect(emu.state.idp.failedGrants).toBe(1);
    expect(emu.state.idp.grantsByUser[ISSUER.usuarioHacienda]).toBeGreaterThanOrEqual(1);
    const issuerRow = await findIssuer(env.ctx, env.accountId, ISSUER.identificacion);
    expect(issuerRow).toMatchObject({ hacienda_refused_at: null, hacienda_refused_detail: null });
    // Each held document's verdict is delivered like any other.
    await withTimeout(worker!.idle(), 15_000, 'worker idle');
    for (const d of held) expect(receiver.hooks.filter((h) => h.payload.folioId === d.clave && h.payload.folioDetails)).toHaveLength(1);
  });

  it('an update with the same wrong password is tried once more, then held again (one more failed login, one more event)', async () => {
    // The update first: a document submitted before it could be sent by a worker quick enough (PostgreSQL's) with the
    // right password still in force, and be enviado before the wrong one is stored.
    await updateIssuer(env.ctx, env.accountId, bad.issuer);
    const d = await submit(env, bad);
    worker!.wake();
    expect(await eventually(() => states(env, [d]), (s) => s[0] !== 'pendiente', 10_000)).toEqual(['credenciales_invalidas']);
    await sleep(500);
    expect(emu.state.idp.failedGrants).toBe(2);
    await eventually(async () => receiver.hooks.filter((h) => h.payload.type === 'emisor.credenciales_invalidas'), (e) => e.length >= 2, 5_000);
    expect(receiver.hooks.filter((h) => h.payload.type === 'emisor.credenciales_invalidas')).toHaveLength(2);
  });
});

describe('an IdP that is down or throttling is not a refusal', () => {
  it('503 and 429 at the IdP: the documents stay pendiente and are retried, then accepted; nothing is held', async () => {
    const emu = await startEmulator({ processingDelayMs: 20, users: { [ISSUER.usuarioHacienda]: RIGHT, [OTHER_USER]: OTHER_PASSWORD } });
    const receiver = await startReceiver();
    const made = await makeEnv(emu, receiver.url);
    receiver.secret = made.webhookSecret;
    const env: Env = made;
    // The issuer's right password this time.
    await updateIssuer(env.ctx, env.accountId, { ...bad.issuer, claveHacienda: b64(RIGHT) });
    let worker: Worker | undefined;
    try {
      for (const fault of [{ idpOutage: true }, { rateLimitRate: 1, retryAfterSeconds: 0, targets: ['idp' as const] }]) {
        emu.state.setFaults({ reset: true, ...fault });
        const docs = [await submit(env, bad), await submit(env, bad)];
        const idpBefore = emu.state.requestCounts.idp;
        worker = startWorker(env.ctx, FAST_WORKER);
        // Retried as before: more than one login (of 3 requests each), the documents pendiente, the jobs not parked.
        expect(await eventually(async () => emu.state.requestCounts.idp - idpBefore, (n) => n > 6, 10_000)).toBeGreaterThan(6);
        expect(await states(env, docs)).toEqual(['pendiente', 'pendiente']);
        for (const d of docs) {
          const jobs = (await queuedJobs(env.ctx.store, { documentId: d.id })).filter((j) => j.type === 'send' && !j.done);
          expect(jobs).toHaveLength(1);
          expect(jobs[0]!.run_at).toBeLessThan(PARKED_RUN_AT);
        }
        const issuerRow = await findIssuer(env.ctx, env.accountId, ISSUER.identificacion);
        expect(issuerRow!.hacienda_refused_at).toBeNull();
        emu.state.setFaults({ reset: true });
        expect(await eventually(() => states(env, docs), (s) => s.every((x) => x === 'aceptado'), 15_000)).toEqual(['aceptado', 'aceptado']);
        await worker.stop();
        worker = undefined;
      }
      expect(emu.state.idp.failedGrants).toBe(0);
      expect(receiver.hooks.filter((h) => h.payload.type === 'emisor.credenciales_invalidas')).toHaveLength(0);
    } finally {
      await worker?.stop();
      await env.ctx.store.close();
      await receiver.close();
      await emu.close();
    }
  });
});
