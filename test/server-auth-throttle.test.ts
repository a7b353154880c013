// Login throttling of the auth server (issue 25, point 5), driven with Fastify's inject (no sockets): each request
// carries the client address of the test's choosing (`remoteAddress`) and, behind a proxy, an X-Forwarded-For.
// The policy: an exponential delay per (account, address) pair that a success resets, a ceiling per address;
// X-Forwarded-For only from the proxies named by trustProxy.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { buildAuthApp, type AuthAppOptions } from '../src/server/auth-app.js';
import { createAccount, disableAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { SecretBox } from '../src/service/secrets.js';
import type { Store } from '../src/store/index.js';
import { openTestStore } from './helpers/stores.js';

const PASSWORD = 'contraseña-segura-1';
const TOO_MANY = { error: 'too_many_requests', message: 'Demasiados intentos fallidos; intente de nuevo más tarde' };
const OWNER_IP = '192.0.2.10';

const dirs: string[] = [];
const apps: FastifyInstance[] = [];
const stores: Store[] = [];
// A clock that moves only when a test says so: delays run out by advance(), never while the test runs.
const T0 = Date.now();
let clockOffset = 0;
let ctx: ServiceContext;

async function makeContext(): Promise<ServiceContext> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fecr-throttle-'));
  dirs.push(dir);
  const store = await openTestStore({ file: path.join(dir, 'fecr.db') });
  stores.push(store);
  return {
    store,
    secrets: new SecretBox(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    now: () => T0 + clockOffset,
    randomBytes,
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: 'http://127.0.0.1:1' }) },
  };
}

/** A fresh auth app (its own throttle state) on the shared store, default policy unless told. */
async function authApp(opts: Partial<AuthAppOptions> = {}): Promise<FastifyInstance> {
  const app = await buildAuthApp(ctx, { publicUrl: 'http://auth.test', ...opts });
  apps.push(app);
  await app.ready();
  return app;
}

interface Attempt {
  status: number;
  retryAfter: string | undefined;
  body: unknown;
}

async function login(app: FastifyInstance, base: string, password: string, from: string, xff?: string): Promise<Attempt> {
  const r = await app.inject({
    method: 'POST',
    url: '/login',
    remoteAddress: from,
    headers: { 'content-type': 'application/json', ...(xff !== undefined ? { 'x-forwarded-for': xff } : {}) },
    payload: JSON.stringify({ base, password }),
  });
  const retryAfter = r.headers['retry-after'];
  return { status: r.statusCode, retryAfter: retryAfter === undefined ? undefined : String(retryAfter), body: r.json() };
}

const statuses = (xs: Attempt[]): number[] => xs.map((x) => x.status);

function advance(ms: number): void {
  clockOffset += ms;
}

beforeAll(async () => {
  ctx = await makeContext();
  for (const base of ['duena', 'otra']) await createAccount(ctx, { base, password: PASSWORD });
  await createAccount(ctx, { base: 'apagada', password: PASSWORD });
  await disableAccount(ctx, 'apagada');
});

afterAll(async () => {
  for (const app of apps) await app.close();
  for (const s of stores) await s.close().catch(() => undefined);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('login throttling per (account, address)', () => {
  it('lets the owner in at the first try while an attacker fails 1 000 logins on the account from other addresses', async () => {
    const app = await authApp();
    // 200 attacker addresses, 5 wrong passwords each: 1 000 failed logins, every one of them a real password check.
    const attackers = Array.from({ length: 200 }, (_, i) => `198.51.${100 + Math.floor(i / 100)}.${(i % 100) + 1}`);
    const seen: number[] = [];
    const owner: number[] = [];
    let done = 0;
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < attackers.length; i += 20) {
        const batch = attackers.slice(i, i + 20).map((ip) => login(app, 'duena', `adivinanza-${round}-${ip}`, ip));
        seen.push(...statuses(await Promise.all(batch)));
        done += 20;
        if (done === 20 || done === 500 || done === 1000) owner.push((await login(app, 'duena', PASSWORD, OWNER_IP)).status);
      }
    }
    expect(seen).toHaveLength(1000);
    expect(new Set(seen)).toEqual(new Set([401]));
    expect(owner).toEqual([200, 200, 200]);
    // Each attacking pair now waits; its next attempt is refused without a password check, with the spec's body.
    const next = await login(app, 'duena', 'otra-mas', attackers[0]!);
    expect(next).toEqual({ status: 429, retryAfter: '1', body: TOO_MANY });
    // … and 1 000 more attempts change nothing for the owner.
    for (let i = 0; i < 1000; i += 50) {
      const batch = Array.from({ length: 50 }, (_, j) => login(app, 'duena', 'x', attackers[(i + j) % attackers.length]!));
      expect(new Set(statuses(await Promise.all(batch)))).toEqual(new Set([429]));
    }
    expect((await login(app, 'duena', PASSWORD, OWNER_IP)).status).toBe(200);
  }, 120_000);

  it('doubles the delay at each further failure of the pair, up to 15 min; a success resets the pair', async () => {
    const app = await authApp();
    const ip = '203.0.113.20';
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await login(app, 'duena', 'mala', ip));
    expect(statuses(first)).toEqual([401, 401, 401, 401, 401]);
    // Refused while the pair waits, even with the right password (the password is not even checked).
    expect(await login(app, 'duena', PASSWORD, ip)).toEqual({ status: 429, retryAfter: '1', body: TOO_MANY });
    const waits: number[] = [1];
    for (let i = 0; i < 14; i++) {
      advance(waits[waits.length - 1]! * 1000);
      expect((await login(app, 'duena', 'mala', ip)).status).toBe(401);
      const r = await login(app, 'duena', 'mala', ip);
      expect(r.status).toBe(429);
      waits.push(Number(r.retryAfter));
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900, 900]);
    // Another address is not slowed at all.
    expect((await login(app, 'duena', PASSWORD, OWNER_IP)).status).toBe(200);
    // Once the wait is over, the right password resets the pair: five free failures again, then 1 s.
    advance(900_000);
    expect((await login(app, 'duena', PASSWORD, ip)).status).toBe(200);
    const again = [];
    for (let i = 0; i < 6; i++) again.push(await login(app, 'duena', 'mala', ip));
    expect(statuses(again)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(again[5]!.retryAfter).toBe('1');
    // An hour without failures forgets the pair too.
    advance(3_600_000);
    const later = [];
    for (let i = 0; i < 6; i++) later.push((await login(app, 'duena', 'mala', ip)).status);
    expect(later).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('counts concurrent attempts before their password checks end: 50 at once get 5 checks', async () => {
    const app = await authApp();
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => login(app, 'duena', `mala-${i}`, '203.0.113.30')));
    const count = (s: number) => all.filter((a) => a.status === s).length;
    expect([count(401), count(429)]).toEqual([5, 45]);
  });

  it('reveals nothing about the account: an existing, an unknown and a disabled name are throttled alike', async () => {
    const app = await authApp();
    const runs: Record<string, Attempt[]> = {};
    const cases = [['existing', 'duena', 'mala'], ['unknown', 'nadie-asi', PASSWORD], ['disabled', 'apagada', PASSWORD]] as const;
    for (const [name, base, password] of cases) {
      const ip = `203.0.113.${40 + Object.keys(runs).length}`;
      const xs: Attempt[] = [];
      for (let i = 0; i < 7; i++) xs.push(await login(app, base, password, ip));
      runs[name] = xs;
    }
    expect(statuses(runs['existing']!)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(runs['unknown']).toEqual(runs['existing']);
    expect(runs['disabled']).toEqual(runs['existing']);

    // The failures let through all check a password (argon2, milliseconds), known name or not.
    const time = async (base: string, password: string, ip: string): Promise<number> => {
      const t0 = performance.now();
      expect((await login(app, base, password, ip)).status).toBe(401);
      return performance.now() - t0;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 9; i++) {
      known.push(await time('duena', 'mala', `203.0.114.${i + 1}`));
      unknown.push(await time(`fantasma-${i}`, PASSWORD, `203.0.114.${i + 1}`));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    expect(median(known)).toBeGreaterThan(2);
    expect(median(unknown) / median(known)).toBeGreaterThan(0.5);
    expect(median(unknown) / median(known)).toBeLessThan(2);
  });

  it('keys IPv6 clients by their /64 and IPv4-mapped addresses as IPv4', async () => {
    const app = await authApp();
    const v6 = [];
    for (let i = 1; i <= 6; i++) v6.push((await login(app, 'duena', 'mala', `2001:db8:1:2::${i.toString(16)}`)).status);
    expect(v6).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await login(app, 'duena', PASSWORD, '2001:db8:1:3::1')).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await login(app, 'otra', 'mala', '203.0.113.50')).status).toBe(401);
    expect((await login(app, 'otra', 'mala', '::ffff:203.0.113.50')).status).toBe(429);
  });
});

describe('the ceiling per address (password spraying)', () => {
  it('refuses an address after 100 failures within the hour across accounts, not the owner from elsewhere', async () => {
    const app = await authApp();
    const sprayer = '203.0.113.60';
    const spray = await Promise.all(Array.from({ length: 100 }, (_, i) => login(app, `cuenta${i}`, 'Verano2026!', sprayer)));
    expect(new Set(statuses(spray))).toEqual(new Set([401]));
    const refused = await login(app, 'duena', PASSWORD, sprayer);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(TOO_MANY);
    expect(Number(refused.retryAfter)).toBeGreaterThan(3500);
    expect((await login(app, 'duena', PASSWORD, OWNER_IP)).status).toBe(200);
    // An hour later the address may try again.
    advance(3_601_000);
    expect((await login(app, 'otra', PASSWORD, sprayer)).status).toBe(200);
  });

  it("does not let a login to the sprayer's own account pay back its failures", async () => {
    const app = await authApp();
    const sprayer = '203.0.113.61';
    const spray = await Promise.all(Array.from({ length: 99 }, (_, i) => login(app, `cuenta${i}`, 'Verano2026!', sprayer)));
    expect(new Set(statuses(spray))).toEqual(new Set([401]));
    expect((await login(app, 'otra', PASSWORD, sprayer)).status).toBe(200);
    expect((await login(app, 'cuenta99', 'Verano2026!', sprayer)).status).toBe(401);
    expect((await login(app, 'otra', PASSWORD, sprayer)).status).toBe(429);
  });
});

describe('client address and X-Forwarded-For', () => {
  const PROXY = '10.0.0.2';

  it('behind a trusted proxy, throttles the X-Forwarded-For client, not the proxy; others behind it are unaffected', async () => {
    const app = await authApp({ trustProxy: ['10.0.0.0/8'] });
    const attacker = '198.51.100.7';
    const first = [];
    for (let i = 0; i < 6; i++) first.push((await login(app, 'duena', 'mala', PROXY, attacker)).status);
    expect(first).toEqual([401, 401, 401, 401, 401, 429]);
    // Prepending forged hops does not help: the client is the right-most address not a trusted proxy.
    expect((await login(app, 'duena', 'mala', PROXY, `1.2.3.4, ${attacker}`)).status).toBe(429);
    expect((await login(app, 'duena', 'mala', PROXY, `5.6.7.8, ${attacker}, 10.0.0.3`)).status).toBe(429);
    // The owner behind the same load balancer logs in at the first try.
    expect((await login(app, 'duena', PASSWORD, PROXY, OWNER_IP)).status).toBe(200);

    // Spraying through the proxy: the sprayer's address reaches its ceiling, the proxy's other clients do not.
    const sprayer = '198.51.100.8';
    const spray = await Promise.all(Array.from({ length: 100 }, (_, i) => login(app, `cuenta${i}`, 'Verano2026!', PROXY, sprayer)));
    expect(new Set(statuses(spray))).toEqual(new Set([401]));
    expect((await login(app, 'otra', PASSWORD, PROXY, sprayer)).status).toBe(429);
    expect((await login(app, 'cuenta0', 'mala', PROXY, '192.0.2.11')).status).toBe(401);
    expect((await login(app, 'otra', PASSWORD, PROXY, '192.0.2.11')).status).toBe(200);
    expect((await login(app, 'duena', PASSWORD, PROXY, OWNER_IP)).status).toBe(200);

    // A client that is not a trusted proxy cannot name another client: its X-Forwarded-For is ignored.
    const outsider = '203.0.113.70';
    const direct = [];
    for (let i = 0; i < 6; i++) direct.push((await login(app, 'duena', 'mala', outsider, `192.0.2.${100 + i}`)).status);
    expect(direct).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('without trustProxy, a forged X-Forwarded-For changes nothing', async () => {
    const app = await authApp();
    const attacker = '203.0.113.80';
    const xs = [];
    // A new forged address at each attempt, and the owner's own address: neither escapes nor frames anyone.
    for (let i = 0; i < 12; i++) xs.push((await login(app, 'duena', 'mala', attacker, i % 2 ? OWNER_IP : `198.18.0.${i}`)).status);
    expect(xs).toEqual([401, 401, 401, 401, 401, ...Array(7).fill(429)]);
    expect((await login(app, 'duena', PASSWORD, OWNER_IP)).status).toBe(200);
    // The same with the owner's address forged by a sprayer: the ceiling falls on the sprayer's socket address.
    const spray = await Promise.all(Array.from({ length: 100 }, (_, i) => login(app, `cuenta${i}`, 'x', '203.0.113.81', OWNER_IP)));
    expect(new Set(statuses(spray))).toEqual(new Set([401]));
    expect((await login(app, 'otra', PASSWORD, '203.0.113.81', OWNER_IP)).status).toBe(429);
    expect((await login(app, 'otra', PASSWORD, OWNER_IP)).status).toBe(200);
  });
});
