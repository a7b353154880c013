/**
 * fecr's contingency routes (issue 30), additive like api-reportes.ts: same bearer authentication, same tenancy (an
 * account sees only its own provisional comprobantes and documents), the spec's error bodies.
 *
 * - `POST /api/contingencia/registrar {provisionales: object | list}` → `{status, data: [{provisional, created}]}`:
 *   records provisional (paper) comprobantes of an outage (service/contingency.ts); 400 with details at their paths.
 * - `POST /api/contingencia/provisional {id}` → one of them with its replacement's state; 404 when the account has none.
 * - `POST /api/contingencia/reemplazo {id, clave}` → marks it replaced by the account's document `clave` (sent with
 *   POST /api/enviar/items, situación 2 and InformacionReferencia 05/08: core/contingency.ts); 400 when replaced already,
 *   or when `clave` is no replacement of it (service/contingency.ts markReplaced); a different total: `avisos`.
 * - `POST /api/contingencia/pendientes {}` → what is still owed: provisional comprobantes not replaced by an accepted
 *   document, documents Hacienda has not received yet (any situación), documents of situación 2 or 3 not accepted.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { codeTable } from '../core/code-table.js';
import { contingencyOwed, getProvisional, markReplaced, recordProvisionals } from '../service/contingency.js';
import type { ServiceContext } from '../service/context.js';
import { run, valid } from './request.js';

export const CONTINGENCIA_PATHS = ['/api/contingencia/registrar', '/api/contingencia/provisional', '/api/contingencia/reemplazo', '/api/contingencia/pendientes'] as const;

export const RegistrarBody = z.object({
  provisionales: z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())], 'must be a provisional comprobante or a list of them').describe('{numero, fechaEmision, emisor, receptor?, totalComprobante, codigoMoneda?, kind?} or a list of them'),
});
const Id = z.number('must be a number').int('must be a whole number').positive('must be positive').describe('The provisional comprobante (its id)');
export const ProvisionalBody = z.object({ id: Id });
export const ReemplazoBody = z.object({ id: Id, clave: z.string('is required').trim().regex(/^[A-Za-z0-9]{50}$/, 'must be a clave of 50 characters').describe('The clave of the document that replaces it') });

const Provisional = z
  .object({
    id: z.number(),
    numero: z.string(),
    fechaEmision: z.string(),
    emisor: z.string(),
    receptor: z.string().nullable(),
    totalComprobante: z.string(),
    codigoMoneda: z.string(),
    kind: z.string(),
    recordedAt: z.string(),
    reemplazo: z.object({ clave: z.string(), estado: z.string().nullable() }).nullable(),
  })
  .loose();

/** For /openapi.json (src/server/openapi.ts). */
export const CONTINGENCIA_SCHEMAS: Record<string, z.ZodType> = codeTable({
  RegistrarBody,
  ProvisionalBody,
  ReemplazoBody,
  PendientesBody: z.object({}),
  RegistrarResponse: z.array(z.object({ provisional: Provisional, created: z.boolean() })),
  ProvisionalResponse: Provisional,
  PendientesResponse: z.object({
    provisionales: z.array(Provisional),
    documentos: z.array(z.object({ clave: z.string(), kind: z.string(), estado: z.string(), situacion: z.string(), numeroReferencia: z.number(), totalComprobante: z.string(), moneda: z.string(), createdAt: z.string() }).loose()),
  }),
});

const extension = '(fecr extension, not in SERVICE-SPEC)';
export const CONTINGENCIA_ENDPOINTS = [
  { path: '/api/contingencia/registrar' as const, summary: `Records provisional (paper) comprobantes issued during an outage, with their own numbering ${extension}`, request: 'RegistrarBody', response: 'RegistrarResponse', errors: [400], extension: true },
  { path: '/api/contingencia/provisional' as const, summary: `One provisional comprobante and its replacement's state ${extension}`, request: 'ProvisionalBody', response: 'ProvisionalResponse', errors: [400, 404], extension: true },
  { path: '/api/contingencia/reemplazo' as const, summary: `Marks a provisional comprobante replaced by a document of the account that replaces it: its kind, situación 2, InformacionReferencia 05/08 with its number; once (a different total: a warning in avisos) ${extension}`, request: 'ReemplazoBody', response: 'ProvisionalResponse', errors: [400, 404], extension: true },
  { path: '/api/contingencia/pendientes' as const, summary: `What is still owed after an outage: provisional comprobantes not replaced, documents not received by Hacienda yet (any situación), documents of situación 2 or 3 not accepted ${extension}`, request: 'PendientesBody', response: 'PendientesResponse', errors: [], extension: true },
];

export function registerContingenciaEndpoints(app: FastifyInstance, ctx: ServiceContext, account: (req: FastifyRequest) => number): void {
  app.post('/api/contingencia/registrar', async (req) => {
    const b = valid(RegistrarBody, req.body ?? {});
    return { status: 'success', data: await run(() => recordProvisionals(ctx, account(req), b.provisionales)) };
  });
  app.post('/api/contingencia/provisional', async (req) => {
    const b = valid(ProvisionalBody, req.body ?? {});
    return { status: 'success', data: await run(() => getProvisional(ctx, account(req), b.id)) };
  });
  app.post('/api/contingencia/reemplazo', async (req) => {
    const b = valid(ReemplazoBody, req.body ?? {});
    return { status: 'success', data: await run(() => markReplaced(ctx, account(req), b.id, b.clave)) };
  });
  app.post('/api/contingencia/pendientes', async (req) => ({ status: 'success', data: await run(() => contingencyOwed(ctx, account(req))) }));
}
