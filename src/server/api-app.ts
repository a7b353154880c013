/**
 * The client API (SERVICE-SPEC "Client API"): the eight POST endpoints mapped 1:1 onto the service use cases,
 * bearer-token authentication on every one of them, tenancy by the token's `base`, and `GET /openapi.json`.
 * Authentication runs in onRequest, on the route the router matched (route-auth.ts), before the body is read, so an
 * unauthenticated request is always a 401, whatever the spelling of its path.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { ServiceContext } from '../service/context.js';
import { ServiceThreads, type HeavyWork } from '../service/heavy-work.js';
import { submitDocument } from '../service/documents.js';
import { completedInput } from '../core/input/complete.js';
import { getFile } from '../service/files.js';
import { getIssuerPublic, registerIssuer, updateIssuer } from '../service/issuers.js';
import { lookupExoneracion, lookupTaxpayer, searchCabys } from '../service/lookups.js';
import { AccountGate, type AccountGateOptions } from './account-gate.js';
import { IssuerLookups } from './issuer-lookups.js';
import { registerExtraEndpoints } from './api-extra.js';
import { registerRecibidosEndpoints } from './api-recibidos.js';
import { registerReportesEndpoints } from './api-reportes.js';
import { registerArchivoEndpoints } from './api-archivo.js';
import { registerDocumentosEndpoints } from './api-documentos.js';
import { registerContingenciaEndpoints } from './api-contingencia.js';
import { CabysBody, ExoneracionBody, FileBody, findingsFromZod, IssuerLookupBody, TaxpayerBody } from './api-schemas.js';
import { BODY_LIMIT, ERROR_CODES, HttpError, installErrorHandling, MESSAGES, sendError } from './errors.js';
import { buildOpenApi } from './openapi.js';
import { run, valid } from './request.js';
import { isPublicRoute, PUBLIC_ROUTE } from './route-auth.js';
import { idempotencyKeyOf, IDEMPOTENCY_HEADER, REPLAYED_HEADER } from './idempotency-key.js';

/** Success messages of the client API (the spec leaves their text open). */
export const API_MESSAGES = {
  submitted: 'Documento recibido; se enviará a Hacienda y el resultado llegará al webhook',
  issuerRegistered: 'Emisor registrado correctamente',
  issuerUpdated: 'Emisor actualizado correctamente',
} as const;

/** `Authorization` header → the token's account name, or null (→ 401). E.g. tokens.ts `createTokenVerifier`. */
export type Authenticate = (authorization: string | undefined) => Promise<{ base: string } | null>;

export interface ApiAppOptions {
  authenticate: Authenticate;
  /** pino logger for Fastify (request logs); none when omitted. */
  logger?: Logger;
  /** Maximum request body, bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Skip Fastify's per-request log lines (default false). */
  disableRequestLogging?: boolean;
  /** The API's public URL, for `servers` in /openapi.json. */
  publicUrl?: string | (() => string | undefined);
  /** The proxies whose X-Forwarded-For names the client (Fastify's trustProxy; `--trust-proxy`). Default none. */
  trustProxy?: readonly string[];
  /**
   * Received files' checks and PDFs off the event loop (service/heavy-work.ts): the threads' count (default cores − 1,
   * 1 to 2; 0: on the event loop), or the caller's own HeavyWork (not closed with the app). Default: the app's threads,
   * started by the first heavy task and ended with the app.
   */
  heavyWork?: HeavyWork | { threads: number };
  /** Heavy requests per account at once and waiting (account-gate.ts; default 2 and 8), or the caller's gate. */
  heavyPerAccount?: Partial<AccountGateOptions> | AccountGate;
  /** How long `/api/consultar/emisor` serves a found issuer without reading the store (issuer-lookups.ts; default 1 000 ms). */
  issuerLookupTtlMs?: number;
}

export const API_PATHS = [
  '/api/enviar/items',
  '/api/enviar/emisor',
  '/api/actualizar/emisor',
  '/api/consultar/emisor',
  '/api/hacienda/exoneracion',
  '/api/hacienda/cabys',
  '/api/consultar/archivo',
  '/api/hacienda/identificacion',
] as const;

const MAX_ACCOUNT_CACHE = 10_000;

export function buildApiApp(ctx: ServiceContext, opts: ApiAppOptions): FastifyInstance {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: opts.bodyLimit ?? BODY_LIMIT,
    ...(opts.disableRequestLogging ? { logController: new LogController({ disableRequestLogging: true }) } : {}),
    ...(opts.trustProxy && opts.trustProxy.length > 0 ? { trustProxy: [...opts.trustProxy] } : {}),
  }) as unknown as FastifyInstance;
  installErrorHandling(app, { badRequestMessage: MESSAGES.requiredFields });
  // Received files' checks and PDFs on threads (one tenant's 0.9 MB document or 1 000-line PDF no longer stalls the
  // others), at most `heavyPerAccount` of them per account at once.
  const heavy = heavyWorkOf(opts.heavyWork);
  if (heavy.own) app.addHook('onClose', async () => heavy.own?.close());
  const heavyCtx: ServiceContext = heavy.work ? { ...ctx, heavyWork: heavy.work } : ctx;
  const gate = opts.heavyPerAccount instanceof AccountGate ? opts.heavyPerAccount : new AccountGate(opts.heavyPerAccount);
  // Real time, not ctx.now: the bound is on how long a change made elsewhere can go unseen (a test clock may stand still).
  const issuerLookups = new IssuerLookups(opts.issuerLookupTtlMs !== undefined ? { ttlMs: opts.issuerLookupTtlMs } : {});

  // --- Authentication and tenancy -----------------------------------------------------------------
  const accountOf = new WeakMap<FastifyRequest, number>();
  // base → accounts.id (ids never change; whether the account may still use its token is the verifier's call).
  const accountIds = new Map<string, number>();
  const resolveAccount = async (base: string): Promise<number | null> => {
    const cached = accountIds.get(base);
    if (cached !== undefined) return cached;
    const row = await ctx.store.db.selectFrom('accounts').select(['id', 'disabled']).where('base', '=', base).executeTakeFirst();
    if (!row || Number(row.disabled) === 1) return null;
    if (accountIds.size >= MAX_ACCOUNT_CACHE) accountIds.clear();
    accountIds.set(base, Number(row.id));
    return Number(row.id);
  };

  // On the matched route, not on req.url (route-auth.ts): `/%61pi/…` is the router's `/api/…`.
  app.addHook('onRequest', async (req, reply) => {
    if (isPublicRoute(req)) return;
    const auth = await opts.authenticate(req.headers.authorization);
    const id = auth ? await resolveAccount(auth.base) : null;
    if (id === null) return sendError(reply, 401, ERROR_CODES.unauthorized, MESSAGES.unauthorized);
    accountOf.set(req, id);
  });

  const account = (req: FastifyRequest): number => {
    const id = accountOf.get(req);
    if (id === undefined) throw new HttpError(401, ERROR_CODES.unauthorized, MESSAGES.unauthorized);
    return id;
  };

  // --- Endpoints ------------------------------------------------------------------------------------
  app.post('/api/enviar/items', async (req, reply) => {
    // fecr extension (issue 36, idempotency-key.ts): the Idempotency-Key header; with it, an unnumbered body is numbered.
    const id = account(req); // before any work on the body
    const key = idempotencyKeyOf(req.headers[IDEMPOTENCY_HEADER]);
    // fecr extension: `?completar=1` computes the figures the body leaves out (core/input/complete.ts), as the CLI
    // does; without it the spec's required figures stay required (a 400 names the missing ones).
    const body = asksCompletion(req.query) ? completedInput(req.body) : req.body;
    const answer = (r: { clave: string }) => ({ status: 200, body: { status: 'success', message: API_MESSAGES.submitted, clave: r.clave } });
    // fecr extension: `?forzar=1` signs even what Hacienda is known to reject (service/pre-sign-checks.ts).
    const force = asksForce(req.query) ? { force: true } : {};
    const opts = key === undefined ? force : { idempotencyKey: key, idempotentAnswer: answer, assignNumber: true, ...force };
    const r = await run(() => submitDocument(ctx, id, body, opts));
    if (!r.answer) return answer(r).body;
    void reply.header(REPLAYED_HEADER, 'true').code(r.answer.status);
    return r.answer.body;
  });

  app.post('/api/enviar/emisor', async (req) => {
    await run(() => registerIssuer(ctx, account(req), req.body));
    issuerLookups.forget(account(req));
    return { status: 'success', message: API_MESSAGES.issuerRegistered };
  });

  app.post('/api/actualizar/emisor', async (req) => {
    await run(() => updateIssuer(ctx, account(req), req.body));
    issuerLookups.forget(account(req));
    return { status: 'success', message: API_MESSAGES.issuerUpdated };
  });

  app.post('/api/consultar/emisor', async (req) => {
    const body = valid(IssuerLookupBody, req.body);
    const id = account(req);
    const data = await issuerLookups.get(id, body.identificacion, () => run(() => getIssuerPublic(ctx, id, body.identificacion)));
    if (!data) throw notFound(MESSAGES.issuerNotFound);
    return { status: 'success', data };
  });

  app.post('/api/hacienda/exoneracion', async (req) => {
    const body = valid(ExoneracionBody, req.body);
    account(req);
    const data = await run(() => lookupExoneracion(ctx, body.exoneracion));
    if (!data) throw notFound(MESSAGES.exonerationNotFound);
    return { status: 'success', data };
  });

  app.post('/api/hacienda/cabys', async (req) => {
    const body = valid(CabysBody, req.body);
    account(req);
    const data = await run(() => searchCabys(ctx, body.name, { impuesto: body.impuesto === true }));
    return { status: 'success', data };
  });

  app.post('/api/consultar/archivo', async (req, reply) => {
    const body = valid(FileBody, req.body);
    if (body.fileType?.toUpperCase() === 'PDF') await gate.hold(account(req), reply.raw);
    const data = await run(() => getFile(heavyCtx, account(req), body.claveHacienda, body.fileType));
    if (!data) throw notFound(MESSAGES.fileNotFound);
    return { status: 'success', data };
  });

  app.post('/api/hacienda/identificacion', async (req) => {
    const body = valid(TaxpayerBody, req.body);
    account(req);
    const data = await run(() => lookupTaxpayer(ctx, body.identificacion, { actividades: body.actividades === true, detalle: body.detalle === true }));
    if (!data) throw notFound(MESSAGES.identificationNotFound);
    return { status: 'success', data };
  });

  registerExtraEndpoints(app, ctx, account); // /api/consultar/estado, /api/consultar/documentos (additive)
  registerRecibidosEndpoints(app, heavyCtx, account, gate); // /api/recibidos… (the buyer's side, additive)
  registerReportesEndpoints(app, ctx, account); // /api/reportes/iva (issue 29, additive)
  registerArchivoEndpoints(app, heavyCtx, account, gate); // /api/archivo/exportar (issue 29, additive)
  registerDocumentosEndpoints(app, ctx, account); // /api/documentos/anular|sustituir|pago|referencias (issue 30, additive)
  registerContingenciaEndpoints(app, ctx, account); // /api/contingencia/… (issue 30, additive)

  app.get('/openapi.json', { config: PUBLIC_ROUTE }, async () => {
    const url = typeof opts.publicUrl === 'function' ? opts.publicUrl() : opts.publicUrl;
    return buildOpenApi(url ? { serverUrl: url } : {});
  });

  return app;
}


/** The app's HeavyWork: the caller's, its own threads (`own`: closed with the app), or none (on the event loop). */
function heavyWorkOf(o: ApiAppOptions['heavyWork']): { work?: HeavyWork; own?: HeavyWork } {
  if (o && 'analyzeReceived' in o) return { work: o };
  if (o?.threads === 0) return {};
  const own = new ServiceThreads(o ? { threads: o.threads } : {});
  return { work: own, own };
}

function notFound(message: string): HttpError {
  return new HttpError(404, ERROR_CODES.notFound, message);
}

/** `?completar=1` (or `true`) on POST /api/enviar/items: the figures the body leaves out are computed (a fecr extension). */
export function asksCompletion(query: unknown): boolean {
  return queryFlag(query, 'completar');
}

/** `?forzar=1` (or `true`) on POST /api/enviar/items: signed even when Hacienda is known to reject it (a fecr extension). */
export function asksForce(query: unknown): boolean {
  return queryFlag(query, 'forzar');
}

function queryFlag(query: unknown, name: string): boolean {
  const v = (query as Record<string, unknown> | null)?.[name];
  return typeof v === 'string' && ['1', 'true'].includes(v.trim().toLowerCase());
}
