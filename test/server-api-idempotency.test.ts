// Issue 36, item 1: the Idempotency-Key header of POST /api/enviar/items (Stripe's contract). The client API app is
// tested without sockets (Fastify's inject) on a real store (SQLite file, or PostgreSQL in the postgres project) with a
// real .p12; nothing reaches Hacienda (the documents stay queued). The same key and body within 24 h answer the first
// result and make nothing new, also when the requests arrive at once; the same key with another body is a 409 naming
// the key; a body without numeroReferencia is numbered by the service once, under its key. One test listens on
// 127.0.0.1:0: the remote client's retry after a lost answer, under the same key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../src/server/api-app.js';
import { RemoteBackend } from '../src/client/remote-backend.js';
import { createAccount } from '../src/service/accounts.js';
import { registerIssuer } from '../src/service/issuers.js';
import { submitDocument } from '../src/service/documents.js';
import { openSqliteStore } from '../src/store/index.js';
import type { ServiceContext } from '../src/service/context.js';
import { validInvoice } from './helpers/bodies.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { ON_POSTGRES } from './helpers/stores.js';

/** Account B's issuer. */
const OTHER = '3101654321';
const DAY = 24 * 60 * 60 * 1000;
let clock = Date.now();
let t: TestContext;
let app: ReturnType<typeof buildApiApp>;
let accountA: number;

/** An invoice under a number of its own (the detalle tells bodies apart). */
function invoice(numero: number | undefined, detalle = 'Consultoría en gestión estratégica'): Record<string, any> {
  const { numeroReferencia: _n, ...b } = validInvoice();
  (b.detalleServicio as { detalle: string }[])[0]!.detalle = detalle;
  return numero === undefined ? b : { ...b, numeroReferencia: numero };
}

async function post(body: unknown, headers: Record<string, string> = {}, token = 'empresa-a', on = app) {
  const res = await on.inject({
    method: 'POST',
    url: '/api/enviar/items',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.json() as Record<string, any>, headers: res.headers };
}

async function documents(ctx: ServiceContext = t.ctx): Promise<string[]> {
  return (await ctx.store.db.selectFrom('documents').select('clave').orderBy('id').execute()).map((r) => r.clave);
}

beforeAll(async () => {
  t = await makeServiceContext({ now: () => clock });
  accountA = (await createAccount(t.ctx, { base: 'empresa-a', password: 'contrasena-a-123' })).account.id;
  const b = (await createAccount(t.ctx, { base: 'empresa-b', password: 'contrasena-b-123' })).account.id;
  const issuer = makeTestIssuer().issuer;
  await registerIssuer(t.ctx, accountA, issuer);
  // Account B is another taxpayer: one cédula numbers in one account of a service (issue 36, item 6).
  const otherP12 = createTestP12({ id: OTHER, type: '02', pin: issuer.pinCertificado, name: issuer.nombre });
  await registerIssuer(t.ctx, b, { ...issuer, identificacion: OTHER, certificadoHacienda: otherP12.toString('base64') });
  // The bearer token is the account's name (the token checks are server-api.test.ts's).
  app = buildApiApp(t.ctx, { authenticate: async (h) => (h?.startsWith('Bearer ') ? { base: h.slice(7) } : null), heavyWork: { threads: 0 } });
});

afterAll(async () => {
  await app?.close();
  await t?.close();
});

describe('POST /api/enviar/items with Idempotency-Key', () => {
  it('twice with one key and body: the same status, body and clave; one document; the replay says so', async () => {
    const before = (await documents()).length;
    const first = await post(invoice(101), { 'idempotency-key': 'pedido-101' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: 'success', message: expect.any(String), clave: expect.stringMatching(/^\d{50}$/) });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(invoice(101), { 'idempotency-key': 'pedido-101' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await documents()).length).toBe(before + 1);
  });

  it('the same key with another body: 409 conflict naming the key; nothing stored', async () => {
    const first = await post(invoice(102), { 'idempotency-key': 'pedido-102' });
    expect(first.status).toBe(200);
    const before = await documents();
    const other = await post(invoice(103, 'Otra cosa'), { 'idempotency-key': 'pedido-102' });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({
      error: 'conflict',
      message: expect.stringContaining('"pedido-102"'),
      details: [{ path: 'Idempotency-Key', message: expect.stringContaining(first.body.clave) }],
    });
    expect(await documents()).toEqual(before);
  });

  it('a body without numeroReferencia: the spec\'s 400 without a key; with one, numbered once (sent again: the same clave)', async () => {
    const before = (await documents()).length;
    const bare = await post(invoice(undefined, 'Sin número'));
    expect(bare.status).toBe(400);
    expect(JSON.stringify(bare.body.details)).toContain('numeroReferencia');
    const first = await post(invoice(undefined, 'Sin número'), { 'idempotency-key': 'venta-sin-numero' });
    expect(first.status).toBe(200);
    // The next free number of the series (101–102 taken above; the refused 103 took none).
    expect(Number(first.body.clave.slice(31, 41))).toBe(103);
    for (let i = 0; i < 2; i++) expect((await post(invoice(undefined, 'Sin número'), { 'idempotency-key': 'venta-sin-numero' })).body).toEqual(first.body);
    // Another key is another intent: the next number.
    const second = await post(invoice(undefined, 'Sin número'), { 'idempotency-key': 'venta-sin-numero-2' });
    expect(Number(second.body.clave.slice(31, 41))).toBe(104);
    expect((await documents()).length).toBe(before + 2);
  });

  it('concurrent requests under one key make one document, each answered with its clave', async () => {
    const before = (await documents()).length;
    // On SQLite a second store on the same file as well (another connection, as a second process would have); on
    // PostgreSQL the pool's connections already run the requests side by side.
    const second = ON_POSTGRES ? undefined : await openSqliteStore({ file: t.dbFile });
    const other = second ? buildApiApp({ ...t.ctx, store: second }, { authenticate: async (h) => ({ base: h!.slice(7) }), heavyWork: { threads: 0 } }) : app;
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post(invoice(undefined, 'A la vez'), { 'idempotency-key': 'a-la-vez' }, 'empresa-a', i % 2 ? other : app)));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
      expect(new Set(answers.map((a) => a.body.clave)).size).toBe(1);
      expect((await documents()).length).toBe(before + 1);
      // The service's own call, concurrent too (numbered and not): one document each.
      const r = await Promise.all([1, 2, 3].map(() => submitDocument(t.ctx, accountA, invoice(undefined, 'Servicio'), { idempotencyKey: 'svc', assignNumber: true })));
      expect(new Set(r.map((x) => x.clave)).size).toBe(1);
      expect(r.filter((x) => x.created)).toHaveLength(1);
      expect((await documents()).length).toBe(before + 2);
    } finally {
      if (other !== app) await other.close();
      await second?.close();
    }
  });

  it('a key is the account\'s own: another account with the same key and body gets its own document', async () => {
    const a = await post(invoice(201), { 'idempotency-key': 'compartida' });
    const b = await post({ ...invoice(201), emisor: OTHER }, { 'idempotency-key': 'compartida' }, 'empresa-b');
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    const ids = await t.ctx.store.db.selectFrom('documents').select('account_id').where('clave', 'in', [a.body.clave, b.body.clave]).execute();
    expect(ids.map((r) => Number(r.account_id)).sort()).toHaveLength(2);
  });

  it('after 24 h the key is free again: the same key then makes a new document', async () => {
    const first = await post(invoice(undefined, 'Ayer'), { 'idempotency-key': 'diaria' });
    clock += DAY - 1000;
    expect((await post(invoice(undefined, 'Ayer'), { 'idempotency-key': 'diaria' })).body.clave).toBe(first.body.clave);
    expect((await post(invoice(undefined, 'Hoy'), { 'idempotency-key': 'diaria' })).status).toBe(409);
    clock += 2000;
    const later = await post(invoice(undefined, 'Hoy'), { 'idempotency-key': 'diaria' });
    expect(later.status).toBe(200);
    expect(later.body.clave).not.toBe(first.body.clave);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    // The account's keys past their window are gone (the table does not grow with every request ever made): swept
    // once an hour per account (service/idempotency.ts SWEEP_MS), not by a DELETE per submission.
    clock += 60 * 60 * 1000;
    expect((await post(invoice(undefined, 'Mañana'), { 'idempotency-key': 'otra-diaria' })).status).toBe(200);
    const old = await t.ctx.store.db.selectFrom('idempotency_keys').select('key').where('account_id', '=', accountA).where('created_at', '<', clock - DAY).execute();
    expect(old).toEqual([]);
  });

  it('a refused body keeps no key: corrected, the same key goes through', async () => {
    const bad = await post({ ...invoice(301), codigoActividad: 'xx' }, { 'idempotency-key': 'corregida' });
    expect(bad.status).toBe(400);
    const ok = await post(invoice(301), { 'idempotency-key': 'corregida' });
    expect(ok.status).toBe(200);
  });

  it('a malformed key is a 400 naming the header (over 255 characters, not printable ASCII, empty); nothing stored', async () => {
    const before = (await documents()).length;
    for (const key of ['k'.repeat(256), 'tab\there', '']) {
      const r = await post(invoice(401), { 'idempotency-key': key });
      expect(r.status, JSON.stringify(key)).toBe(400);
      expect(r.body).toMatchObject({ error: 'bad_request', message: expect.stringContaining('Idempotency-Key'), details: [{ path: 'Idempotency-Key' }] });
    }
    expect((await post(invoice(401), { 'idempotency-key': 'k'.repeat(255) })).status).toBe(200);
    expect((await documents()).length).toBe(before + 1);
  });

  it('the remote client sends one key per call, the same for its retries: an answer lost after the document was made issues nothing twice', async () => {
    // This one over a socket: the first answer to /api/enviar/items is cut after the service made the document.
    const lossy = buildApiApp(t.ctx, { authenticate: async (h) => ({ base: h!.slice(7) }), heavyWork: { threads: 0 } });
    let cut = 0;
    lossy.addHook('onSend', async (req, _reply, payload) => {
      if (req.url.startsWith('/api/enviar/items') && cut++ === 0) req.raw.socket.destroy();
      return payload;
    });
    const url = await lossy.listen({ host: '127.0.0.1', port: 0 });
    const remote = new RemoteBackend({ baseUrl: url, token: 'empresa-a', retry: { baseMs: 10, maxMs: 50 } });
    try {
      const before = (await documents()).length;
      const r = await remote.submit(invoice(undefined, 'Respuesta perdida'));
      expect(cut).toBe(2);
      expect(r).toEqual({ clave: expect.stringMatching(/^\d{50}$/), alreadySent: true, assigned: Number(r.clave.slice(31, 41)) });
      expect((await documents()).length).toBe(before + 1);
      // Another call is another intent (`fecr send --new` remotely): a document of its own.
      const other = await remote.submit(invoice(undefined, 'Respuesta perdida'));
      expect(other.clave).not.toBe(r.clave);
      expect(other.alreadySent).toBeUndefined();
      // The caller's key (`fecr send`'s key of the body) makes the calls one intent.
      const keyed = await remote.submit(invoice(undefined, 'Respuesta perdida'), { idempotencyKey: 'send:misma' });
      expect((await remote.submit(invoice(undefined, 'Respuesta perdida'), { idempotencyKey: 'send:misma' })).clave).toBe(keyed.clave);
      expect((await documents()).length).toBe(before + 3);
    } finally {
      await remote.close();
      await lossy.close();
    }
  });

  it('/openapi.json documents the header and the 409', async () => {
    const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, { post: { parameters: { name: string; in: string }[]; responses: Record<string, unknown> } }> };
    const op = spec.paths['/api/enviar/items']!.post;
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
    expect(op.responses['409']).toBeDefined();
  });
});
