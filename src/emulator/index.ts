/**
 * Local emulator of Hacienda's services on ONE port (Fastify 5): the IdP (`/auth/realms/{rut|rut-stag}/…`),
 * the reception API (`/recepcion/v1/…`, `/recepcion-sandbox/v1/…`), the public queries (`/fe/ae`, `/fe/cabys`,
 * `/fe/ex`) and admin endpoints (`/_emulator/health`, `/_emulator/faults`, `/_emulator/receptions`,
 * `/_emulator/stats`, `/_emulator/suppliers`: test suppliers issuing to a receptor). The fecr client pointed at it with only base URLs changed works unchanged.
 *
 *   const emu = await startEmulator({ port: 0 });
 *   // resolveEndpoints('local', { baseUrl: emu.url })
 *   await emu.close();
 */
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { EMULATOR_REALMS, EmulatorIdp, type IdpStats } from './idp.js';
import { loadOrCreateKeys } from './keys.js';
import { answerEnvironment, MensajeHaciendaSigner } from './mensaje.js';
import { DEFAULT_CABYS_FILE, DEFAULT_REGISTRY_FILE } from './paths.js';
import { ReceptionProcessor } from './processor.js';
import { Registry, type TaxpayerRecord } from './registry.js';
import { headerText, registerReceptionRoutes } from './routes-reception.js';
import { registerPublicRoutes } from './routes-public.js';
import { registerSupplierRoutes } from './routes-suppliers.js';
import { SupplierBook } from './suppliers.js';
import { SqliteStore } from './sqlite-store.js';
import { MemoryStore, type EmulatorStore, type ReceptionRecord } from './store.js';
import { createDefaultValidator, createPooledValidator, defaultValidationThreads, EmulatorPool, type ClosableValidator, type ComprobanteValidator } from './validate.js';
import { applyFaultPatch, decideFault, faultPatchSchema, NO_FAULTS, seededRandom, type FaultConfig, type FaultPatch, type FaultTarget } from './faults.js';

/** The schema compilers of the emulator's Fastify app: it has no route schemas, so they are never called. */
function noSchemas(): never {
  throw new Error('the emulator declares no route schemas');
}

export interface EmulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Time from reception to verdict, ms (default 200; procesando at half of it). */
  processingDelayMs?: number;
  /** Strict IdP: `{username: password}` or the path of a JSON file with that map. Default: any non-empty credentials. */
  users?: Record<string, string> | string;
  /** SQLite file to keep the state across restarts (default: in memory). */
  dataFile?: string;
  /** Registry JSON (taxpayers, exoneraciones). Default fixtures/hacienda-registry.json. */
  registryFile?: string;
  /** CABYS catalogue `[{id, description, tax_percent}]`, JSON or gzip. Default fixtures/cabys.json.gz. */
  cabysFile?: string;
  /** Initial faults. */
  faults?: FaultPatch;
  /** Validates received documents (default: the default checks, on `validationThreads` worker threads). */
  validator?: ComprobanteValidator;
  /**
   * Worker threads for the default validator (default cores - 1, from 1 to 2); 0 validates on the event loop.
   * Ignored when `validator` is given. The threads start when documents queue up (3 being validated at once),
   * or with the emulator if `validationThreadsAtStart`; they end with `close()`.
   */
  validationThreads?: number;
  /** Start the validation threads with the emulator (a server) rather than on demand. Default false. */
  validationThreadsAtStart?: boolean;
  /** Clock for tokens and timestamps (epoch ms). */
  now?: () => number;
  /** Random source for fault decisions (default Math.random, or seeded when `seed` is given). */
  random?: () => number;
  seed?: number;
  /** Default 300 s / 1200 s as the staging IdP. */
  accessTokenTtlSec?: number;
  refreshTokenTtlSec?: number;
  /** Callback retries after the first attempt (default 3), first retry delay (default 1000 ms, doubling), timeout (5000 ms). */
  callbackRetries?: number;
  callbackRetryDelayMs?: number;
  callbackTimeoutMs?: number;
  /** URL to advertise in tokens, Location and CABYS uri (default the listening URL). */
  publicUrl?: string;
  /** Fastify request logging (default false). */
  logger?: boolean;
  /** Told each document's key once its verdict is stored (the embedded emulator's callback to the local run). */
  onDecided?: (key: string) => void;
}

export interface ReceptionSummary {
  /** The Hacienda that answered it: `sandbox` for a sandbox user's document on either path (mensaje.ts answerEnvironment). */
  environment: string;
  /** The reception path it was posted on: `production` (`/recepcion/v1`) or `sandbox` (`/recepcion-sandbox/v1`). */
  receivedOn: string;
  key: string;
  clave: string;
  estado: string;
  username: string;
  receivedAt: number;
  /** POSTs that created the document (1). */
  acceptedPosts: number;
  /** POSTs refused because the clave was already received. */
  duplicatePosts: number;
  errors: { codigo: number; mensaje: string }[];
  callback?: ReceptionRecord['callback'];
}

export interface FaultStats {
  dropped: number;
  serverErrors: number;
  rateLimited: number;
  lostResponses: number;
  idpOutage: number;
  /** 404s answered for a received document still inside the index delay (`indexDelayMs`). */
  indexDelayed: number;
  /** POSTs answered 429 by the per-issuer quota (`quotaPerMinute`). */
  quotaLimited: number;
}

export interface EmulatorState {
  readonly store: EmulatorStore;
  readonly registry: Registry;
  readonly idp: IdpStats;
  readonly faultStats: FaultStats;
  /** API requests received per API (admin endpoints not counted). */
  readonly requestCounts: Readonly<Record<FaultTarget, number>>;
  /** Current faults. */
  readonly faults: FaultConfig;
  setFaults(patch: FaultPatch): FaultConfig;
  receptions(): ReceptionSummary[];
  /** Resolves when every received document has its verdict. */
  whenIdle(): Promise<void>;
  /** Received documents still without a verdict. */
  readonly pending: number;
  /** The last error that kept a verdict from being written (a full disk, say), until a verdict is written again. */
  readonly processingFault: Error | undefined;
  /** Live worker threads validating documents (0 without a pool, and after close). */
  readonly workerThreads: number;
}

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  state: EmulatorState;
  close(): Promise<void>;
}

function targetOf(url: string): FaultTarget | undefined {
  if (url.startsWith('/auth/')) return 'idp';
  if (url.startsWith('/recepcion/') || url.startsWith('/recepcion-sandbox/')) return 'recepcion';
  if (url.startsWith('/fe/')) return 'fe';
  return undefined;
}

function readUsers(users: EmulatorOptions['users']): Record<string, string> | undefined {
  if (users === undefined) return undefined;
  const map = typeof users === 'string' ? (JSON.parse(readFileSync(users, 'utf8')) as unknown) : users;
  if (typeof map !== 'object' || map === null || Array.isArray(map) || !Object.values(map).every((v) => typeof v === 'string')) {
    throw new TypeError('users must be a JSON object {username: password}');
  }
  return map as Record<string, string>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const now = opts.now ?? Date.now;
  const random = opts.random ?? (opts.seed !== undefined ? seededRandom(opts.seed) : Math.random);
  const store: EmulatorStore = opts.dataFile ? new SqliteStore(opts.dataFile) : new MemoryStore();
  try {
    return await start(opts, store, now, random);
  } catch (e) {
    store.close();
    throw e;
  }
}

async function start(opts: EmulatorOptions, store: EmulatorStore, now: () => number, random: () => number): Promise<RunningEmulator> {
  const registry = Registry.load(opts.registryFile ?? DEFAULT_REGISTRY_FILE, opts.cabysFile ?? DEFAULT_CABYS_FILE);
  for (const [id, t] of store.learntTaxpayers()) if (!registry.hasTaxpayer(id)) registry.putTaxpayer(id, t as TaxpayerRecord);
  const keys = loadOrCreateKeys(store, now());
  let baseUrl = opts.publicUrl?.replace(/\/+$/, '') ?? '';
  const getBase = () => baseUrl;
  let faults = applyFaultPatch(NO_FAULTS, opts.faults ?? {});
  const faultStats: FaultStats = { dropped: 0, serverErrors: 0, rateLimited: 0, lostResponses: 0, idpOutage: 0, indexDelayed: 0, quotaLimited: 0 };
  const requestCounts: Record<FaultTarget, number> = { idp: 0, recepcion: 0, fe: 0 };

  const idp = new EmulatorIdp({
    store,
    keys,
    now,
    baseUrl: getBase,
    ...(opts.users !== undefined ? { users: readUsers(opts.users)! } : {}),
    ...(opts.accessTokenTtlSec !== undefined ? { accessTokenTtlSec: opts.accessTokenTtlSec } : {}),
    ...(opts.refreshTokenTtlSec !== undefined ? { refreshTokenTtlSec: opts.refreshTokenTtlSec } : {}),
  });
  const app: FastifyInstance = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: 20 * 1024 * 1024,
    forceCloseConnections: true,
    // No route declares a JSON schema (bodies are checked as Hacienda checks them, in analyze.ts), so Fastify's
    // default compilers (ajv, ≈ 40 ms to load and set up) would only slow the start of every local command.
    schemaController: { compilersFactory: { buildValidator: () => noSchemas, buildSerializer: () => noSchemas } },
  });
  const log = (msg: string, extra?: Record<string, unknown>) => app.log.warn(extra ?? {}, msg);
  // With the default validator, worker threads analyse the documents. The default validator and the pool are
  // ours to close (with the xmllint helper shell); a validator passed in is not. The MensajeHacienda is signed
  // here on the event loop: one round trip to a thread per document costs less than two (measured).
  let own: ClosableValidator | undefined;
  let pool: EmulatorPool | undefined;
  if (!opts.validator) {
    const threads = opts.validationThreads ?? defaultValidationThreads();
    if (threads > 0) {
      pool = new EmulatorPool(threads, (e) =>
        log('validation worker threads failed; validating on the event loop', { error: e instanceof Error ? e.message : String(e) }),
      );
      // Started on demand by default: for one document now and then (a CLI command), starting a thread costs
      // more than it saves.
      if (opts.validationThreadsAtStart) pool.warm();
      own = createPooledValidator({ pool, threadsFrom: opts.validationThreadsAtStart ? 0 : 3 });
    } else own = createDefaultValidator();
  }
  const closeOwn = async () => {
    await own?.close();
    await pool?.close();
  };
  const processor = new ReceptionProcessor({
    store,
    registry,
    validator: opts.validator ?? own!,
    signer: new MensajeHaciendaSigner(keys, now),
    now,
    processingDelayMs: opts.processingDelayMs ?? 200,
    faults: () => faults,
    callback: {
      retries: opts.callbackRetries ?? 3,
      retryDelayMs: opts.callbackRetryDelayMs ?? 1_000,
      timeoutMs: opts.callbackTimeoutMs ?? 5_000,
    },
    log,
    ...(opts.onDecided ? { onDecided: opts.onDecided } : {}),
  });

  // --- Parsers and errors -------------------------------------------------------------------------
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.setErrorHandler((error: { statusCode?: number; message: string }, req, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (targetOf(req.url) === 'recepcion' && status < 500) {
      return reply.code(400).header('x-error-cause', headerText(`La solicitud no es válida: ${error.message}`)).header('validation-exception', 'true').send();
    }
    return reply.code(status).send({ error: status < 500 ? 'invalid_request' : 'server_error', message: error.message });
  });

  // --- Faults ---------------------------------------------------------------------------------------
  const lost = new WeakSet<FastifyRequest>();
  const delayed = new WeakSet<FastifyRequest>();
  let windowStart = Math.floor(now() / 60_000);
  let windowCount = 0;
  app.addHook('onRequest', async (req, reply) => {
    const target = targetOf(req.url);
    if (!target) return;
    const f = faults;
    if (target === 'idp' && f.idpOutage) {
      requestCounts[target]++;
      faultStats.idpOutage++;
      return reply.code(503).type('text/html').send('<html><body><h1>503 Service Unavailable</h1></body></html>');
    }
    requestCounts[target]++;
    if (!f.targets.includes(target) || !(f.methods as string[]).includes(req.method)) return;
    if (f.latencyMs > 0) await sleep(f.latencyMs);
    const d = decideFault(f, random);
    if (d === 'drop') {
      faultStats.dropped++;
      reply.hijack();
      req.raw.socket.destroy();
      return reply;
    }
    if (d === 'error') {
      faultStats.serverErrors++;
      return reply.code(503).type('text/html').send('<html><body><h1>503 Service Unavailable</h1></body></html>');
    }
    if (d === 'ratelimit') {
      faultStats.rateLimited++;
      const reset = Math.ceil(now() / 1000) + f.retryAfterSeconds;
      return reply
        .code(429)
        .header('retry-after', String(f.retryAfterSeconds))
        .header('x-ratelimit-limit', '1000')
        .header('x-ratelimit-remaining', '0')
        .header('x-ratelimit-reset', String(reset))
        .send({ error: 'Too Many Requests' });
    }
    if (f.lostResponseRate > 0 && random() < f.lostResponseRate) lost.add(req);
    if (f.responseDelayMs > 0) delayed.add(req);
  });
  app.addHook('onSend', async (req, reply, payload) => {
    if (targetOf(req.url) === 'recepcion' && !reply.hasHeader('x-ratelimit-limit')) {
      const w = Math.floor(now() / 60_000);
      if (w !== windowStart) {
        windowStart = w;
        windowCount = 0;
      }
      windowCount++;
      reply.header('x-ratelimit-limit', '1000');
      reply.header('x-ratelimit-remaining', String(Math.max(0, 1000 - windowCount)));
      reply.header('x-ratelimit-reset', String((w + 1) * 60));
    }
    if (delayed.has(req)) await sleep(faults.responseDelayMs);
    if (lost.has(req)) {
      faultStats.lostResponses++;
      req.raw.socket.destroy();
    }
    return payload;
  });

  // --- IdP ------------------------------------------------------------------------------------------
  type Form = { Params: { realm: string }; Body: Record<string, string | undefined> | undefined };
  app.post<Form>('/auth/realms/:realm/protocol/openid-connect/token', async (req, reply) => {
    const a = await idp.token(req.params.realm, typeof req.body === 'object' && req.body ? req.body : {});
    reply.code(a.status).header('cache-control', 'no-store').header('pragma', 'no-cache');
    return a.body ? reply.send(a.body) : reply.send();
  });
  app.post<Form>('/auth/realms/:realm/protocol/openid-connect/logout', async (req, reply) => {
    const a = await idp.logout(req.params.realm, typeof req.body === 'object' && req.body ? req.body : {});
    reply.code(a.status);
    return a.body ? reply.send(a.body) : reply.send();
  });
  app.get<{ Params: { realm: string } }>('/auth/realms/:realm/protocol/openid-connect/certs', async (req, reply) => {
    if (!EMULATOR_REALMS[req.params.realm]) return reply.code(404).send({ error: 'Realm does not exist' });
    return reply.send(await idp.jwks());
  });

  // --- APIs -----------------------------------------------------------------------------------------
  registerReceptionRoutes(app, {
    store,
    idp,
    processor,
    now,
    faults: () => faults,
    baseUrl: getBase,
    onFault: (f) => (f === 'quota' ? faultStats.quotaLimited++ : faultStats.indexDelayed++),
  });
  const publicStats = registerPublicRoutes(app, registry, getBase);
  registerSupplierRoutes(app, { store, processor, book: new SupplierBook(store, now), now });

  // --- Admin ----------------------------------------------------------------------------------------
  const receptions = (): ReceptionSummary[] =>
    store.listReceptions().map((r) => {
      const s: ReceptionSummary = {
        environment: answerEnvironment(r.environment, r.username),
        receivedOn: r.environment,
        key: r.key,
        clave: r.clave,
        estado: r.estado,
        username: r.username,
        receivedAt: r.receivedAt,
        acceptedPosts: r.acceptedPosts,
        duplicatePosts: r.duplicatePosts,
        errors: (r.errors ?? []).map((e) => ({ codigo: e.codigo, mensaje: e.mensaje })),
      };
      if (r.callback) s.callback = r.callback;
      return s;
    });
  const started = Date.now();
  app.get('/_emulator/health', async () => ({
    status: 'ok',
    uptimeMs: Date.now() - started,
    persistent: opts.dataFile !== undefined,
    strictIdp: idp.strict,
    receptions: store.countReceptions(),
    pending: processor.pendingCount,
    workerThreads: pool?.liveThreads ?? 0,
    taxpayers: registry.taxpayerIds().length,
    cabys: registry.cabysCount,
  }));
  app.get('/_emulator/faults', async () => faults);
  app.post('/_emulator/faults', async (req, reply) => {
    const parsed = faultPatchSchema.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: 'invalid faults', issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) });
    try {
      faults = applyFaultPatch(faults, parsed.data);
    } catch (e) {
      return reply.code(400).send({ error: e instanceof Error ? e.message : String(e) });
    }
    return faults;
  });
  app.get('/_emulator/receptions', async () => ({ receptions: receptions() }));
  app.get('/_emulator/stats', async () => ({ idp: idp.stats, faults: faultStats, requests: requestCounts, public: publicStats, users: store.users() }));

  let address: string;
  try {
    address = await app.listen({ host: opts.host ?? '127.0.0.1', port: opts.port ?? 0 });
  } catch (e) {
    await closeOwn();
    throw e;
  }
  if (!baseUrl) {
    const a = app.server.address();
    const host = opts.host ?? '127.0.0.1';
    const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    baseUrl = a && typeof a === 'object' ? `http://${shownHost}:${a.port}` : address;
  }

  // Documents received before a restart (persistent mode) get their verdict now.
  for (const rec of store.pendingReceptions()) processor.schedule(rec, 0);

  const state: EmulatorState = {
    store,
    registry,
    idp: idp.stats,
    faultStats,
    requestCounts,
    get faults() {
      return faults;
    },
    setFaults(patch: FaultPatch) {
      faults = applyFaultPatch(faults, faultPatchSchema.parse(patch));
      return faults;
    },
    receptions,
    whenIdle: () => processor.whenIdle(),
    get pending() {
      return processor.pendingCount;
    },
    get processingFault() {
      return processor.lastFault;
    },
    get workerThreads() {
      return pool?.liveThreads ?? 0;
    },
  };

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    state,
    close: () =>
      (closing ??= (async () => {
        await processor.close();
        await closeOwn();
        await app.close();
        store.close();
      })()),
  };
}

export type { FaultConfig, FaultMethod, FaultPatch, FaultTarget } from './faults.js';
export type { ClosableValidator, ComprobanteValidator, ValidationMeta, ValidationResult, DefaultValidatorOptions, PooledValidator, PooledValidatorOptions } from './validate.js';
export { createDefaultValidator, createPooledValidator, defaultValidationThreads, EmulatorPool, CODIGOS } from './validate.js';
export type { IdpStats } from './idp.js';
export type { EmulatorStore, ReceptionRecord } from './store.js';
