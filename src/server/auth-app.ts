/**
 * The auth server of the spec: POST /login, GET /.well-known/jwks.json, GET /health, plus POST /logout
 * (revokes the caller's token). Fastify 5; every error is the spec's `{error, message}` body.
 */
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { packageUrl } from '../core/package-root.js';
import { verifyCredentials, warmUpCredentialChecks } from '../service/accounts.js';
import type { ServiceContext } from '../service/context.js';
import { ensureSigningKey, publicJwks } from '../service/keys.js';
import { createTokenVerifier, issueToken, revokeToken } from '../service/tokens.js';
import { BODY_LIMIT, ERROR_CODES, installErrorHandling, MESSAGES, sendError } from './errors.js';
import { addressKey, LoginThrottle, type LoginThrottleOptions } from './rate-limit.js';

/**
 * Login throttling (rate-limit.ts `LoginThrottle`): an exponential delay per (account name, client address)
 * pair, which a success resets, and a ceiling of failures per client address across accounts.
 */
export type LoginRateLimit = Omit<LoginThrottleOptions, 'now'>;

export interface AuthAppOptions {
  /** The auth server's public URL: iss and aud of the tokens. A function when it is only known after listen. */
  publicUrl: string | (() => string);
  /** Defaults to ctx.logger. The app logs through a child that redacts passwords, tokens and authorization. */
  logger?: Logger;
  /** Reported by /health; defaults to package.json's. */
  version?: string;
  /** Login failure limits, or false to disable (benchmarks). */
  rateLimit?: LoginRateLimit | false;
  /**
   * The proxies (addresses, CIDRs; `parseTrustProxy`) whose X-Forwarded-For gives the client address, as
   * Fastify's trustProxy list. Default none: X-Forwarded-For is ignored and the socket's address is the client's.
   */
  trustProxy?: readonly string[];
}

/** pino redact paths for both apps: nothing secret reaches the logs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'password',
  'token',
  'secret',
  'body.password',
  'body.token',
  '*.password',
  '*.token',
  '*.secret',
  '*.authorization',
  '*.claveHacienda',
  '*.pinCertificado',
  '*.certificadoHacienda',
];

let packageVersion: string | undefined;
function readVersion(): string {
  if (packageVersion === undefined) {
    try {
      packageVersion = (JSON.parse(readFileSync(packageUrl('package.json'), 'utf8')) as { version: string }).version;
    } catch {
      packageVersion = 'unknown';
    }
  }
  return packageVersion;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Builds the auth app (not listening). Creates the first signing key when there is none. */
export async function buildAuthApp(ctx: ServiceContext, opts: AuthAppOptions): Promise<FastifyInstance> {
  const publicUrl = typeof opts.publicUrl === 'function' ? opts.publicUrl : () => opts.publicUrl as string;
  const version = opts.version ?? readVersion();
  const logger = (opts.logger ?? ctx.logger).child({ app: 'auth' }, { redact: { paths: REDACT_PATHS, censor: '[redacted]' } });

  await ensureSigningKey(ctx);
  await warmUpCredentialChecks(ctx);

  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT,
    trustProxy: opts.trustProxy && opts.trustProxy.length > 0 ? [...opts.trustProxy] : false,
    return503OnClosing: true,
  }) as unknown as FastifyInstance;
  installErrorHandling(app, { badRequestMessage: MESSAGES.loginFieldsRequired });

  const throttle = opts.rateLimit === false ? null : new LoginThrottle({ ...opts.rateLimit, now: ctx.now });

  const verifier = createTokenVerifier(ctx, { issuer: publicUrl, jwks: 'local' });

  app.post('/login', async (request, reply) => {
    void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const body = request.body;
    const base = isRecord(body) ? body['base'] : undefined;
    const password = isRecord(body) ? body['password'] : undefined;
    if (typeof base !== 'string' || base === '' || typeof password !== 'string' || password === '') {
      return sendError(reply, 400, ERROR_CODES.badRequest, MESSAGES.loginFieldsRequired);
    }
    // Keyed on the name as given, whether or not such an account exists: throttling reveals nothing about it.
    const accountKey = base.length <= 128 ? base : base.slice(0, 128);
    const ipKey = addressKey(request.ip);
    const admitted = throttle?.admit(accountKey, ipKey);
    if (admitted?.limited) {
      request.log.warn({ base: accountKey, ip: ipKey }, 'login throttled');
      void reply.header('retry-after', String(admitted.retryAfterSeconds));
      return sendError(reply, 429, ERROR_CODES.tooManyRequests, MESSAGES.tooManyRequests);
    }
    // Counted as a failure already (admit); a success takes it back.
    const account = await verifyCredentials(ctx, base, password);
    if (!account) {
      request.log.info({ base: accountKey, ip: ipKey }, 'login failed');
      return sendError(reply, 401, ERROR_CODES.invalidCredentials, MESSAGES.invalidCredentials);
    }
    throttle?.succeeded(accountKey, ipKey);
    const issued = await issueToken(ctx, account, { issuer: publicUrl() });
    request.log.info({ base: account.base }, 'login');
    return reply.code(200).send(issued);
  });

  app.post('/logout', async (request, reply) => {
    const verified = await verifier(request.headers.authorization);
    if (!verified) return sendError(reply, 401, ERROR_CODES.unauthorized, MESSAGES.unauthorized);
    await revokeToken(ctx, verified.jti, verified.exp);
    request.log.info({ base: verified.base, jti: verified.jti }, 'logout');
    return reply.code(200).send({ status: 'success', message: MESSAGES.logoutOk });
  });

  app.get('/.well-known/jwks.json', async (_request, reply) => {
    const jwks = await publicJwks(ctx);
    return reply.header('cache-control', 'public, max-age=300').send(jwks);
  });

  app.get('/health', async (request, reply) => {
    try {
      await sql`select 1`.execute(ctx.store.db);
      return reply.code(200).header('cache-control', 'no-store').send({ status: 'ok', version });
    } catch (err) {
      request.log.error({ err }, 'health: store unreachable');
      return reply.code(503).header('cache-control', 'no-store').send({ status: 'unavailable' });
    }
  });

  return app;
}
