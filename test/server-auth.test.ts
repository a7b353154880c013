// The auth server on 127.0.0.1 (port 0) over a real SQLite file, driven over HTTP with undici; the token
// verifier the client API uses, against the attack list.
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportSPKI,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type CryptoKey,
  type JSONWebKeySet,
  type JWTPayload,
} from 'jose';
import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { buildAuthApp, type AuthAppOptions } from '../src/server/auth-app.js';
import { createAccount, disableAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { currentKey, rotateKey } from '../src/service/keys.js';
import { SecretBox } from '../src/service/secrets.js';
import { createTokenVerifier, type TokenVerifier } from '../src/service/tokens.js';
import type { Store } from '../src/store/index.js';
import { openTestStore } from './helpers/stores.js';

const PASSWORD = 'contraseña-segura-1';
const LOGIN_400 = { error: 'bad_request', message: 'Los campos base y password son requeridos' };
const LOGIN_401 = { error: 'invalid_credentials', message: 'Base o contraseña incorrectos' };
const UNAUTHORIZED = { error: 'unauthorized', message: 'Token inválido o expirado' };

const dirs: string[] = [];
const apps: FastifyInstance[] = [];
const stores: Store[] = [];
let clockOffset = 0;

async function makeContext(logger = pino({ level: 'silent' })): Promise<ServiceContext> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fecr-auth-'));
  dirs.push(dir);
  const store = await openTestStore({ file: path.join(dir, 'fecr.db') });
  stores.push(store);
  return {
    store,
    secrets: new SecretBox(randomBytes(32)),
    logger,
    now: () => Date.now() + clockOffset,
    randomBytes,
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: 'http://127.0.0.1:1' }) },
  };
}

async function startAuth(ctx: ServiceContext, opts: Partial<AuthAppOptions> = {}): Promise<string> {
  let url = '';
  const app = await buildAuthApp(ctx, { publicUrl: () => url, ...opts });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no address');
  url = `http://127.0.0.1:${addr.port}`;
  return url;
}

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

async function call(url: string, init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Res> {
  const r = await request(url, { method: init.method ?? 'POST', headers: init.headers, body: init.body });
  const text = await r.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.statusCode, headers: r.headers, text, json };
}

const postJson = (url: string, body: unknown, headers: Record<string, string> = {}): Promise<Res> =>
  call(url, { headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

let ctx: ServiceContext;
let authUrl: string;

beforeAll(async () => {
  ctx = await makeContext();
  for (const base of ['acme', 'apagada', 'victima', 'reset-me', 'rotar']) await createAccount(ctx, { base, password: PASSWORD });
  await disableAccount(ctx, 'apagada');
  authUrl = await startAuth(ctx, { rateLimit: { freeFailures: 5, baseDelayMs: 60_000, maxDelayMs: 60_000, perAddress: 10_000 } });
});

afterAll(async () => {
  for (const app of apps) await app.close();
  for (const s of stores) await s.close().catch(() => undefined);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function login(base: string, password = PASSWORD, url = authUrl): Promise<string> {
  const r = await postJson(`${url}/login`, { base, password });
  expect(r.status).toBe(200);
  return r.json.token as string;
}

describe('POST /login', () => {
  it('returns an RS256 JWT with exactly the spec claims, verifiable with the JWKS', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await postJson(`${authUrl}/login`, { base: 'acme', password: PASSWORD });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(Object.keys(r.json).sort()).toEqual(['expires_in', 'token', 'token_type']);
    expect(r.json.expires_in).toBe(28800);
    expect(r.json.token_type).toBe('Bearer');
    const token: string = r.json.token;

    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg: 'RS256', kid: expect.any(String), typ: 'JWT' });
    const claims = decodeJwt(token);
    expect(Object.keys(claims).sort()).toEqual(['aud', 'base', 'exp', 'iat', 'iss', 'jti', 'sub']);
    expect(claims.iss).toBe(authUrl);
    expect(claims.aud).toBe(authUrl);
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.iat).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(claims.exp! - claims.iat!).toBe(28800);
    expect(claims.jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(claims.jti!, 'base64url')).toHaveLength(16);
    expect(claims.sub).toBe('acme');
    expect(claims['base']).toBe('acme');

    const jwks = (await call(`${authUrl}/.well-known/jwks.json`, { method: 'GET' })).json as JSONWebKeySet;
    expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
    const local = await jwtVerify(token, createLocalJWKSet(jwks), { algorithms: ['RS256'], issuer: authUrl, audience: authUrl });
    expect(local.payload.sub).toBe('acme');
    const remote = await jwtVerify(token, createRemoteJWKSet(new URL(`${authUrl}/.well-known/jwks.json`)), { algorithms: ['RS256'], issuer: authUrl, audience: authUrl });
    expect(remote.protectedHeader.kid).toBe(header.kid);

    // Two logins give two different jtis.
    expect(decodeJwt(await login('acme')).jti).not.toBe(claims.jti);
  });

  it('answers a wrong password, an unknown account and a disabled account identically', async () => {
    const wrong = await postJson(`${authUrl}/login`, { base: 'acme', password: 'no-es-esta' });
    const unknown = await postJson(`${authUrl}/login`, { base: 'no-existe', password: PASSWORD });
    const disabled = await postJson(`${authUrl}/login`, { base: 'apagada', password: PASSWORD });
    for (const r of [wrong, unknown, disabled]) {
      expect(r.status).toBe(401);
      expect(r.json).toEqual(LOGIN_401);
      expect(r.text).toBe(wrong.text);
      expect(r.headers['content-type']).toBe(wrong.headers['content-type']);
      expect(r.headers['content-length']).toBe(wrong.headers['content-length']);
    }
  });

  it('takes similar time in the three failure cases (an argon2 verify in each)', async () => {
    const tctx = await makeContext();
    await createAccount(tctx, { base: 'real', password: PASSWORD });
    await createAccount(tctx, { base: 'off', password: PASSWORD });
    await disableAccount(tctx, 'off');
    const url = await startAuth(tctx, { rateLimit: false });
    const cases = { wrong: ['real', 'no-es-esta'], unknown: ['fantasma', PASSWORD], disabled: ['off', PASSWORD] } as const;
    const times: Record<keyof typeof cases, number[]> = { wrong: [], unknown: [], disabled: [] };
    await postJson(`${url}/login`, { base: 'real', password: 'calentar' }); // warm-up
    for (let i = 0; i < 11; i++) {
      for (const [name, [base, password]] of Object.entries(cases) as [keyof typeof cases, readonly [string, string]][]) {
        const t0 = performance.now();
        const r = await postJson(`${url}/login`, { base, password });
        times[name].push(performance.now() - t0);
        expect(r.status).toBe(401);
      }
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const m = { wrong: median(times.wrong), unknown: median(times.unknown), disabled: median(times.disabled) };
    expect(m.wrong).toBeGreaterThan(2); // an argon2 verify with 19 MiB costs milliseconds
    for (const t of [m.unknown, m.disabled]) {
      expect(t / m.wrong).toBeGreaterThan(0.5);
      expect(t / m.wrong).toBeLessThan(2);
    }
  });

  it('answers missing, empty or non-string fields with 400 and the exact message', async () => {
    const bodies: unknown[] = [
      {},
      { base: 'acme' },
      { password: PASSWORD },
      { base: '', password: PASSWORD },
      { base: 'acme', password: '' },
      { base: 7, password: PASSWORD },
      { base: 'acme', password: ['x'] },
      { base: null, password: null },
      [],
      'null',
      '"texto"',
      '42',
    ];
    for (const body of bodies) {
      const r = await postJson(`${authUrl}/login`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json).toEqual(LOGIN_400);
    }
    // An empty JSON body, and no body at all.
    for (const r of [await call(`${authUrl}/login`, { headers: { 'content-type': 'application/json' }, body: '' }), await call(`${authUrl}/login`)]) {
      expect(r.status).toBe(400);
      expect(r.json).toEqual(LOGIN_400);
    }
  });

  it('answers transport-level mistakes with the error body, never a 500', async () => {
    const malformed = await postJson(`${authUrl}/login`, '{"base": "acme", "password": ');
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject(LOGIN_400);
    expect(malformed.json.details).toEqual([{ path: '(body)', message: 'El cuerpo de la solicitud no es JSON válido' }]);

    const poisoned = await postJson(`${authUrl}/login`, '{"base": "acme", "password": "x", "__proto__": {"admin": true}}');
    expect(poisoned.status).toBe(400);
    expect(poisoned.json).toMatchObject(LOGIN_400);

    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      const r = await call(`${authUrl}/login`, { headers: { 'content-type': type }, body: 'base=acme&password=x' });
      expect(r.status, type).toBe(400);
      expect(r.json).toMatchObject(LOGIN_400);
      expect(r.json.details[0].message).toBe('El Content-Type debe ser application/json');
    }
    const noType = await call(`${authUrl}/login`, { body: JSON.stringify({ base: 'acme', password: PASSWORD }) });
    expect(noType.status).toBe(400);
    expect(noType.json).toMatchObject({ error: 'bad_request' });

    const big = JSON.stringify({ base: 'acme', password: 'x'.repeat(2 * 1024 * 1024) });
    const tooLarge = await postJson(`${authUrl}/login`, big);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json).toEqual({ error: 'payload_too_large', message: 'El cuerpo de la solicitud excede el tamaño máximo de 1 MiB' });
    // Without Content-Length (chunked): caught while streaming.
    const chunked = await request(`${authUrl}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Readable.from(
        (async function* () {
          for (let i = 0; i < 40; i++) yield Buffer.alloc(64 * 1024, 0x20);
        })(),
      ),
    });
    expect(chunked.statusCode).toBe(413);
    expect(await chunked.body.json()).toMatchObject({ error: 'payload_too_large' });

    // Just under the limit is parsed (and is a plain 401).
    const under = await postJson(`${authUrl}/login`, JSON.stringify({ base: 'acme', password: 'y'.repeat(1024 * 1024 - 100) }));
    expect(under.status).toBe(401);

    for (const [method, p] of [['GET', '/login'], ['POST', '/nada'], ['GET', '/api/consultar/emisor']] as const) {
      const r = await call(`${authUrl}${p}`, { method });
      expect(r.status).toBe(404);
      expect(r.json).toEqual({ error: 'not_found', message: 'Recurso no encontrado' });
    }
  });

  it('throttles repeated failures of an account from one address with 429 and Retry-After; a success resets the count', async () => {
    // 4 failures, then a success resets the account's counter.
    for (let i = 0; i < 4; i++) expect((await postJson(`${authUrl}/login`, { base: 'reset-me', password: 'mala' })).status).toBe(401);
    await login('reset-me');
    for (let i = 0; i < 4; i++) expect((await postJson(`${authUrl}/login`, { base: 'reset-me', password: 'mala' })).status).toBe(401);
    await login('reset-me');

    for (let i = 0; i < 5; i++) expect((await postJson(`${authUrl}/login`, { base: 'victima', password: 'mala' })).status).toBe(401);
    const limited = await postJson(`${authUrl}/login`, { base: 'victima', password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: 'too_many_requests', message: 'Demasiados intentos fallidos; intente de nuevo más tarde' });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Other accounts are unaffected; an unknown account name is counted the same way.
    await login('acme');
    for (let i = 0; i < 5; i++) expect((await postJson(`${authUrl}/login`, { base: 'inventada', password: 'x' })).status).toBe(401);
    expect((await postJson(`${authUrl}/login`, { base: 'inventada', password: 'x' })).status).toBe(429);
    // Once the delay has passed, the right password works again.
    clockOffset += 61_000;
    try {
      await login('victima');
    } finally {
      clockOffset -= 61_000;
    }
  });

  it('rate-limits repeated failures per client IP across account names', async () => {
    const ictx = await makeContext();
    await createAccount(ictx, { base: 'alguien', password: PASSWORD });
    const url = await startAuth(ictx, { rateLimit: { freeFailures: 100, perAddress: 6, windowMs: 300_000 } });
    for (let i = 0; i < 6; i++) expect((await postJson(`${url}/login`, { base: `cuenta${i}`, password: 'x' })).status).toBe(401);
    const r = await postJson(`${url}/login`, { base: 'alguien', password: PASSWORD });
    expect(r.status).toBe(429);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(250);
  });
});

describe('GET /.well-known/jwks.json and /health', () => {
  it('publishes only public members of RSA keys, with a short cache', async () => {
    const r = await call(`${authUrl}/.well-known/jwks.json`, { method: 'GET' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(r.json.keys.length).toBeGreaterThanOrEqual(1);
    for (const k of r.json.keys) {
      expect(Object.keys(k).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(k).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
      for (const priv of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']) expect(k).not.toHaveProperty(priv);
    }
    expect(r.text).not.toMatch(/"(d|p|q|dp|dq|qi)"/);
  });

  it('reports health: 200 with the version, 503 when the store is unreachable', async () => {
    const ok = await call(`${authUrl}/health`, { method: 'GET' });
    expect(ok.status).toBe(200);
    const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(ok.json).toEqual({ status: 'ok', version: pkg.version });

    const hctx = await makeContext();
    const url = await startAuth(hctx);
    expect((await call(`${url}/health`, { method: 'GET' })).status).toBe(200);
    await hctx.store.close();
    const down = await call(`${url}/health`, { method: 'GET' });
    expect(down.status).toBe(503);
    expect(down.json).toEqual({ status: 'unavailable' });
  });
});

describe('token verification (the client API verifier)', () => {
  let verifiers: Array<[string, TokenVerifier]>;
  let key: { kid: string; privateKey: CryptoKey };

  beforeAll(async () => {
    verifiers = [
      ['local', createTokenVerifier(ctx, { issuer: authUrl, jwks: 'local' })],
      ['remote', createTokenVerifier(ctx, { issuer: authUrl, jwks: new URL(`${authUrl}/.well-known/jwks.json`), remoteCooldownMs: 0 })],
    ];
    key = await currentKey(ctx);
  });

  function claims(over: JWTPayload = {}): JWTPayload {
    const iat = Math.floor((Date.now() + clockOffset) / 1000);
    return { iss: authUrl, aud: authUrl, iat, exp: iat + 28800, jti: randomBytes(16).toString('base64url'), sub: 'acme', base: 'acme', ...over };
  }

  function sign(payload: JWTPayload, header: Record<string, unknown> = {}, signingKey: CryptoKey = key.privateKey): Promise<string> {
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT', ...header } as never).sign(signingKey);
  }

  async function expectAll(authorization: string | undefined, accepted: boolean, label: string): Promise<void> {
    for (const [name, verify] of verifiers) {
      const r = await verify(authorization);
      if (accepted) expect(r, `${label} (${name})`).not.toBeNull();
      else expect(r, `${label} (${name})`).toBeNull();
    }
  }

  it('accepts a real token and a correctly forged one (control)', async () => {
    const token = await login('acme');
    for (const [, verify] of verifiers) {
      expect(await verify(`Bearer ${token}`)).toEqual({ base: 'acme', jti: decodeJwt(token).jti, exp: decodeJwt(token).exp });
    }
    await expectAll(`Bearer ${await sign(claims())}`, true, 'control');
    await expectAll(`bearer ${token}`, true, 'lower-case scheme');
  });

  it('rejects malformed headers', async () => {
    const token = await login('acme');
    for (const h of [undefined, '', 'Bearer', 'Bearer ', token, `Basic ${token}`, 'Bearer abc', 'Bearer a.b.c', `Bearer ${token}x`, `Bearer ${token}.extra`, `Bearer  ${token.slice(0, -5)}`]) {
      await expectAll(h, false, `header ${JSON.stringify(h?.slice(0, 20))}`);
    }
  });

  it('rejects an expired token (clock moved past exp)', async () => {
    const token = await login('acme');
    await expectAll(`Bearer ${token}`, true, 'fresh');
    clockOffset += 28800 * 1000 + 1000;
    try {
      await expectAll(`Bearer ${token}`, false, 'expired');
    } finally {
      clockOffset -= 28800 * 1000 + 1000;
    }
    await expectAll(`Bearer ${await sign(claims({ exp: Math.floor(Date.now() / 1000) - 10, iat: Math.floor(Date.now() / 1000) - 28810 }))}`, false, 'expired forged');
    // Expiring while the verifier trusts its earlier signature check.
    const now = Math.floor((Date.now() + clockOffset) / 1000);
    const short = `Bearer ${await sign(claims({ iat: now - 28800 + 20, exp: now + 20 }))}`;
    await expectAll(short, true, 'about to expire');
    clockOffset += 21_000;
    try {
      await expectAll(short, false, 'expired after a cached check');
    } finally {
      clockOffset -= 21_000;
    }
  });

  it('rejects a token revoked by /logout, and /logout needs a valid token', async () => {
    const token = await login('acme');
    await expectAll(`Bearer ${token}`, true, 'before logout');
    const out = await call(`${authUrl}/logout`, { headers: { authorization: `Bearer ${token}` } });
    expect(out.status).toBe(200);
    expect(out.json).toEqual({ status: 'success', message: 'Sesión cerrada' });
    await expectAll(`Bearer ${token}`, false, 'after logout');
    const again = await call(`${authUrl}/logout`, { headers: { authorization: `Bearer ${token}` } });
    expect(again.status).toBe(401);
    expect(again.json).toEqual(UNAUTHORIZED);
    const none = await call(`${authUrl}/logout`);
    expect(none.status).toBe(401);
    expect(none.json).toEqual(UNAUTHORIZED);
    // A JSON content type with an empty body is fine on /logout.
    const other = await login('acme');
    const withType = await call(`${authUrl}/logout`, { headers: { authorization: `Bearer ${other}`, 'content-type': 'application/json' }, body: '' });
    expect(withType.status).toBe(200);
  });

  it('rejects alg none and HS256 signed with the public key as the HMAC secret', async () => {
    const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const c = claims();
    for (const alg of ['none', 'None', 'NONE']) {
      const unsigned = `${b64({ alg, kid: key.kid, typ: 'JWT' })}.${b64(c)}.`;
      await expectAll(`Bearer ${unsigned}`, false, `alg ${alg}`);
      await expectAll(`Bearer ${unsigned}${Buffer.from('x').toString('base64url')}`, false, `alg ${alg} + junk signature`);
    }

    const jwks = (await call(`${authUrl}/.well-known/jwks.json`, { method: 'GET' })).json as JSONWebKeySet;
    const jwk = jwks.keys.find((k) => k.kid === key.kid)!;
    const pem = await exportSPKI((await importJWK(jwk, 'RS256', { extractable: true })) as CryptoKey);
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    for (const secret of [pem, pem.trim(), JSON.stringify(jwk), jwk.n!]) {
      const hs = await new SignJWT(c).setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
      await expectAll(`Bearer ${hs}`, false, 'HS256 with the public key');
    }
    // RS256 header, but the HMAC signature bytes: still rejected.
    const hs = await new SignJWT(c).setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' }).sign(new TextEncoder().encode(pem));
    const [, , sig] = hs.split('.');
    await expectAll(`Bearer ${b64({ alg: 'RS256', kid: key.kid, typ: 'JWT' })}.${b64(c)}.${sig}`, false, 'RS256 header + HMAC signature');
  });

  it('rejects a wrong iss or aud, an unknown or missing kid, a foreign key, sub ≠ base and bad lifetimes', async () => {
    await expectAll(`Bearer ${await sign(claims({ iss: 'http://127.0.0.1:1' }))}`, false, 'wrong iss');
    await expectAll(`Bearer ${await sign(claims({ iss: `${authUrl}/` }))}`, false, 'iss with trailing slash');
    await expectAll(`Bearer ${await sign(claims({ aud: 'http://otra-api.test' }))}`, false, 'wrong aud');
    await expectAll(`Bearer ${await sign(claims({ aud: undefined }))}`, false, 'no aud');
    await expectAll(`Bearer ${await sign(claims(), { kid: 'desconocido' })}`, false, 'unknown kid');
    await expectAll(`Bearer ${await sign(claims(), { kid: undefined })}`, false, 'no kid');

    const { privateKey: foreign } = await generateKeyPair('RS256', { modulusLength: 2048 });
    await expectAll(`Bearer ${await sign(claims(), {}, foreign)}`, false, 'foreign key with our kid');

    await expectAll(`Bearer ${await sign(claims({ sub: 'acme', base: 'rotar' }))}`, false, 'sub ≠ base');
    await expectAll(`Bearer ${await sign(claims({ base: undefined }))}`, false, 'no base');
    await expectAll(`Bearer ${await sign(claims({ jti: undefined }))}`, false, 'no jti');
    await expectAll(`Bearer ${await sign(claims({ sub: 'no-existe', base: 'no-existe' }))}`, false, 'unknown account');
    const now = Math.floor(Date.now() / 1000);
    await expectAll(`Bearer ${await sign(claims({ iat: now, exp: now + 365 * 86400 }))}`, false, 'lifetime over 8 h');
    await expectAll(`Bearer ${await sign(claims({ iat: now + 3600, exp: now + 3600 + 28800 }))}`, false, 'issued in the future');
    await expectAll(`Bearer ${await sign(claims(), { typ: 'at+jwt' })}`, false, 'other typ');
  });

  it('rejects the tokens of an account disabled after login', async () => {
    await createAccount(ctx, { base: 'sera-apagada', password: PASSWORD });
    const token = await login('sera-apagada');
    await expectAll(`Bearer ${token}`, true, 'before disable');
    await disableAccount(ctx, 'sera-apagada');
    await expectAll(`Bearer ${token}`, false, 'disabled');
  });

  it('keeps verifying tokens of the previous key after a rotation; new tokens carry the new kid', async () => {
    const oldToken = await login('rotar');
    const oldKid = decodeProtectedHeader(oldToken).kid;
    const { kid: newKid } = await rotateKey(ctx);
    const newToken = await login('rotar');
    expect(decodeProtectedHeader(newToken).kid).toBe(newKid);
    expect(newKid).not.toBe(oldKid);
    const jwks = (await call(`${authUrl}/.well-known/jwks.json`, { method: 'GET' })).json as JSONWebKeySet;
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    await expectAll(`Bearer ${oldToken}`, true, 'old key');
    await expectAll(`Bearer ${newToken}`, true, 'new key');
    // Signed with the retired key after its tokens can no longer be alive: its kid has left the JWKS.
    clockOffset += 28800 * 1000 + 60_000;
    try {
      const fresh = createTokenVerifier(ctx, { issuer: authUrl, jwks: 'local' });
      const late = await new SignJWT(claims({ sub: 'rotar', base: 'rotar' })).setProtectedHeader({ alg: 'RS256', kid: oldKid!, typ: 'JWT' }).sign(key.privateKey);
      expect(await fresh(`Bearer ${late}`)).toBeNull();
      const jwksLater = (await call(`${authUrl}/.well-known/jwks.json`, { method: 'GET' })).json as JSONWebKeySet;
      expect(jwksLater.keys.map((k) => k.kid)).toEqual([newKid]);
    } finally {
      clockOffset -= 28800 * 1000 + 60_000;
    }
  });
});

describe('logging', () => {
  it('never writes passwords or tokens to the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const lctx = await makeContext(pino({ level: 'trace' }, sink));
    await createAccount(lctx, { base: 'logueada', password: PASSWORD });
    const url = await startAuth(lctx);
    const token = await login('logueada', PASSWORD, url);
    await postJson(`${url}/login`, { base: 'logueada', password: 'otra-clave-secreta' });
    await call(`${url}/logout`, { headers: { authorization: `Bearer ${token}` } });
    await postJson(`${url}/login`, '{"base": "logueada", "password": "rota');
    const log = lines.join('');
    expect(log).toContain('login');
    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain('otra-clave-secreta');
    expect(log).not.toContain(token.split('.')[2]!);
  });
});
