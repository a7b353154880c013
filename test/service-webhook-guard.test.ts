// Webhook targets of a hosted fecr (issue 12): with --env sandbox|production an account cannot point its webhook at
// loopback, private, link-local, metadata, unspecified, CGNAT, multicast, broadcast or reserved addresses (nor at
// IPv4-mapped IPv6 forms of them), neither at registration (literal IPs and names, via an injected resolver) nor at
// connect time (DNS rebinding: the resolver answers differently later). No traffic is ever sent to such an address:
// names resolve through the injected resolver, and the only real servers are ours on 127.0.0.1, used to count
// connections (zero when refused). Also: a receiver that hangs is cut at the timeouts, and a response body is never
// read past 64 KiB.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { startService, type RunningService } from '../src/server/service.js';
import { AccountError, createAccount, pointWebhook, setWebhook } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { leaseJobs } from '../src/store/jobs.js';
import { SecretBox } from '../src/service/secrets.js';
import { createDelivery, WebhookSender, type AttemptOutcome } from '../src/service/delivery/webhooks.js';
import { openSqliteStore, type Store } from '../src/store/index.js';
import { runCli, tempDir } from './helpers/cli.js';
import { postJson } from './helpers/e2e.js';
import { spawnFecr } from './helpers/spawn.js';

type Resolved = { address: string; family: number }[];

/** A resolver the tests control: hostname → addresses; records every name asked. */
function fakeResolver(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<Resolved> => {
    asked.push(hostname);
    const list = table[hostname.toLowerCase()];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked, table };
}

const stores: Store[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
});

async function makeCtx(webhookTargets?: ServiceContext['webhookTargets'], now: () => number = Date.now): Promise<ServiceContext> {
  const dir = tempDir('fecr-guard-');
  dirs.push(dir);
  const store = await openSqliteStore({ file: join(dir, 'fecr.db') });
  stores.push(store);
  return {
    store,
    secrets: new SecretBox(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    now,
    randomBytes: (n) => randomBytes(n),
    hacienda: { environment: 'production', endpoints: resolveEndpoints('production', {}) },
    ...(webhookTargets ? { webhookTargets } : {}),
  };
}

async function refusal(p: Promise<unknown>): Promise<AccountError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AccountError) return e;
    throw e;
  }
  throw new Error('expected the webhook URL to be refused');
}

// --- registration --------------------------------------------------------------------------------------

const REFUSED_LITERALS: [string, RegExp][] = [
  ['http://127.0.0.1/hook', /loopback/],
  ['http://127.9.8.7:8080/hook', /loopback/],
  ['http://2130706433/hook', /loopback/], // 127.0.0.1 written as one number
  ['http://0x7f.1/hook', /loopback/],
  ['http://10.0.0.5/hook', /private/],
  ['http://172.16.3.4/hook', /private/],
  ['http://172.31.255.255/hook', /private/],
  ['https://192.168.1.10/hook', /private/],
  ['http://169.254.169.254/latest/meta-data/', /metadata|link-local/],
  ['http://169.254.1.1/hook', /link-local/],
  ['http://100.64.0.1/hook', /carrier-grade NAT/],
  ['http://100.127.255.254/hook', /carrier-grade NAT/],
  ['http://0.0.0.0/hook', /unspecified/],
  ['http://0.1.2.3/hook', /unspecified/],
  ['http://224.0.0.1/hook', /multicast/],
  ['http://239.255.255.250/hook', /multicast/],
  ['http://255.255.255.255/hook', /broadcast/],
  ['http://240.0.0.1/hook', /reserved/],
  ['http://192.0.2.10/hook', /reserved/],
  ['http://198.18.0.1/hook', /reserved/],
  ['http://[::1]/hook', /loopback/],
  ['http://[::]/hook', /unspecified/],
  ['http://[fc00::1]/hook', /private/],
  ['http://[fd12:3456::1]:8443/hook', /private/],
  ['http://[fd00:ec2::254]/latest/meta-data/', /metadata|private/],
  ['http://[fe80::1]/hook', /link-local/],
  ['http://[ff02::1]/hook', /multicast/],
  ['http://[::ffff:127.0.0.1]/hook', /loopback/],
  ['http://[::ffff:10.0.0.5]/hook', /private/],
  ['http://[::ffff:169.254.169.254]/hook', /metadata|link-local/],
  ['http://[::ffff:a9fe:a9fe]/hook', /metadata|link-local/],
  ['http://[::ffff:0:10.0.0.5]/hook', /private/],
  ['http://[64:ff9b::a00:5]/hook', /private/], // NAT64 of 10.0.0.5
  ['http://[2001:db8::1]/hook', /reserved/],
];

describe('registration: hosted (publicOnly) refuses non-public targets', () => {
  const dns = fakeResolver({
    'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'internal.example.com': ['10.0.0.5'],
    'meta.example.com': ['169.254.169.254'],
    'mixed.example.com': ['93.184.215.14', '192.168.0.7'],
    'v6local.example.com': ['fd00::1'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    localhost: ['127.0.0.1', '::1'],
    'metadata.google.internal': ['8.8.8.8'], // even if it resolved publicly: refused by name
  });
  let ctx: ServiceContext;
  beforeAll(async () => {
    ctx = await makeCtx({ publicOnly: true, resolve: dns.resolve });
  });

  it.each(REFUSED_LITERALS)('%s is refused on account creation (%s)', async (url, reason) => {
    const base = `a${randomBytes(4).toString('hex')}`;
    const e = await refusal(createAccount(ctx, { base, password: 'password-123', webhookUrl: url }));
    expect(e.code).toBe('invalid_webhook_url');
    expect(e.message).toMatch(reason);
    expect(e.message).toMatch(/public/);
    // Nothing was written.
    expect(await ctx.store.db.selectFrom('accounts').select('id').where('base', '=', base).executeTakeFirst()).toBeUndefined();
  });

  it('names that resolve to a non-public address are refused, every address counts', async () => {
    for (const [host, reason] of [
      ['internal.example.com', /10\.0\.0\.5.*private/],
      ['meta.example.com', /169\.254\.169\.254/],
      ['mixed.example.com', /192\.168\.0\.7.*private/],
      ['v6local.example.com', /fd00::1.*private/],
      ['mapped.example.com', /loopback/],
      ['localhost', /loopback/],
      ['LOCALHOST.', /loopback/],
      ['metadata.google.internal', /metadata/],
      ['metadata.google.internal.', /metadata/],
    ] as const) {
      const e = await refusal(createAccount(ctx, { base: `n${randomBytes(4).toString('hex')}`, password: 'password-123', webhookUrl: `https://${host}/hook` }));
      expect(e.code, host).toBe('invalid_webhook_url');
      expect(e.message, host).toMatch(reason);
    }
  });

  it('public addresses and names resolving only to public addresses are accepted', async () => {
    for (const url of ['https://hooks.example.com/fecr', 'http://93.184.215.14:8080/hook', 'https://[2606:4700:4700::1111]/hook', 'http://8.8.8.8/x']) {
      const r = await createAccount(ctx, { base: `p${randomBytes(4).toString('hex')}`, password: 'password-123', webhookUrl: url });
      expect(r.account.webhookUrl).toBe(url);
    }
  });

  it('accounts set (setWebhook) and the API path (pointWebhook) check the same way', async () => {
    const { account } = await createAccount(ctx, { base: 'settable', password: 'password-123' });
    expect((await refusal(setWebhook(ctx, 'settable', 'http://10.1.2.3/x'))).code).toBe('invalid_webhook_url');
    expect((await refusal(setWebhook(ctx, 'settable', 'https://internal.example.com/x'))).message).toMatch(/private/);
    expect((await refusal(pointWebhook(ctx, account.id, 'http://[::1]:9/x'))).message).toMatch(/loopback/);
    expect((await refusal(pointWebhook(ctx, account.id, 'http://meta.example.com/'))).message).toMatch(/169\.254\.169\.254/);
    expect((await pointWebhook(ctx, account.id, 'https://hooks.example.com/ok')).url).toBe('https://hooks.example.com/ok');
    expect((await pointWebhook(ctx, account.id, null)).url).toBeNull();
    await setWebhook(ctx, 'settable', 'https://hooks.example.com/again');
  });

  it('the operator flag (publicOnly false) and env local (no policy) allow private and loopback targets', async () => {
    const allowing = await makeCtx({ publicOnly: false, resolve: dns.resolve });
    for (const url of ['http://10.0.0.5/hook', 'http://127.0.0.1:9/hook', 'http://[::1]/x', 'https://internal.example.com/x']) {
      await createAccount(allowing, { base: `o${randomBytes(4).toString('hex')}`, password: 'password-123', webhookUrl: url });
    }
    const local = await makeCtx(undefined);
    await createAccount(local, { base: 'local', password: 'password-123', webhookUrl: 'http://127.0.0.1:9/hook' });
    await setWebhook(local, 'local', 'http://192.168.1.2/hook');
  });
});

// --- deliveries ----------------------------------------------------------------------------------------

interface Counting {
  url: string;
  port: number;
  connections: number;
  requests: number;
  sockets: Set<Socket>;
  close(): Promise<void>;
}

/** A server of ours on 127.0.0.1:0 that counts TCP connections and requests and answers with `handler`. */
async function countingServer(handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<Counting> {
  const server: Server = createServer((req, res) => {
    self.requests++;
    handler(req, res);
  });
  const self: Counting = {
    url: '',
    port: 0,
    connections: 0,
    requests: 0,
    sockets: new Set(),
    close: async () => {
      for (const s of self.sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  server.on('connection', (s: Socket) => {
    self.connections++;
    self.sockets.add(s);
    s.on('close', () => self.sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  self.port = (server.address() as AddressInfo).port;
  self.url = `http://127.0.0.1:${self.port}/hook`;
  return self;
}

interface DeliveryEnv {
  ctx: ServiceContext;
  accountId: number;
  deliveryId: number;
  clock: { t: number };
}

/** An account (webhook URL written as given, bypassing registration), a document and its pending delivery. */
async function deliveryEnv(webhookTargets: ServiceContext['webhookTargets'] | undefined, url: string): Promise<DeliveryEnv> {
  const clock = { t: Date.now() };
  const ctx = await makeCtx(webhookTargets, () => clock.t);
  const { account } = await createAccount({ ...ctx, webhookTargets: undefined }, { base: 'acme', password: 'password-123', webhookUrl: 'http://placeholder.invalid/' });
  await ctx.store.db.updateTable('accounts').set({ webhook_url: url }).where('id', '=', account.id).execute();
  const now = clock.t;
  const issuer = await ctx.store.db
    .insertInto('issuers')
    .values({ account_id: account.id, identificacion: '3101123456', record_json: '{}', secrets_enc: 'x', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  const clave = '50601012600310112345600100001010000000001100000001';
  const doc = await ctx.store.db
    .insertInto('documents')
    .values({
      account_id: account.id,
      issuer_id: issuer.id,
      clave,
      kind: 'FE',
      sucursal: 1,
      terminal: 1,
      numero_referencia: 1,
      body_hash: 'h',
      state: 'aceptado',
      xml: '<x/>',
      response_xml: '<MensajeHacienda/>',
      mensaje: 1,
      detalle_mensaje: null,
      fecha_emision: '2026-01-01T00:00:00-06:00',
      total_comprobante: '1.00',
      moneda: 'CRC',
      receptor_nombre: null,
      created_at: now,
      updated_at: now,
      decided_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const deliveryId = await ctx.store.db.transaction().execute((trx) => createDelivery(trx, now, { accountId: account.id, documentId: doc.id, clave, mensajeHaciendaXml: '<MensajeHacienda/>' }));
  return { ctx, accountId: account.id, deliveryId: deliveryId!, clock };
}

async function attempt(env: DeliveryEnv, sender: WebhookSender): Promise<AttemptOutcome> {
  const [job] = await leaseJobs(env.ctx, { owner: 'test', limit: 1, leaseMs: 60_000, types: ['webhook'] });
  if (!job) throw new Error('no webhook job due');
  return sender.run(job, 'test');
}

async function deliveryRow(env: DeliveryEnv) {
  return env.ctx.store.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', env.deliveryId).executeTakeFirstOrThrow();
}

describe('connect time: the resolved address is checked again before the socket connects', () => {
  let server: Counting;
  beforeAll(async () => {
    server = await countingServer((_req, res) => res.end('ok'));
  });
  afterAll(async () => {
    await server.close();
  });

  it('a name that resolved publicly at registration and privately now (DNS rebinding) is refused: recorded, retried, no connection', async () => {
    const dns = fakeResolver({ 'rebind.example.com': ['93.184.215.14'] });
    const env = await deliveryEnv({ publicOnly: true, resolve: dns.resolve }, 'http://placeholder.invalid/');
    // Registration sees the public answer.
    await setWebhook(env.ctx, 'acme', `http://rebind.example.com:${server.port}/hook`);
    // Then the name points at our own loopback server (and at the metadata address for the next run).
    dns.table['rebind.example.com'] = ['127.0.0.1'];
    const sender = new WebhookSender(env.ctx, { backoffBaseMs: 20, backoffMaxMs: 40, random: () => 0 });
    try {
      const out = await attempt(env, sender);
      expect(out.result).toBe('retry');
      expect(out.result === 'retry' && out.error).toMatch(/refused.*127\.0\.0\.1.*loopback/);
      expect(server.connections).toBe(0);
      const row = await deliveryRow(env);
      expect(row).toMatchObject({ state: 'pendiente', attempts: 1, last_status: null });
      expect(row.last_error).toMatch(/127\.0\.0\.1/);
      dns.table['rebind.example.com'] = ['169.254.169.254'];
      env.clock.t += 1_000;
      const again = await attempt(env, sender);
      expect(again.result === 'retry' && again.error).toMatch(/169\.254\.169\.254.*metadata/);
      expect((await deliveryRow(env)).attempts).toBe(2);
      expect(server.connections).toBe(0);
      expect(dns.asked.filter((h) => h === 'rebind.example.com').length).toBeGreaterThanOrEqual(3);
    } finally {
      await sender.close();
    }
  });

  it.each([['10.0.0.5'], ['169.254.169.254'], ['fd00:ec2::254'], ['::ffff:10.0.0.5'], ['100.64.1.1']])(
    'a name resolving to %s is refused before any connection',
    async (addr) => {
      const dns = fakeResolver({ 'evil.example.com': [addr] });
      const env = await deliveryEnv({ publicOnly: true, resolve: dns.resolve }, `http://evil.example.com:${server.port}/hook`);
      const sender = new WebhookSender(env.ctx, { connectTimeoutMs: 1_000 });
      try {
        const started = Date.now();
        const out = await attempt(env, sender);
        expect(Date.now() - started).toBeLessThan(900); // refused, not a connect timeout
        expect(out.result).toBe('retry');
        expect(out.result === 'retry' && out.error).toMatch(/refused/);
        expect((await deliveryRow(env)).last_error).toContain(addr);
      } finally {
        await sender.close();
      }
    },
  );

  it('a name resolving to a public and a private address is refused (every address is checked)', async () => {
    const dns = fakeResolver({ 'both.example.com': ['93.184.215.14', '127.0.0.1'] });
    const env = await deliveryEnv({ publicOnly: true, resolve: dns.resolve }, `http://both.example.com:${server.port}/hook`);
    const sender = new WebhookSender(env.ctx);
    try {
      const out = await attempt(env, sender);
      expect(out.result === 'retry' && out.error).toMatch(/refused.*127\.0\.0\.1/);
      expect(server.connections).toBe(0);
    } finally {
      await sender.close();
    }
  });

  it('a literal private URL stored before the guard existed is refused at delivery too, with no connection', async () => {
    const env = await deliveryEnv({ publicOnly: true }, server.url);
    const sender = new WebhookSender(env.ctx);
    try {
      const out = await attempt(env, sender);
      expect(out.result === 'retry' && out.error).toMatch(/refused.*127\.0\.0\.1.*loopback/);
      expect(server.connections).toBe(0);
      expect((await deliveryRow(env)).state).toBe('pendiente');
    } finally {
      await sender.close();
    }
  });

  it('with the operator flag the same names are delivered (through the injected resolver)', async () => {
    const dns = fakeResolver({ 'inside.example.com': ['127.0.0.1'] });
    const env = await deliveryEnv({ publicOnly: false, resolve: dns.resolve }, `http://inside.example.com:${server.port}/hook`);
    const sender = new WebhookSender(env.ctx);
    const before = server.requests;
    try {
      const out = await attempt(env, sender);
      expect(out).toEqual({ result: 'delivered', status: 200 });
      expect(server.requests).toBe(before + 1);
      expect(dns.asked).toContain('inside.example.com');
    } finally {
      await sender.close();
    }
  });
});

// --- hanging receivers and large bodies ------------------------------------------------------------------

describe('receivers that hang or answer too much (env local: loopback allowed)', () => {
  it('a receiver that accepts and never answers is cut at the headers timeout, recorded, and retried later', async () => {
    const server = await countingServer(() => undefined); // never answers
    const env = await deliveryEnv(undefined, server.url);
    const sender = new WebhookSender(env.ctx, { headersTimeoutMs: 500, backoffBaseMs: 1_000, backoffMaxMs: 1_000, random: () => 1 });
    try {
      const started = Date.now();
      const out = await attempt(env, sender);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(3_000);
      expect(out.result).toBe('retry');
      expect(out.result === 'retry' && out.error).toMatch(/timeout/i);
      expect(await deliveryRow(env)).toMatchObject({ state: 'pendiente', attempts: 1 });
      const job = await env.ctx.store.db.selectFrom('jobs').selectAll().where('delivery_id', '=', env.deliveryId).executeTakeFirstOrThrow();
      expect(job.done_at).toBeNull();
      expect(job.run_at).toBe(env.clock.t + 1_000);
      // Not due yet; due after the backoff: a second attempt, cut the same way.
      expect(await leaseJobs(env.ctx, { owner: 'test', limit: 1, leaseMs: 60_000 })).toEqual([]);
      env.clock.t += 1_000;
      const second = await attempt(env, sender);
      expect(second.result).toBe('retry');
      expect((await deliveryRow(env)).attempts).toBe(2);
      expect(server.requests).toBe(2);
    } finally {
      await sender.close();
      await server.close();
    }
  });

  it('a receiver that sends 200 and then trickles its body forever is cut at the attempt deadline', async () => {
    let closed = 0;
    const server = await countingServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('.'), 50); // never idle long enough for the body timeout
      req.socket.on('close', () => {
        clearInterval(t);
        closed++;
      });
    });
    const env = await deliveryEnv(undefined, server.url);
    const sender = new WebhookSender(env.ctx, { headersTimeoutMs: 500, bodyTimeoutMs: 500, attemptTimeoutMs: 1_000 });
    try {
      const started = Date.now();
      const out = await attempt(env, sender);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(out).toEqual({ result: 'delivered', status: 200 }); // the receiver said 2xx; the rest is not read
      await new Promise((r) => setTimeout(r, 100));
      expect(closed).toBe(1);
    } finally {
      await sender.close();
      await server.close();
    }
  });

  it('a receiver that trickles its response headers forever is cut at the attempt deadline and retried', async () => {
    const server = await countingServer((req, res) => {
      const sock = res.socket!;
      sock.write('HTTP/1.1 200 OK\r\n');
      const t = setInterval(() => sock.write('x-slow: 1\r\n'), 50);
      req.socket.on('close', () => clearInterval(t));
    });
    const env = await deliveryEnv(undefined, server.url);
    const sender = new WebhookSender(env.ctx, { headersTimeoutMs: 60_000, bodyTimeoutMs: 500, attemptTimeoutMs: 1_000 });
    try {
      const started = Date.now();
      const out = await attempt(env, sender);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(out.result).toBe('retry');
      expect(out.result === 'retry' && out.error).toMatch(/timeout|timed out|header/i);
    } finally {
      await sender.close();
      await server.close();
    }
  });

  it.each([
    [200, 'delivered'],
    [500, 'retry'],
  ] as const)('an endless response body with status %i is read no further than 64 KiB and the attempt ends promptly (%s)', async (status, result) => {
    let written = 0;
    let closed = false;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const server = await countingServer((req, res) => {
      res.writeHead(status, { 'content-type': 'application/octet-stream' });
      const pump = () => {
        while (!closed && res.write(chunk)) written += chunk.length;
        if (!closed) written += chunk.length;
      };
      res.on('drain', pump);
      req.socket.on('close', () => (closed = true));
      pump();
    });
    const env = await deliveryEnv(undefined, server.url);
    const sender = new WebhookSender(env.ctx, { headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
    const heapBefore = process.memoryUsage().heapUsed;
    try {
      const started = Date.now();
      const out = await attempt(env, sender);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(out.result).toBe(result);
      await new Promise((r) => setTimeout(r, 200));
      expect(closed).toBe(true); // we hung up on it
      const after = written;
      await new Promise((r) => setTimeout(r, 200));
      expect(written).toBe(after); // and it stopped
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await sender.close();
      await server.close();
    }
  });
});

// --- the service: fecr serve and the API ---------------------------------------------------------------

async function login(svc: RunningService, base: string, password: string): Promise<string> {
  const r = await postJson(`${svc.authUrl}/login`, { base, password });
  expect(r.status, r.text).toBe(200);
  return (r.body as { access_token?: string; token?: string }).access_token ?? (r.body as { token: string }).token;
}

describe('the service: POST /api/configurar/webhook', () => {
  const started: RunningService[] = [];
  afterAll(async () => {
    for (const s of started) await s.close();
  });

  async function serve(environment: 'local' | 'sandbox', extra: { allowPrivateWebhooks?: boolean; env?: Record<string, string> } = {}): Promise<{ svc: RunningService; token: string }> {
    const dataDir = tempDir('fecr-guard-serve-');
    const svc = await startService({
      dataDir,
      env: { FECR_NO_KEYCHAIN: '1', HOME: dataDir, ...extra.env },
      roles: ['auth', 'api'],
      environment,
      ...(extra.allowPrivateWebhooks ? { allowPrivateWebhooks: true } : {}),
    });
    started.push(svc);
    await createAccount(svc.opened.ctx, { base: 'acme', password: 'password-123' });
    return { svc, token: await login(svc, 'acme', 'password-123') };
  }

  it('env sandbox: a private or loopback URL is a 400 in the invalid_webhook_url style; a public one is accepted', async () => {
    const { svc, token } = await serve('sandbox');
    for (const url of ['http://10.0.0.5/hook', 'http://[::1]:8080/hook', 'http://169.254.169.254/', 'http://localhost:9/x']) {
      const r = await postJson(`${svc.baseUrl}/api/configurar/webhook`, { url }, token);
      expect(r.status, url).toBe(400);
      expect(r.body).toMatchObject({ details: [{ path: 'url', message: expect.stringMatching(/public/) }] });
      expect(typeof r.body.error).toBe('string');
      expect(typeof r.body.message).toBe('string');
    }
    const bad = await postJson(`${svc.baseUrl}/api/configurar/webhook`, { url: 'ftp://x' }, token);
    expect(bad.status).toBe(400);
    const good = await postJson(`${svc.baseUrl}/api/configurar/webhook`, { url: 'http://93.184.215.14/hook' }, token);
    expect(good.status, good.text).toBe(200);
  });

  it('env sandbox with allowPrivateWebhooks or FECR_ALLOW_PRIVATE_WEBHOOKS=1, and env local: private targets are accepted', async () => {
    for (const s of [await serve('sandbox', { allowPrivateWebhooks: true }), await serve('sandbox', { env: { FECR_ALLOW_PRIVATE_WEBHOOKS: '1' } }), await serve('local')]) {
      const r = await postJson(`${s.svc.baseUrl}/api/configurar/webhook`, { url: 'http://127.0.0.1:9/hook' }, s.token);
      expect(r.status, r.text).toBe(200);
      const p = await postJson(`${s.svc.baseUrl}/api/configurar/webhook`, { url: 'http://10.0.0.5/hook' }, s.token);
      expect(p.status, p.text).toBe(200);
    }
  });

  it('fecr serve --env sandbox refuses; with --allow-private-webhooks it accepts', async () => {
    for (const allow of [false, true]) {
      const dataDir = tempDir('fecr-guard-cli-');
      const env = { HOME: dataDir, FECR_DATA_DIR: dataDir, FECR_NO_KEYCHAIN: '1' };
      const created = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env, stdin: 'password-123\n' });
      expect(created.code, created.stderr).toBe(0);
      const child = await spawnFecr<{ authUrl: string; baseUrl: string }>(
        ['serve', '--env', 'sandbox', '--role', 'auth,api', '--data-dir', dataDir, ...(allow ? ['--allow-private-webhooks'] : [])],
        { env },
      );
      try {
        const tok = await postJson(`${child.ready.authUrl}/login`, { base: 'acme', password: 'password-123' });
        const token = (tok.body as { access_token?: string; token?: string }).access_token ?? (tok.body as { token: string }).token;
        const r = await postJson(`${child.ready.baseUrl}/api/configurar/webhook`, { url: 'http://192.168.0.10/hook' }, token);
        expect(r.status, r.text).toBe(allow ? 200 : 400);
      } finally {
        await child.stop();
      }
    }
  });
});

// --- the admin CLI -------------------------------------------------------------------------------------

describe('fecr accounts create / set', () => {
  const dir = tempDir('fecr-guard-admin-');
  const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1', FECR_MASTER_KEY: randomBytes(32).toString('base64') };

  it('--env production refuses a private webhook URL in one error line; local (the default) accepts loopback', async () => {
    const refused = await runCli(['accounts', 'create', 'acme', '--password-stdin', '--env', 'production', '--webhook-url', 'http://10.0.0.5/hook'], { env, stdin: 'password-123\n' });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^error: .*10\.0\.0\.5.*private.*--allow-private-webhooks/);
    const v6 = await runCli(['accounts', 'create', 'acme', '--password-stdin', '--env', 'sandbox', '--webhook-url', 'http://[::ffff:127.0.0.1]/hook'], { env, stdin: 'password-123\n' });
    expect(v6.code).toBe(1);
    expect(v6.stderr).toMatch(/^error: .*loopback/);
    const local = await runCli(['accounts', 'create', 'acme', '--password-stdin', '--webhook-url', 'http://127.0.0.1:9/hook'], { env, stdin: 'password-123\n' });
    expect(local.code, local.stderr).toBe(0);
    const set = await runCli(['accounts', 'set', 'acme', '--env', 'production', '--webhook-url', 'http://169.254.169.254/latest'], { env });
    expect(set.code).toBe(1);
    expect(set.stderr.trim().split('\n')).toHaveLength(1);
    expect(set.stderr).toMatch(/^error: .*169\.254\.169\.254/);
    const allowedByFlag = await runCli(['accounts', 'set', 'acme', '--env', 'production', '--allow-private-webhooks', '--webhook-url', 'http://10.0.0.5/hook'], { env });
    expect(allowedByFlag.code, allowedByFlag.stderr).toBe(0);
    const allowedByEnv = await runCli(['accounts', 'set', 'acme', '--env', 'production', '--webhook-url', 'http://10.0.0.6/hook'], { env: { ...env, FECR_ALLOW_PRIVATE_WEBHOOKS: '1' } });
    expect(allowedByEnv.code, allowedByEnv.stderr).toBe(0);
    const badEnv = await runCli(['accounts', 'set', 'acme', '--env', 'prod', '--webhook-url', 'http://10.0.0.6/hook'], { env });
    expect(badEnv.code).toBe(2);
  });
});
