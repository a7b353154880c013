// Issue 37, point 1: the bearer check is decided on the route the router matched (src/server/route-auth.ts), not on a
// string test of the raw URL. Every route of /openapi.json (read from the app) × spellings of its path (percent-encoded
// letters in each segment, doubled slashes, dot segments, upper case, trailing slash, encoded slash, absolute form)
// without a token → 401 (404 only where the router matches nothing; never 200 or 400), each with a malformed JSON body
// so that a body parsed before the check would show as a 400. Walked twice: with fastify's inject (which resolves dot
// segments itself, unlike a socket) and over a real socket on 127.0.0.1:0, written byte for byte. Then "no body work":
// a 401 comes back before the body is sent at all, and a flood of unauthenticated 366 KB bodies to
// /%61pi/enviar/items?completar=1 keeps this thread's event loop under 10 ms busy per second.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../src/server/api-app.js';
import { registerHaciendaCallback } from '../src/server/hacienda-callback.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { closeLookups } from '../src/service/lookups.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { BIN } from './helpers/bin.js';
import { tempDir } from './helpers/cli.js';
import { childEnv } from './helpers/hermetic-env.js';

const AUTH_URL = 'http://auth.fecr.test';
const UNAUTHORIZED = { error: 'unauthorized', message: 'Token inválido o expirado' };
/** A body that fails to parse: a route that parsed it before the check would answer 400. */
const MALFORMED = '{"emisor": ';

let t: TestContext;
let app: ReturnType<typeof buildApiApp>;
let port: number;
let token: string;
let routes: string[];

beforeAll(async () => {
  t = await makeServiceContext();
  await ensureSigningKey(t.ctx);
  await createAccount(t.ctx, { base: 'empresa-ruta', password: 'contrasena-ruta-123' });
  token = (await issueToken(t.ctx, { base: 'empresa-ruta' }, { issuer: AUTH_URL })).token;
  app = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: AUTH_URL, jwks: 'local' }), heavyWork: { threads: 0 } });
  registerHaciendaCallback(app, t.ctx, { wake: () => undefined }); // as service.ts does: the one other public route
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as { port: number }).port;
  const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
  routes = Object.keys(spec.paths);
}, 30_000);

afterAll(async () => {
  await app?.close();
  if (t) await closeLookups(t.ctx);
  await t?.close();
});

/** `%xx` of one character, lower- or upper-case hex. */
function pct(c: string, upper = false): string {
  const h = c.charCodeAt(0).toString(16).padStart(2, '0');
  return `%${upper ? h.toUpperCase() : h}`;
}

/** Spellings of a route's path that a client could send to reach it (or to miss the check). */
function variants(path: string): string[] {
  const segs = path.split('/').slice(1); // ['api', 'enviar', 'items']
  const join = (s: string[]) => '/' + s.join('/');
  const out = new Set<string>([path]);
  segs.forEach((seg, i) => {
    // The first letter of each segment encoded (lower and upper hex), and every letter of it.
    out.add(join(segs.map((s, j) => (j === i ? pct(s[0]!) + s.slice(1) : s))));
    out.add(join(segs.map((s, j) => (j === i ? pct(s[0]!, true) + s.slice(1) : s))));
    out.add(join(segs.map((s, j) => (j === i ? s.slice(0, -1) + pct(s.slice(-1)) : s))));
    out.add(join(segs.map((s, j) => (j === i ? [...s].map((c) => pct(c)).join('') : s))));
    out.add(join(segs.map((s, j) => (j === i ? s.toUpperCase() : s))));
    out.add(join(segs.map((s, j) => (j === i ? s[0]!.toUpperCase() + s.slice(1) : s))));
  });
  out.add([...path].map((c) => (c === '/' ? c : pct(c))).join(''));
  out.add(path.toUpperCase());
  out.add(path + '/');
  out.add('/' + path);
  out.add(path.replace(/\//g, '//'));
  out.add(path.replace('/api/', '/api//'));
  out.add('/x/..' + path);
  out.add('/.' + path);
  out.add(path.replace('/api/', '/api/./'));
  out.add(path.replace(/\/([^/]+)$/, '/../$1').replace('/api/', '/api/x/'));
  out.add('/%2e' + path);
  out.add('/x/%2e%2e' + path);
  out.add(path.replace('/api/', '/api%2f'));
  out.add(path.replace('/api/', '/api%2F'));
  out.add('%2F' + path.slice(1));
  out.add('/%61pi' + path.slice(4) + '?completar=1');
  out.add(path + ';x');
  out.add(path + '?x=1#frag');
  return [...out];
}

interface Answer {
  status: number;
  body: unknown;
}

/** One request over a socket, the request target written exactly as given; the body may be left unsent. */
function rawRequest(target: string, opts: { body?: string; contentLength?: number; token?: string; port?: number } = {}): Promise<Answer> {
  const to = opts.port ?? port;
  return new Promise((resolve, reject) => {
    const body = opts.body ?? MALFORMED;
    const s = connect(to, '127.0.0.1');
    let data = Buffer.alloc(0);
    const head = [
      `POST ${target} HTTP/1.1`,
      `Host: 127.0.0.1:${to}`,
      'Content-Type: application/json',
      `Content-Length: ${opts.contentLength ?? Buffer.byteLength(body)}`,
      ...(opts.token ? [`Authorization: Bearer ${opts.token}`] : []),
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    s.on('connect', () => {
      s.write(head);
      if (opts.contentLength === undefined) s.write(body);
    });
    s.on('data', (c: Buffer) => {
      data = Buffer.concat([data, c]);
      if (opts.contentLength !== undefined && complete(data)) s.destroy(); // the answer is in: no body will be sent
    });
    s.on('error', () => undefined); // the server may close while the body is still being written: the answer counts
    s.on('close', () => {
      const text = data.toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      if (status === 0) return reject(new Error(`no answer to POST ${target}`));
      resolve({ status, body: jsonOf(text.slice(text.indexOf('\r\n\r\n') + 4)) });
    });
  });
}

function complete(data: Buffer): boolean {
  const text = data.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? NaN);
  return Buffer.byteLength(text.slice(end + 4)) >= length;
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A refusal that did no route work: 401 unauthorized, or 404 where nothing matched. Over a socket, a target that is
 * neither origin-form (`/…`) nor absolute-form (`http://…`), e.g. `%2Fapi/…`, is refused by the HTTP parser before
 * any route is looked up: Fastify's client-error 400 ("Client Error"), which no route can answer.
 */
function refused(a: Answer, target = '/'): boolean {
  if (!target.startsWith('/') && !target.startsWith('http://')) return a.status === 400 && (a.body as { message?: string }).message === 'Client Error';
  if (a.status === 401) return JSON.stringify(a.body) === JSON.stringify(UNAUTHORIZED);
  return a.status === 404 && (a.body as { error?: string }).error === 'not_found';
}

describe('every route of /openapi.json × every spelling of its path, without a token', () => {
  it('the walk covers the routes of the app and the variants of the issue (/%61pi/…, /ap%69/…)', () => {
    expect(routes.length).toBeGreaterThanOrEqual(30);
    expect(routes).toContain('/api/consultar/tipo-cambio');
    const v = variants('/api/consultar/tipo-cambio');
    expect(v).toEqual(expect.arrayContaining(['/%61pi/consultar/tipo-cambio', '/ap%69/consultar/tipo-cambio', '//api/consultar/tipo-cambio', '/x/../api/consultar/tipo-cambio', '/./api/consultar/tipo-cambio', '/API/consultar/tipo-cambio', '/api/consultar/tipo-cambio/', '/api%2fconsultar/tipo-cambio']));
  });

  it('with inject: 401 (or 404 where nothing matches), never 200 nor 400, and the body is never parsed', async () => {
    const wrong: string[] = [];
    let n = 0;
    for (const route of routes) {
      for (const url of variants(route)) {
        for (const authorization of [undefined, 'Bearer', `Bearer ${token}x`]) {
          const r = await app.inject({ method: 'POST', url, payload: MALFORMED, headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) } });
          n++;
          const a = { status: r.statusCode, body: jsonOf(r.body) };
          if (!refused(a)) wrong.push(`${url} (${authorization ?? 'no token'}) → ${a.status} ${r.body.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(n).toBeGreaterThan(3_000);
  }, 120_000);

  it('over a real socket (the target byte for byte, and in absolute form): the same', async () => {
    const wrong: string[] = [];
    const seen = new Map<number, number>();
    for (const route of routes) {
      for (const target of [...variants(route), `http://127.0.0.1:${port}${route}`, `http://127.0.0.1:${port}/%61pi${route.slice(4)}`]) {
        const a = await rawRequest(target);
        seen.set(a.status, (seen.get(a.status) ?? 0) + 1);
        if (!refused(a, target)) wrong.push(`${target} → ${a.status} ${JSON.stringify(a.body).slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(seen.get(401)).toBeGreaterThan(routes.length * 5); // the encoded spellings the router matches: refused by the check
  }, 120_000);

  it('the encoded spellings do reach the route with a valid token (so the walk tests the check, not the router)', async () => {
    const ok = await app.inject({ method: 'POST', url: '/%61pi/consultar/emisores', payload: {}, headers: { authorization: `Bearer ${token}` } });
    expect(ok.statusCode).toBe(200);
    const socket = await rawRequest('/ap%69/consultar/emisores', { body: '{}', token });
    expect(socket.status).toBe(200);
    // An unmatched path with a token is the router's 404.
    const none = await rawRequest('/api//consultar/emisores', { body: '{}', token });
    expect(none.status).toBe(404);
  });

  it('what the spec makes public stays public: GET /openapi.json and Hacienda callback answer without a token', async () => {
    expect((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/%6fpenapi.json' })).statusCode).toBe(200);
    const cb = await app.inject({ method: 'POST', url: '/hacienda/callback', payload: { clave: '1'.repeat(50) } });
    expect(cb.statusCode).not.toBe(401);
  });
});

/** A 366 KB body that `?completar=1` would have to compute: the FE fixture's first line, 1 000 times, figures left out. */
function bigBody(): string {
  const b = fixtureBody('01-fe-servicios-13');
  const line = { ...b.detalleServicio[0] };
  for (const k of ['subTotal', 'montoTotal', 'impuestoNeto', 'montoTotalLinea']) delete line[k];
  line.impuesto = line.impuesto.map((i: Record<string, unknown>) => ({ ...i, monto: undefined }));
  b.detalleServicio = Array.from({ length: 1000 }, (_, i) => ({ ...line, numeroLinea: i + 1, detalle: `${line.detalle} ${'x'.repeat(120)} ${i}` }));
  delete b.resumenFactura;
  return JSON.stringify(b);
}

describe('no body work before the check', () => {
  it('the 401 comes back before the body is sent (a 366 KB Content-Length, no byte of it written)', async () => {
    const body = bigBody();
    expect(Buffer.byteLength(body)).toBeGreaterThan(360_000);
    for (const target of ['/api/enviar/items?completar=1', '/%61pi/enviar/items?completar=1', '/ap%69/enviar/items?completar=1', '/api/recibidos']) {
      const a = await Promise.race([
        rawRequest(target, { contentLength: Buffer.byteLength(body) }),
        new Promise<Answer>((r) => setTimeout(() => r({ status: -1, body: 'no answer within 5 s: the route waited for the body' }), 5_000)),
      ]);
      expect([target, a.status, a.body]).toEqual([target, 401, UNAUTHORIZED]);
    }
  });

  it('a flood of unauthenticated 366 KB bodies to /%61pi/enviar/items?completar=1: under 10 ms of event loop per second', async () => {
    // The flood comes from a worker thread (its own event loop), 4 requests at once every second for 3 s (the issue's
    // "4 at once"), each with the whole 366 KB body. What is measured is this thread's loop, where the API runs.
    // Before: each request was parsed and computed (0.39 s of loop each) → over 1 000 ms busy per second. After:
    // headers read, 401 sent, connection closed: 2.7 ms/s measured on an idle 2-core machine; the 10 ms/s bound leaves
    // over 3× headroom for a loaded one (the body bytes the kernel still delivers are discarded, not parsed).
    const body = bigBody();
    const flood = new Worker(
      `
      const { connect } = require('node:net');
      const { parentPort, workerData } = require('node:worker_threads');
      const { port, body, rounds, perRound, intervalMs } = workerData;
      const one = () => new Promise((resolve) => {
        const s = connect(port, '127.0.0.1');
        let text = '';
        s.on('connect', () => {
          s.write('POST /%61pi/enviar/items?completar=1 HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + Buffer.byteLength(body) + '\\r\\nConnection: close\\r\\n\\r\\n');
          s.write(body);
        });
        s.on('data', (c) => { text += c; });
        s.on('error', () => undefined);
        s.on('close', () => resolve(Number((/^HTTP\\/1\\.1 (\\d{3})/.exec(text) || [])[1] || 0)));
      });
      (async () => {
        const statuses = [];
        for (let r = 0; r < rounds; r++) {
          const started = Date.now();
          statuses.push(...(await Promise.all(Array.from({ length: perRound }, one))));
          await new Promise((res) => setTimeout(res, Math.max(0, intervalMs - (Date.now() - started))));
        }
        parentPort.postMessage(statuses);
      })();
      `,
      { eval: true, workerData: { port, body, rounds: 3, perRound: 4, intervalMs: 1_000 } },
    );
    const before = performance.eventLoopUtilization();
    const started = performance.now();
    const statuses = await new Promise<number[]>((resolve, reject) => {
      flood.once('message', resolve);
      flood.once('error', reject);
    });
    const seconds = (performance.now() - started) / 1000;
    const busyMs = performance.eventLoopUtilization(before).active;
    await flood.terminate();
    expect(statuses).toEqual(Array(12).fill(401));
    const perSecond = busyMs / seconds;
    console.log(`flood: event loop busy ${busyMs.toFixed(1)} ms over ${seconds.toFixed(2)} s = ${perSecond.toFixed(2)} ms/s`);
    expect(perSecond, `event loop busy ${busyMs.toFixed(1)} ms over ${seconds.toFixed(2)} s`).toBeLessThan(10);
  }, 60_000);
});

describe('`node bin/fecr.js serve` as a user runs it (env local: the embedded emulator answers the indicator API)', () => {
  it('/%61pi/consultar/tipo-cambio and /ap%69/… without a token: 401, no request to Hacienda; the callback stays public', async () => {
    const dir = tempDir('fecr-route-auth-serve-');
    mkdirSync(join(dir, 'home'), { recursive: true });
    const env = { HOME: join(dir, 'home'), FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
    const child = spawn(process.execPath, [BIN, 'serve'], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      const ready = await new Promise<{ baseUrl: string; haciendaUrl: string }>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', (l) => resolve(JSON.parse(l)));
        child.once('exit', (code) => reject(new Error(`fecr serve exited ${code}: ${stderr}`)));
      });
      const apiPort = Number(new URL(ready.baseUrl).port);
      const indicatorCalls = async () => ((await (await fetch(`${ready.haciendaUrl}/_emulator/stats`)).json()) as { public: { indicadores: number } }).public.indicadores;
      const before = await indicatorCalls();
      for (const target of ['/%61pi/consultar/tipo-cambio', '/ap%69/consultar/tipo-cambio', `http://127.0.0.1:${apiPort}/%61pi/consultar/tipo-cambio`, '/api/consultar/tipo-cambio']) {
        const a = await rawRequest(target, { body: '{"fecha":"2026-11-20"}', port: apiPort });
        expect([target, a.status, a.body]).toEqual([target, 401, UNAUTHORIZED]);
      }
      expect(await indicatorCalls()).toBe(before);
      const cb = await rawRequest('/hacienda/callback', { body: JSON.stringify({ clave: '5'.repeat(50), 'ind-estado': 'aceptado' }), port: apiPort });
      expect(cb.status).not.toBe(401);
      expect((await fetch(`${ready.baseUrl}/openapi.json`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
    }
  }, 60_000);
});
