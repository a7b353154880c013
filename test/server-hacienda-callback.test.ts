// Issue 25, point 10b: Hacienda's callback route is unauthenticated (Hacienda has no scheme for callbacks, NOTES
// §4.6), so it is cheap and bounded (server/hacienda-callback.ts). Against real services on 127.0.0.1 (SQLite in temp
// dirs):
//  - a service without a worker and a pendiente document: unknown claves, a decided document and 100 repeats of the
//    pending clave make one hint (one log line, no new job) and counters, nothing else; a flood from one source is
//    answered 429 with Retry-After past its burst, before the body is read; an oversized body is a 413; garbage a 200;
//  - the full service in env local (the embedded emulator calls back as Hacienda does): while another source is
//    limited (X-Forwarded-For through --trust-proxy), the emulator's real callback still brings the verdict at once,
//    though the first status query is a minute away.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/server/service.js';
import { createAccount } from '../src/service/accounts.js';
import { fixtureBody, FIVE_KINDS } from './helpers/api-context.js';
import { tempDir } from './helpers/cli.js';
import { postJson } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';

const started: RunningService[] = [];
afterAll(async () => {
  for (const s of started) await s.close();
});

/** A service with an account and an issuer; its log lines collected. */
async function serve(opts: Partial<Parameters<typeof startService>[0]>) {
  const dataDir = tempDir('fecr-callback-');
  const svc = await startService({ dataDir, env: { FECR_NO_KEYCHAIN: '1', HOME: dataDir }, emulatorDelayMs: 100, ...opts });
  started.push(svc);
  const lines: string[] = [];
  svc.opened.ctx.logger = pino({ level: 'info' }, new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }));
  await createAccount(svc.opened.ctx, { base: 'acme', password: 'password-123' });
  const login = await postJson(`${svc.authUrl}/login`, { base: 'acme', password: 'password-123' });
  const token = (login.body as { token: string }).token;
  const reg = await postJson(`${svc.baseUrl}/api/enviar/emisor`, makeTestIssuer().issuer, token);
  expect(reg.status, reg.text).toBe(200);
  const submit = async (numeroReferencia: number) => {
    const r = await postJson(`${svc.baseUrl}/api/enviar/items`, { ...fixtureBody(FIVE_KINDS.FE), numeroReferencia }, token);
    expect(r.status, r.text).toBe(200);
    return (r.body as { clave: string }).clave;
  };
  const callback = async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await request(`${svc.baseUrl}/hacienda/callback`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  };
  return { svc, lines, submit, callback };
}

const unknownClave = (i: number) => `506020326003101123456001000010100${String(9_000_000 + i).padStart(8, '0')}119999999`.slice(0, 50);
const callbackLines = (lines: string[]) => lines.filter((l) => /callback/i.test(l));

describe('a service without a worker (documents stay pendiente)', () => {
  it('unknown claves, decided documents and repeats: counted, no job, no log line; the pending clave: one hint', async () => {
    const { svc, lines, submit, callback } = await serve({ roles: ['auth', 'api'], worker: false, trustProxy: ['127.0.0.1'] });
    const ctx = svc.opened.ctx;
    const pending = await submit(1001);
    const decided = await submit(1002);
    await ctx.store.db.updateTable('documents').set({ state: 'aceptado' }).where('clave', '=', decided).execute();
    const jobsBefore = await ctx.store.db.selectFrom('jobs').select(['id', 'run_at']).execute();

    // 60 unknown claves from 60 sources (none of them limited).
    for (let i = 0; i < 60; i++) {
      const r = await callback({ clave: unknownClave(i), 'ind-estado': 'aceptado' }, { 'x-forwarded-for': `198.51.100.${i + 1}` });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text)).toEqual({ status: 'ok' });
    }
    // The decided document, twice.
    for (const ip of ['198.51.100.201', '198.51.100.202']) expect((await callback({ clave: decided, 'ind-estado': 'rechazado' }, { 'x-forwarded-for': ip })).status).toBe(200);
    // The pending document, 100 times from 100 sources, both key spellings.
    for (let i = 0; i < 100; i++) {
      const body = i % 2 ? { clave: pending, indEstado: 'aceptado' } : { clave: pending, 'ind-estado': 'aceptado', fecha: '2026-03-02T09:15:00-06:00', 'respuesta-xml': 'PHgvPg==' };
      expect((await callback(body, { 'x-forwarded-for': `203.0.113.${i + 1}` })).status).toBe(200);
    }
    // Bodies without a clave.
    for (const body of [{}, { clave: 'x' }, [1, 2], 'null']) expect((await callback(body, { 'x-forwarded-for': '192.0.2.99' })).status).toBe(200);
    await svc.callbacks!.idle();

    expect(svc.callbacks!.stats()).toEqual({ received: 166, limited: 0, ignored: 4, repeated: 100, dropped: 0, hinted: 1, unknown: 60, notWaiting: 1, failed: 0 });
    // One log line: the one hint. No job was added.
    expect(callbackLines(lines)).toHaveLength(1);
    expect(callbackLines(lines)[0]).toContain(pending);
    const jobsAfter = await ctx.store.db.selectFrom('jobs').select(['id', 'run_at']).execute();
    expect(jobsAfter.map((j) => j.id).sort()).toEqual(jobsBefore.map((j) => j.id).sort());
  });

  it('one source is limited past its burst (429, Retry-After, before the body is read); the others are not', async () => {
    const { svc, lines, callback } = await serve({ roles: ['auth', 'api'], worker: false, trustProxy: ['127.0.0.1'], callbackLimits: { perSource: { burst: 20, perSecond: 1 } } });
    const statuses: number[] = [];
    let retryAfter: unknown;
    let limitedBody = '';
    for (let i = 0; i < 200; i++) {
      const r = await callback({ clave: unknownClave(i) }, { 'x-forwarded-for': '203.0.113.50' });
      statuses.push(r.status);
      if (r.status === 429) {
        retryAfter = r.headers['retry-after'];
        limitedBody = r.text;
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(180);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(limitedBody)).toEqual({ error: 'too_many_requests', message: 'Demasiadas solicitudes; intente de nuevo más tarde' });
    // Another address of the same /64-less IPv4 world is not limited.
    expect((await callback({ clave: unknownClave(999) }, { 'x-forwarded-for': '203.0.113.51' })).status).toBe(200);
    // Limited before the body: a limited caller's 2 MB body is not read (no 413, a 429).
    expect((await callback('{"clave":"' + 'x'.repeat(2 * 1024 * 1024) + '"}', { 'x-forwarded-for': '203.0.113.50' })).status).toBe(429);
    // A body over 256 KiB from a caller within its rate: 413 in the spec's error shape.
    const big = await callback('{"clave":"' + 'x'.repeat(300 * 1024) + '"}', { 'x-forwarded-for': '203.0.113.52' });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text)).toEqual({ error: 'payload_too_large', message: 'El cuerpo de la solicitud excede el tamaño máximo de 256 KiB' });
    await svc.callbacks!.idle();
    expect(svc.callbacks!.stats()).toMatchObject({ limited: 181, unknown: 21, hinted: 0 });
    expect(callbackLines(lines)).toEqual([]);
  });
});

describe("the full service in env local: the emulator's callbacks still work", () => {
  it('while another source is limited, a real callback brings the verdict at once (the first poll is a minute away)', async () => {
    const { svc, submit, callback } = await serve({
      trustProxy: ['127.0.0.1'],
      callbackLimits: { perSource: { burst: 5, perSecond: 0.1 } },
      worker: { firstPollDelayMs: 60_000, queuePollIntervalMs: 50 },
    });
    // An attacker exhausts its own bucket first.
    for (let i = 0; i < 50; i++) await callback({ clave: unknownClave(i) }, { 'x-forwarded-for': '203.0.113.66' });
    expect(svc.callbacks!.stats().limited).toBe(45);
    const t0 = Date.now();
    const clave = await submit(2001);
    const ctx = svc.opened.ctx;
    let state = '';
    while (Date.now() - t0 < 20_000) {
      state = (await ctx.store.db.selectFrom('documents').select('state').where('clave', '=', clave).executeTakeFirstOrThrow()).state;
      if (state === 'aceptado') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(state).toBe('aceptado');
    expect(Date.now() - t0).toBeLessThan(20_000);
    await svc.callbacks!.idle();
    expect(svc.callbacks!.stats().hinted).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
