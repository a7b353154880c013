// The contingency use cases (service/contingency.ts) and their queries (store/contingency.ts, migration 0016) on the
// test store (SQLite; PostgreSQL in the postgres project) and, when it answers, on PostgreSQL as well: the situación
// a submission is given (not part of the body's identity), the provisional comprobantes, what is owed (the clave's
// 42nd character read by SQL), and the replacement's marking. No Hacienda is reached (nothing runs the queue).
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { RemoteContingency } from '../src/client/contingency-backends.js';
import { startEmulator } from '../src/emulator/index.js';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { buildApiApp } from '../src/server/api-app.js';
import { contingencyOwed, getProvisional, haciendaReachable, markReplaced, recordProvisionals } from '../src/service/contingency.js';
import type { ServiceContext } from '../src/service/context.js';
import { submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { SecretBox } from '../src/service/secrets.js';
import { ServiceError } from '../src/service/service-error.js';
import { provisionalReference, replacementBody, type Provisional } from '../src/core/contingency.js';
import { validInvoice } from './helpers/bodies.js';
import { tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { openTestStore, PG_AVAILABLE, TEST_STORE, type TestDialect } from './helpers/stores.js';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of closers) await c();
});

async function context(dialect: TestDialect, bases: string[] = ['local']): Promise<{ ctx: ServiceContext; account: number }> {
  const store = await openTestStore({ file: `${tempDir('fecr-contingency-svc-')}/fecr.db`, dialect });
  closers.push(() => store.close());
  const ctx: ServiceContext = {
    store,
    secrets: new SecretBox(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    now: Date.now,
    randomBytes: (n) => randomBytes(n),
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: 'http://127.0.0.1:9' }) },
  };
  const now = Date.now();
  const ids: number[] = [];
  for (const base of bases) {
    const { id } = await store.db
      .insertInto('accounts')
      .values({ base, password_hash: 'x', disabled: 0, webhook_url: null, webhook_secret_enc: null, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(id);
  }
  await registerIssuer(ctx, ids[0]!, makeTestIssuer().issuer);
  return { ctx, account: ids[0]! };
}

/** The body as the replacement of a provisional comprobante (situación 2, its 05/08 reference: core/contingency.ts). */
function replacing(body: Record<string, unknown>, p: Provisional): Record<string, unknown> {
  const r = replacementBody(body, p);
  if (!r.ok) throw new Error(JSON.stringify(r.findings));
  return r.body;
}

const dialects: TestDialect[] = [...new Set<TestDialect>([TEST_STORE, ...(PG_AVAILABLE ? (['postgres'] as const) : [])])];

describe.each(dialects)('contingency use cases on %s', (dialect) => {
  it('situación given to a body without one; the same body again is that document; what is owed; provisional replaced', async () => {
    const { ctx, account } = await context(dialect);
    const body = { ...validInvoice(), numeroReferencia: 41 };
    const first = await submitDocument(ctx, account, body, { situacion: '3' });
    expect(first.clave.charAt(41)).toBe('3');
    // The body sent again (no situación given now): the same document, nothing new.
    const again = await submitDocument(ctx, account, body);
    expect(again).toEqual({ ...first, created: false });
    // A body's own situación wins over the option.
    const own = await submitDocument(ctx, account, { ...validInvoice(), numeroReferencia: 42, situacion: '1' }, { situacion: '3' });
    expect(own.clave.charAt(41)).toBe('1');

    const [p] = await recordProvisionals(ctx, account, { numero: 'P-1', fechaEmision: '2026-10-14T09:30:00-06:00', emisor: '3101123456', totalComprobante: '105939.195' });
    expect(p!.created).toBe(true);
    const refused = await recordProvisionals(ctx, account, [{ numero: 'P-2', fechaEmision: '2026-10-14', emisor: '3109999999', totalComprobante: '1' }]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ServiceError);
    expect((refused as ServiceError).details).toEqual([{ path: '[0].emisor', message: '3109999999 is not a registered issuer of this account' }]);

    // Owed: every document Hacienda has not received yet, whatever its situación (issue 36: the situación 1 one too).
    let owed = await contingencyOwed(ctx, account);
    expect(owed.documentos.map((d) => [d.clave, d.situacion, d.estado])).toEqual([[first.clave, '3', 'pendiente'], [own.clave, '1', 'pendiente']]);
    // Received by Hacienda (enviado): a situación 1 document is owed no more; one of situación 3 is, until accepted.
    await ctx.store.db.updateTable('documents').set({ state: 'enviado' }).where('clave', 'in', [first.clave, own.clave]).execute();
    owed = await contingencyOwed(ctx, account);
    expect(owed.documentos.map((d) => [d.clave, d.estado])).toEqual([[first.clave, 'enviado']]);
    await ctx.store.db.updateTable('documents').set({ state: 'pendiente' }).where('clave', '=', first.clave).execute();
    expect(owed.provisionales.map((x) => [x.numero, x.reemplazo])).toEqual([['P-1', null]]);

    // Its replacement (situación 2), marked: listed with the provisional comprobante until accepted, not twice.
    const replacement = await submitDocument(ctx, account, replacing({ ...validInvoice(), numeroReferencia: 43 }, p!.provisional));
    const marked = await markReplaced(ctx, account, p!.provisional.id, replacement.clave);
    expect(marked.reemplazo).toEqual({ clave: replacement.clave, estado: 'pendiente' });
    owed = await contingencyOwed(ctx, account);
    expect(owed.documentos.map((d) => d.clave)).toEqual([first.clave]);
    expect(owed.provisionales.map((x) => x.reemplazo?.clave)).toEqual([replacement.clave]);
    // Another document cannot replace it while that one is not refused by Hacienda.
    const other = await submitDocument(ctx, account, replacing({ ...validInvoice(), numeroReferencia: 44 }, p!.provisional));
    await expect(markReplaced(ctx, account, p!.provisional.id, other.clave)).rejects.toThrow(`is replaced already by ${replacement.clave}`);

    // Hacienda accepts all three (the other one, in situación 2 too, is owed until then): nothing owed.
    await ctx.store.db.updateTable('documents').set({ state: 'aceptado' }).where('clave', 'in', [first.clave, replacement.clave, other.clave]).execute();
    owed = await contingencyOwed(ctx, account);
    expect(owed).toEqual({ provisionales: [], documentos: [] });
    expect((await getProvisional(ctx, account, p!.provisional.id)).reemplazo).toEqual({ clave: replacement.clave, estado: 'aceptado' });
    await expect(getProvisional(ctx, account, 999)).rejects.toThrow('no provisional comprobante 999');
  }, 60_000);
});

describe.each(dialects)('a provisional comprobante is replaced only by its replacement, once (issue 37, point 6) on %s', (dialect) => {
  const record = async (ctx: ServiceContext, account: number, numero: string, extra: Record<string, unknown> = {}) =>
    (await recordProvisionals(ctx, account, { numero, fechaEmision: '2026-10-14T09:30:00-06:00', emisor: '3101123456', totalComprobante: '105939.195', ...extra }))[0]!.provisional;
  const refusal = async (p: Promise<unknown>) => {
    const e = await p.then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as ServiceError).status).toBe(400);
    return { message: (e as ServiceError).message, details: (e as ServiceError).details };
  };
  let n = 600;

  it('an accepted document of situación 1 without the 05/08 reference: refused, the provisional still owed', async () => {
    const { ctx, account } = await context(dialect);
    const p = await record(ctx, account, 'P-20');
    const plain = await submitDocument(ctx, account, { ...validInvoice(), numeroReferencia: ++n });
    await ctx.store.db.updateTable('documents').set({ state: 'aceptado' }).where('clave', '=', plain.clave).execute();
    const r = await refusal(markReplaced(ctx, account, p.id, plain.clave));
    expect(r.message).toBe(`${plain.clave} does not replace provisional ${p.id}: it is signed in situación 1, not 2 (contingencia, ANEXOS p.67)`);
    expect(r.details).toEqual([{ path: 'clave', message: 'it is signed in situación 1, not 2 (contingencia, ANEXOS p.67)' }]);
    // Situación 2 but no reference to it (nor a reference to another provisional's number): refused too.
    const bare = await submitDocument(ctx, account, { ...validInvoice(), numeroReferencia: ++n, situacion: '2' });
    expect((await refusal(markReplaced(ctx, account, p.id, bare.clave))).message).toBe(`${bare.clave} does not replace provisional ${p.id}: it has no InformacionReferencia with Codigo 05, TipoDocIR 08 and Numero P-20`);
    const p2 = await record(ctx, account, 'P-21');
    const ofOther = await submitDocument(ctx, account, replacing({ ...validInvoice(), numeroReferencia: ++n }, p2));
    expect((await refusal(markReplaced(ctx, account, p.id, ofOther.clave))).message).toContain('has no InformacionReferencia with Codigo 05, TipoDocIR 08 and Numero P-20');
    expect((await getProvisional(ctx, account, p.id)).reemplazo).toBeNull();
  }, 60_000);

  it('a document of another kind (an FE for a TE), even with the reference: refused', async () => {
    const { ctx, account } = await context(dialect);
    const te = await record(ctx, account, 'P-30', { kind: 'TE' });
    const fe = await submitDocument(ctx, account, { ...validInvoice(), numeroReferencia: ++n, situacion: '2', informacionReferencia: [provisionalReference(te)] });
    expect((await refusal(markReplaced(ctx, account, te.id, fe.clave))).message).toBe(`${fe.clave} does not replace provisional ${te.id}: it is a FE, the provisional comprobante a TE`);
    expect((await getProvisional(ctx, account, te.id)).reemplazo).toBeNull();
  }, 60_000);

  it('the same FE for two provisionals: the second refused (and two at once: one wins)', async () => {
    const { ctx, account } = await context(dialect);
    const a = await record(ctx, account, 'P-40');
    const b = await record(ctx, account, 'P-41');
    // One body referencing both (the XSDs allow 10 references): it replaces one of them only.
    const both = replacing(replacing({ ...validInvoice(), numeroReferencia: ++n }, a), b);
    const fe = await submitDocument(ctx, account, both);
    expect((await markReplaced(ctx, account, a.id, fe.clave)).reemplazo?.clave).toBe(fe.clave);
    expect((await refusal(markReplaced(ctx, account, b.id, fe.clave))).message).toBe(`${fe.clave} does not replace provisional ${b.id}: it replaces provisional ${a.id} already`);
    // Marking the same again is no error (a retried request).
    expect((await markReplaced(ctx, account, a.id, fe.clave)).reemplazo?.clave).toBe(fe.clave);
    const c = await record(ctx, account, 'P-42');
    const d = await record(ctx, account, 'P-43');
    const cd = await submitDocument(ctx, account, replacing(replacing({ ...validInvoice(), numeroReferencia: ++n }, c), d));
    const r = await Promise.allSettled([markReplaced(ctx, account, c.id, cd.clave), markReplaced(ctx, account, d.id, cd.clave)]);
    expect(r.map((x) => x.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rows = await ctx.store.db.selectFrom('contingency_provisionals').select('id').where('replaced_by', '=', cd.clave).execute();
    expect(rows).toHaveLength(1);
    expect((await getProvisional(ctx, account, b.id)).reemplazo).toBeNull();
  }, 60_000);

  it('another total (918 125 for 500): marked, with a warning (no source makes it a refusal)', async () => {
    const { ctx, account } = await context(dialect);
    const p = await record(ctx, account, 'P-50', { totalComprobante: '500' });
    const doc = await submitDocument(ctx, account, replacing({ ...validInvoice(), numeroReferencia: ++n }, p));
    const total = (await ctx.store.db.selectFrom('documents').select('total_comprobante').where('clave', '=', doc.clave).executeTakeFirstOrThrow()).total_comprobante;
    const marked = await markReplaced(ctx, account, p.id, doc.clave);
    expect(marked.reemplazo?.clave).toBe(doc.clave);
    expect(marked.avisos).toEqual([`el totalComprobante del documento (${total} CRC) no es el del comprobante provisional (500.00000 CRC)`]);
    // The same total: no warning.
    const q = await record(ctx, account, 'P-51', { totalComprobante: total });
    const same = await submitDocument(ctx, account, replacing({ ...validInvoice(), numeroReferencia: ++n }, q));
    expect((await markReplaced(ctx, account, q.id, same.clave)).avisos).toBeUndefined();
  }, 60_000);
});

describe('haciendaReachable', () => {
  it('a port where nothing listens: not reachable, the cause in words; an emulator: reachable, until its IdP is out (503)', async () => {
    const { ctx } = await context('sqlite');
    const r = await haciendaReachable(ctx, 1_000);
    expect(r).toEqual({ ok: false, cause: 'connection refused by 127.0.0.1:9 (nothing listens there)' });
    const emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
    try {
      ctx.hacienda = { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: emu.url }) };
      expect(await haciendaReachable(ctx, 2_000)).toEqual({ ok: true });
      const set = await fetch(`${emu.url}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ idpOutage: true }) });
      expect(set.status).toBe(200);
      const host = new URL(emu.url).host;
      expect(await haciendaReachable(ctx, 2_000)).toEqual({ ok: false, cause: `the IdP: HTTP 503 Service Unavailable from ${host}` });
    } finally {
      await emu.close();
    }
  });
});

describe('/api/contingencia/… (the hosted end: RemoteContingency over the client API)', () => {
  it('the same use cases through HTTP; another account sees none of it; bad input a 400 naming the field, an unknown id a 404; in /openapi.json', async () => {
    const { ctx, account } = await context(TEST_STORE, ['local', 'otra']);
    const app = buildApiApp(ctx, { authenticate: async (h) => ({ base: h === 'Bearer otra' ? 'otra' : 'local' }) });
    const post = (url: string, payload: unknown, token = 'x') => app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    try {
      const remote = new RemoteContingency(async <T,>(path: string, body: unknown) => {
        const res = await post(path, body);
        expect(res.statusCode, res.body).toBe(200);
        return res.json() as T;
      });
      const [p] = await remote.record([{ numero: 'P-9', fechaEmision: '2026-10-14T09:30:00-06:00', emisor: '3101123456', totalComprobante: '100' }]);
      expect(p).toMatchObject({ created: true, provisional: { numero: 'P-9', totalComprobante: '100.00000', kind: 'FE', reemplazo: null } });
      const doc = await submitDocument(ctx, account, replacing({ ...validInvoice(), numeroReferencia: 77 }, p!.provisional));
      expect((await remote.markReplaced(p!.provisional.id, doc.clave)).reemplazo).toEqual({ clave: doc.clave, estado: 'pendiente' });
      expect(await remote.owed()).toEqual(await contingencyOwed(ctx, account));
      expect(await remote.provisional(p!.provisional.id)).toEqual(await getProvisional(ctx, account, p!.provisional.id));
      // Another account: nothing of it.
      expect((await post('/api/contingencia/pendientes', {}, 'otra')).json().data).toEqual({ provisionales: [], documentos: [] });
      expect((await post('/api/contingencia/provisional', { id: p!.provisional.id }, 'otra')).statusCode).toBe(404);
      for (const [url, body, field] of [
        ['/api/contingencia/registrar', { provisionales: [{ numero: 'P-10', fechaEmision: 'ayer', emisor: '3101123456', totalComprobante: '1' }] }, '[0].fechaEmision'],
        ['/api/contingencia/registrar', {}, 'provisionales'],
        ['/api/contingencia/reemplazo', { id: p!.provisional.id, clave: 'corta' }, 'clave'],
        ['/api/contingencia/provisional', { id: 'uno' }, 'id'],
      ] as const) {
        const r = await post(url, body);
        expect([url, r.statusCode]).toEqual([url, 400]);
        expect(JSON.stringify(r.json())).toContain(field);
      }
      const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
      for (const path of ['registrar', 'provisional', 'reemplazo', 'pendientes']) expect(spec.paths[`/api/contingencia/${path}`], path).toBeDefined();
    } finally {
      await app.close();
    }
  }, 60_000);
});
