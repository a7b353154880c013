/**
 * The service: auth server, client API, background worker and, in env local, the embedded Hacienda emulator.
 * `fecr serve` runs this; tests start it in-process or as a child.
 *
 * Roles (hosted mode, many processes on one PostgreSQL): `auth` (the auth server: /login, /logout, JWKS),
 * `api` (the client API and Hacienda's callback; stateless, any number behind a load balancer), `worker`
 * (sends, polls, webhooks; any number). `all` = the three in one process, the embedded default.
 */
import type { FastifyInstance } from 'fastify';
import { resolveEndpoints } from '../hacienda/index.js';
import type { HaciendaEnvironment } from '../service/context.js';
import { currentKey } from '../service/keys.js';
import { closeLookups } from '../service/lookups.js';
import { openService, type OpenedService } from '../service/runtime.js';
import type { MailDefaults } from '../service/mail-defaults.js';
import { createTokenVerifier } from '../service/tokens.js';
import { webhookTargetPolicy } from '../service/webhook-targets.js';
import { startWorker, type Worker, type WorkerOptions } from '../service/delivery/worker.js';
import { buildApiApp } from './api-app.js';
import { buildAuthApp } from './auth-app.js';
import { registerHaciendaCallback, type CallbackGuard, type CallbackLimits } from './hacienda-callback.js';

export type ServiceRole = 'auth' | 'api' | 'worker';
export const ALL_ROLES: readonly ServiceRole[] = ['auth', 'api', 'worker'];

/** `all`, or a comma-separated list of auth, api, worker. Throws on anything else. */
export function parseRoles(value: string): ServiceRole[] {
  const parts = value
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new Error('--role needs a value: all, auth, api or worker');
  const out = new Set<ServiceRole>();
  for (const p of parts) {
    if (p === 'all') ALL_ROLES.forEach((r) => out.add(r));
    else if ((ALL_ROLES as readonly string[]).includes(p)) out.add(p as ServiceRole);
    else throw new Error(`unknown role "${p}": use all, auth, api or worker (comma-separated)`);
  }
  return ALL_ROLES.filter((r) => out.has(r));
}

export interface ServiceOptions {
  dataDir: string;
  env: Record<string, string | undefined>;
  /** postgres://… (hosted mode) or a SQLite file; default the data dir's fecr.db. */
  database?: string;
  /** What this process runs (default all three). */
  roles?: readonly ServiceRole[];
  host?: string;
  authPort?: number;
  apiPort?: number;
  environment?: HaciendaEnvironment;
  /** Public URL of the auth server (iss/aud of tokens); default the listening URL. Role api without auth: required (or authJwksUrl). */
  publicAuthUrl?: string;
  /** Public URL of the client API; Hacienda's callbacks go to `<it>/hacienda/callback` (env local: the listening URL). */
  publicApiUrl?: string;
  /** Verify tokens against this JWKS (API running apart from the auth server). */
  authJwksUrl?: string;
  /** Env local: use the emulator at this URL instead of starting an embedded one (several processes, one emulator). */
  haciendaUrl?: string;
  emulatorDelayMs?: number;
  /**
   * With environment sandbox|production, webhook URLs must point at public addresses (webhook-targets.ts) unless
   * this is set (`--allow-private-webhooks`) or FECR_ALLOW_PRIVATE_WEBHOOKS=1. Env local allows any target.
   */
  allowPrivateWebhooks?: boolean;
  /**
   * The proxies (addresses, CIDRs) in front of the auth server and the API whose X-Forwarded-For names the client
   * (`--trust-proxy`, FECR_TRUST_PROXY); login throttling and Hacienda's callback are keyed on that client address.
   * None: the socket's.
   */
  trustProxy?: readonly string[];
  /** Bounds of Hacienda's callback route (server/hacienda-callback.ts); default DEFAULT_CALLBACK_LIMITS. */
  callbackLimits?: Partial<CallbackLimits>;
  worker?: WorkerOptions | false;
  /** The receptor mails' default SMTP server and sender (`--smtp-url`, FECR_SMTP_URL); none: the data dir's outbox. */
  mail?: Partial<MailDefaults> | false;
  /** CA certificates trusted for received comprobantes (`--recibidos-trust`); absent: FECR_RECIBIDOS_TRUST of env. */
  recibidosTrust?: { value: string; setting: string };
  /** The log's JSON lines to this file instead of stderr (`fecr serve --log-file`). */
  logFile?: string;
  warn?: (message: string) => void;
}

export interface RunningService {
  /** The auth server's public URL ('' when this process runs neither auth nor api). */
  authUrl: string;
  /** The client API's URL ('' without the api role). */
  baseUrl: string;
  haciendaUrl?: string;
  roles: readonly ServiceRole[];
  opened: OpenedService;
  worker?: Worker;
  /** Hacienda's callback route (with the api role): its counters. */
  callbacks?: CallbackGuard;
  /** Graceful stop: no new requests, in-flight requests and jobs finish, queued jobs stay for the next start. */
  close(): Promise<void>;
}

function urlOf(app: FastifyInstance): string {
  const a = app.server.address();
  if (!a || typeof a === 'string') throw new Error('server is not listening on TCP');
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return `http://${host}:${a.port}`;
}

export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const roles = opts.roles ?? ALL_ROLES;
  const has = (r: ServiceRole) => roles.includes(r);
  if (has('api') && !has('auth') && !opts.publicAuthUrl && !opts.authJwksUrl) {
    throw new Error('the api role without the auth role needs the auth server: --public-auth-url and/or --auth-jwks-url');
  }
  const environment = opts.environment ?? 'local';
  const external = environment === 'local' && opts.haciendaUrl ? opts.haciendaUrl : undefined;
  const opened = await openService({
    dataDir: opts.dataDir,
    env: opts.env,
    ...(opts.database ? { database: opts.database } : {}),
    environment,
    // The embedded emulator only where documents are sent from (or the all-in-one process).
    startLocalEmulator: !external && (has('worker') || has('api')),
    ...(external ? { endpoints: resolveEndpoints('local', { baseUrl: external }) } : {}),
    emulatorDelayMs: opts.emulatorDelayMs,
    warn: opts.warn,
    ...(opts.logFile ? { logFile: opts.logFile } : {}),
    webhookTargets: webhookTargetPolicy(environment, { allowPrivate: opts.allowPrivateWebhooks, env: opts.env }),
    ...(opts.mail !== undefined ? { mail: opts.mail } : {}),
    ...(opts.recibidosTrust ? { recibidosTrust: opts.recibidosTrust } : {}),
  });
  const { ctx } = opened;
  const host = opts.host ?? '127.0.0.1';
  let authUrl = opts.publicAuthUrl ?? '';
  let auth: FastifyInstance | undefined;
  let api: FastifyInstance | undefined;
  let worker: Worker | undefined;
  let callbacks: CallbackGuard | undefined;
  try {
    await checkMasterKey(opened);
    if (has('auth')) {
      auth = await buildAuthApp(ctx, { publicUrl: () => authUrl, ...(opts.trustProxy ? { trustProxy: opts.trustProxy } : {}) });
      await auth.listen({ host, port: opts.authPort ?? 0 });
      if (!opts.publicAuthUrl) authUrl = urlOf(auth);
    } else if (!authUrl && opts.authJwksUrl) {
      authUrl = new URL(opts.authJwksUrl).origin;
    }
    if (has('api')) {
      const verify = createTokenVerifier(ctx, {
        issuer: () => authUrl,
        jwks: opts.authJwksUrl ? new URL(opts.authJwksUrl) : 'local',
      });
      api = buildApiApp(ctx, {
        authenticate: verify,
        logger: ctx.logger.child({ app: 'api' }),
        disableRequestLogging: true,
        publicUrl: () => (api ? urlOf(api) : undefined),
        ...(opts.trustProxy ? { trustProxy: opts.trustProxy } : {}),
      });
      // Hacienda's callback: unauthenticated (Hacienda has no scheme for it), so only a hint, bounded and cheap.
      callbacks = registerHaciendaCallback(api, ctx, { wake: () => worker?.wake(), ...(opts.callbackLimits ? { limits: opts.callbackLimits } : {}) });
      api.addHook('onResponse', async (req) => {
        // A submission; or an issuer update, which releases the documents held for its refused Hacienda credentials.
        const route = req.routeOptions.url; // the matched route, whatever the spelling of the path
        if (route === '/api/enviar/items' || route === '/api/actualizar/emisor') worker?.wake();
      });
      await api.listen({ host, port: opts.apiPort ?? 0 });
    }
    if (has('worker') && opts.worker !== false) {
      const callbackBase = opts.publicApiUrl ?? (ctx.hacienda.environment === 'local' && api ? urlOf(api) : undefined);
      worker = startWorker(ctx, {
        ...(callbackBase ? { callbackUrl: `${callbackBase.replace(/\/+$/, '')}/hacienda/callback` } : {}),
        // Keys before they expire: a log line and an emisor.llave_por_vencer event once a day per issuer.
        certificateCheckIntervalMs: 3_600_000,
        ...(opts.worker ?? workerOptionsFromEnv(opts.env)),
      });
    }
  } catch (e) {
    await api?.close();
    await auth?.close();
    await callbacks?.idle();
    await worker?.stop();
    await opened.close();
    throw e;
  }
  return {
    authUrl,
    baseUrl: api ? urlOf(api) : '',
    haciendaUrl: opened.emulator?.url ?? external,
    roles,
    opened,
    worker,
    ...(callbacks ? { callbacks } : {}),
    async close() {
      await Promise.all([api?.close(), auth?.close()]);
      await callbacks?.idle();
      await worker?.stop();
      await closeLookups(ctx);
      await opened.close();
    },
  };
}

/**
 * Hosted mode: the master key must be the one the database's secrets were sealed with (every process shares
 * FECR_MASTER_KEY). Checked on the current signing key, when there is one, so a wrong key stops the start.
 */
async function checkMasterKey(opened: OpenedService): Promise<void> {
  const { ctx } = opened;
  if (ctx.store.dialect !== 'postgres') return;
  const any = await ctx.store.db.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).executeTakeFirst();
  if (!any) return;
  try {
    await currentKey(ctx);
  } catch {
    throw new Error("FECR_MASTER_KEY does not open this database's secrets: every fecr process must use the key the database was set up with");
  }
}

/**
 * Worker tuning from the environment (FECR_WORKER_CONCURRENCY, FECR_WORKER_LEASE_MS, FECR_QUEUE_POLL_MS), for
 * operators and tests.
 */
export function workerOptionsFromEnv(env: Record<string, string | undefined>): WorkerOptions {
  const int = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number`);
    return n;
  };
  const out: WorkerOptions = {};
  const concurrency = int('FECR_WORKER_CONCURRENCY');
  const leaseMs = int('FECR_WORKER_LEASE_MS');
  const queuePoll = int('FECR_QUEUE_POLL_MS');
  if (concurrency !== undefined) out.concurrency = concurrency;
  if (leaseMs !== undefined) out.leaseMs = leaseMs;
  if (queuePoll !== undefined) out.queuePollIntervalMs = queuePoll;
  return out;
}
