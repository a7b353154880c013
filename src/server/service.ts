/**
 * The whole service on one machine: auth server, client API, background worker and, in env local,
 * the embedded Hacienda emulator. `fecr serve` runs this; tests start it in-process or as a child.
 */
import type { FastifyInstance } from 'fastify';
import type { HaciendaEnvironment } from '../service/context.js';
import { closeLookups } from '../service/lookups.js';
import { openService, type OpenedService } from '../service/runtime.js';
import { createTokenVerifier } from '../service/tokens.js';
import { acceptCallback, startWorker, type Worker, type WorkerOptions } from '../service/worker.js';
import { buildApiApp } from './api-app.js';
import { buildAuthApp } from './auth-app.js';

export interface ServiceOptions {
  dataDir: string;
  env: Record<string, string | undefined>;
  host?: string;
  authPort?: number;
  apiPort?: number;
  environment?: HaciendaEnvironment;
  /** Public URL of the auth server (iss/aud of tokens); default the listening URL. */
  publicAuthUrl?: string;
  /** Public URL of the client API; Hacienda's callbacks go to `<it>/hacienda/callback` (env local: the listening URL). */
  publicApiUrl?: string;
  /** Verify tokens against this JWKS (API running apart from the auth server). */
  authJwksUrl?: string;
  emulatorDelayMs?: number;
  worker?: WorkerOptions | false;
  warn?: (message: string) => void;
}

export interface RunningService {
  authUrl: string;
  baseUrl: string;
  haciendaUrl?: string;
  opened: OpenedService;
  worker?: Worker;
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
  const opened = await openService({
    dataDir: opts.dataDir,
    env: opts.env,
    environment: opts.environment ?? 'local',
    emulatorDelayMs: opts.emulatorDelayMs,
    warn: opts.warn,
  });
  const { ctx } = opened;
  const host = opts.host ?? '127.0.0.1';
  let authUrl = opts.publicAuthUrl ?? '';
  let auth: FastifyInstance | undefined;
  let api: FastifyInstance | undefined;
  let worker: Worker | undefined;
  try {
    auth = await buildAuthApp(ctx, { publicUrl: () => authUrl });
    await auth.listen({ host, port: opts.authPort ?? 0 });
    if (!opts.publicAuthUrl) authUrl = urlOf(auth);
    const verify = createTokenVerifier(ctx, {
      issuer: () => authUrl,
      jwks: opts.authJwksUrl ? new URL(opts.authJwksUrl) : 'local',
    });
    api = buildApiApp(ctx, {
      authenticate: verify,
      logger: ctx.logger.child({ app: 'api' }),
      disableRequestLogging: true,
      publicUrl: () => (api ? urlOf(api) : undefined),
    });
    // Hacienda's callback: only a hint (the worker re-confirms with GET); always 200 for Hacienda.
    api.post('/hacienda/callback', async (req) => {
      const r = await acceptCallback(ctx, req.body);
      if (r.known) worker?.wake();
      return { status: 'ok' };
    });
    api.addHook('onResponse', async (req) => {
      if (req.url === '/api/enviar/items') worker?.wake();
    });
    await api.listen({ host, port: opts.apiPort ?? 0 });
    if (opts.worker !== false) {
      const callbackBase = opts.publicApiUrl ?? (ctx.hacienda.environment === 'local' ? urlOf(api) : undefined);
      worker = startWorker(ctx, {
        ...(callbackBase ? { callbackUrl: `${callbackBase.replace(/\/+$/, '')}/hacienda/callback` } : {}),
        ...(opts.worker ?? workerOptionsFromEnv(opts.env)),
      });
    }
  } catch (e) {
    await api?.close();
    await auth?.close();
    await worker?.stop();
    await opened.close();
    throw e;
  }
  const baseUrl = urlOf(api);
  return {
    authUrl,
    baseUrl,
    haciendaUrl: opened.emulator?.url,
    opened,
    worker,
    async close() {
      await Promise.all([api!.close(), auth!.close()]);
      await worker?.stop();
      await closeLookups(ctx);
      await opened.close();
    },
  };
}

/** Worker tuning from the environment (FECR_WORKER_CONCURRENCY, FECR_WORKER_LEASE_MS), for operators and tests. */
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
  if (concurrency !== undefined) out.concurrency = concurrency;
  if (leaseMs !== undefined) out.leaseMs = leaseMs;
  return out;
}
