/**
 * The buyer's side on the client API (issue 16), additive, same bearer authentication, tenancy and error bodies as
 * the spec's endpoints. Files travel in base64, as the spec's other bodies carry them:
 *
 * - `POST /api/recibidos {xml: base64, nombre?, tamano?}` or `{documentos: [{xml, nombre?, tamano?}]}` (up to 200)
 *   → `{status: 'success', data: ImportResult[]}`: one result per document, `estado` `pendiente` or `invalido` with
 *   `hallazgos` (a refused document is a result, not an HTTP error; a malformed body is a 400). A document over the
 *   size limit of received comprobantes (core/received/limits.ts, 4 MiB or FECR_RECIBIDOS_MAX_BYTES) is refused
 *   unread, as is one whose `tamano` (a client's bounded read: the file's size, `xml` its beginning) is over it. This
 *   route's body limit fits one document of that size in base64 (other routes: 1 MiB); a larger body is a 413. The
 *   documents are checked on the service's threads (service/heavy-work.ts); an account's uploads and PDF downloads
 *   take turns (account-gate.ts: 2 at once, 8 waiting, more a 429 with Retry-After).
 * - `POST /api/recibidos/consultar {estado?, desde?, emisor?, limite?}` → the list, newest first.
 * - `POST /api/recibidos/detalle {clave}` → one, with findings, IVA by tarifa and the decision; 404 when unknown.
 * - `POST /api/recibidos/decidir {clave, decision: aceptar|parcial|rechazar, detalle?, condicionImpuesto?,
 *   ivaAcreditable?, gastoAplicable?, forzar?}` → the MensajeReceptor queued (`consecutivoReceptor`, `mensajeClave`).
 *   A 400 with `details` when it is already answered (a MensajeReceptor Hacienda rejected may be answered again), or
 *   when Hacienda has no record of the comprobante (asked again then; `details[0].path` `hacienda`) unless `forzar: true`.
 * - `POST /api/recibidos/resumen {mes: YYYY-MM, emisor?}` → one issuer's (the buyer's) IVA acreditable and gasto
 *   aplicable by tarifa, over the documents whose MensajeReceptor Hacienda accepted; the others in `excluidos` with
 *   their `motivo`. Without `emisor`: an array, one per issuer of the account (issue 36: never a sum across cédulas).
 * - `POST /api/recibidos/archivo {clave, fileType: XML|RESPUESTA|MENSAJE_RECEPTOR|RESPUESTA_MENSAJE_RECEPTOR}` →
 *   `{claveHacienda, fileType, encodedFile}`; 404 when there is no such file (yet).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { RECEIVED_MAX_BYTES } from '../core/received/limits.js';
import type { ServiceContext } from '../service/context.js';
import type { AccountGate } from './account-gate.js';
import { DECISIONS, decideRecibido } from '../service/recibidos/decide.js';
import { importRecibidos } from '../service/recibidos/import.js';
import { getRecibido, issuerSummaries, listRecibidos, RECIBIDO_ESTADOS, RECIBIDO_FILES, recibidoFile } from '../service/recibidos/queries.js';
import { BODY_LIMIT, ERROR_CODES, HttpError, MESSAGES } from './errors.js';
import { run, valid } from './request.js';
import { codeTable } from '../core/code-table.js';

export const RECIBIDOS_PATHS = ['/api/recibidos', '/api/recibidos/consultar', '/api/recibidos/detalle', '/api/recibidos/decidir', '/api/recibidos/resumen', '/api/recibidos/archivo'] as const;

const Base64Xml = z
  .string('must be the XML in base64')
  .min(1, 'is required')
  .refine((s) => /^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(s), 'must be base64');
const Documento = z.object({
  xml: Base64Xml,
  nombre: z.string().max(255).optional(),
  /** The file's size when `xml` holds only its beginning (a client's bounded read): refused as over the limit. */
  tamano: z.number().int().min(0).optional(),
});
export const ImportBody = z.union([Documento, z.object({ documentos: z.array(Documento).min(1, 'must hold at least one document').max(200, 'at most 200 per request') })]);
export const ListRecibidosBody = z.object({
  estado: z.enum(RECIBIDO_ESTADOS as [string, ...string[]], { error: `must be one of ${RECIBIDO_ESTADOS.join(', ')}` }).optional(),
  desde: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD').optional(),
  emisor: z.string().regex(/^[A-Za-z0-9]{1,20}$/, 'must be an identificación').optional(),
  limite: z.coerce.number().int().min(1).max(10_000).optional(),
});
export const ClaveBody = z.object({ clave: z.string('is required').trim().regex(/^[A-Za-z0-9]{50}$/, 'must be the 50-character clave') });
export const DecideBody = ClaveBody.extend({
  decision: z.enum(DECISIONS as [string, ...string[]], { error: 'must be aceptar, parcial or rechazar' }),
  detalle: z.string().max(160).optional(),
  condicionImpuesto: z.string().regex(/^0[1-5]$/, 'must be 01, 02, 03, 04 or 05').optional(),
  ivaAcreditable: z.union([z.string(), z.number()]).transform(String).optional(),
  gastoAplicable: z.union([z.string(), z.number()]).transform(String).optional(),
  /** Answer even though Hacienda has no record of the comprobante (its MensajeReceptor will likely be rejected). */
  forzar: z.boolean('must be true or false').optional(),
});
export const SummaryBody = z.object({
  mes: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month YYYY-MM'),
  emisor: z.string('must be a string').trim().regex(/^\d{9,12}$/, 'must be an identificación of 9 to 12 digits').optional().describe("This issuer's purchases (the buyer's identificación); without it, data is an array: one summary per issuer of the account"),
});
export const RecibidoFileBody = ClaveBody.extend({ fileType: z.enum(RECIBIDO_FILES, { error: `must be one of ${RECIBIDO_FILES.join(', ')}` }).default('XML') });

const IssuerSummary = z
  .object({ emisor: z.object({ identificacion: z.string(), nombre: z.string() }).describe('Whose purchases these are (the buyer)'), mes: z.string(), documentos: z.number(), porTarifa: z.array(z.object({}).loose()), totales: z.object({}).loose() })
  .loose();

/** For /openapi.json (src/server/openapi.ts): request bodies (`…Body`) and the `data` of each answer. */
export const RECIBIDOS_SCHEMAS: Record<string, z.ZodType> = codeTable({
  RecibidosImportBody: ImportBody,
  RecibidosListBody: ListRecibidosBody,
  RecibidoClaveBody: ClaveBody,
  RecibidoDecideBody: DecideBody,
  RecibidosSummaryBody: SummaryBody,
  RecibidoFileBody: RecibidoFileBody,
  RecibidosImportResponse: z.array(z.object({ archivo: z.string(), id: z.number(), clave: z.string().nullable(), estado: z.string(), creado: z.boolean() }).loose()),
  RecibidosListResponse: z.array(z.object({ clave: z.string().nullable(), estado: z.string() }).loose()),
  RecibidoDetailResponse: z.object({ clave: z.string().nullable(), estado: z.string(), hallazgos: z.array(z.object({ path: z.string(), message: z.string() })) }).loose(),
  RecibidoDecisionResponse: z.object({ clave: z.string(), estado: z.string(), mensaje: z.number(), consecutivoReceptor: z.string(), mensajeClave: z.string() }).loose(),
  RecibidosSummaryResponse: z.union([IssuerSummary, z.array(IssuerSummary).describe('Without emisor: one summary per issuer of the account, by identificación (never one sum across cédulas)')]),
  RecibidoFileResponse: z.object({ claveHacienda: z.string(), fileType: z.string(), encodedFile: z.string() }),
});

const ext = (path: (typeof RECIBIDOS_PATHS)[number], summary: string, request: string, response: string, errors: number[]) => ({
  path,
  summary: `${summary} (fecr extension, not in SERVICE-SPEC)`,
  request,
  response,
  errors,
  extension: true,
});

export const RECIBIDOS_ENDPOINTS = [
  ext('/api/recibidos', "Import suppliers' comprobantes (XML in base64, each up to the size limit, 4 MiB by default): each checked and stored, pendiente or invalido with its findings", 'RecibidosImportBody', 'RecibidosImportResponse', [400, 413, 429]),
  ext('/api/recibidos/consultar', 'Received comprobantes, newest first', 'RecibidosListBody', 'RecibidosListResponse', [400]),
  ext('/api/recibidos/detalle', 'One received comprobante: checks, IVA by tarifa, our answer', 'RecibidoClaveBody', 'RecibidoDetailResponse', [400, 404]),
  ext('/api/recibidos/decidir', 'Answer a received comprobante with a MensajeReceptor (aceptar, parcial, rechazar)', 'RecibidoDecideBody', 'RecibidoDecisionResponse', [400, 404]),
  ext('/api/recibidos/resumen', "A month's IVA acreditable and gasto aplicable by tarifa, of one issuer (without emisor: one per issuer, an array)", 'RecibidosSummaryBody', 'RecibidosSummaryResponse', [400]),
  ext('/api/recibidos/archivo', "A received comprobante's XML, its MensajeHacienda, our MensajeReceptor or Hacienda's answer to it", 'RecibidoFileBody', 'RecibidoFileResponse', [400, 404]),
];

/** The upload route's body limit: one document of `maxBytes` + 1 in base64, with room for the JSON around it. */
export function recibidosBodyLimit(maxBytes: number): number {
  return Math.max(BODY_LIMIT, Math.ceil((maxBytes + 1) / 3) * 4 + 64 * 1024);
}

/** `gate`: the upload's turn among the account's heavy requests (account-gate.ts), taken before its body is read. */
export function registerRecibidosEndpoints(app: FastifyInstance, ctx: ServiceContext, account: (req: FastifyRequest) => number, gate?: AccountGate): void {
  const onRequest = gate ? async (req: FastifyRequest, reply: FastifyReply) => gate.hold(account(req), reply.raw) : undefined;
  app.post('/api/recibidos', { bodyLimit: recibidosBodyLimit(ctx.recibidos?.maxBytes ?? RECEIVED_MAX_BYTES), ...(onRequest ? { onRequest } : {}) }, async (req) => {
    const body = valid(ImportBody, req.body ?? {});
    const docs = 'documentos' in body ? body.documentos : [body];
    // The service refuses a document over the limit unread (bytes or declared size): its sha256 and finding are kept.
    const files = docs.map((d, i) => ({ name: d.nombre ?? `documentos[${i}]`, bytes: Buffer.from(d.xml, 'base64'), ...(d.tamano !== undefined ? { size: d.tamano } : {}) }));
    return { status: 'success', data: await run(() => importRecibidos(ctx, account(req), files)) };
  });

  app.post('/api/recibidos/consultar', async (req) => {
    const b = valid(ListRecibidosBody, req.body ?? {});
    const data = await run(() =>
      listRecibidos(ctx, account(req), {
        ...(b.estado ? { estado: b.estado as (typeof RECIBIDO_ESTADOS)[number] } : {}),
        ...(b.desde ? { desde: b.desde } : {}),
        ...(b.emisor ? { emisor: b.emisor } : {}),
        ...(b.limite ? { limit: b.limite } : {}),
      }),
    );
    return { status: 'success', data };
  });

  app.post('/api/recibidos/detalle', async (req) => {
    const b = valid(ClaveBody, req.body ?? {});
    const data = await run(() => getRecibido(ctx, account(req), b.clave));
    if (!data) throw new HttpError(404, ERROR_CODES.notFound, `No hay un comprobante recibido con la clave ${b.clave}`);
    return { status: 'success', data };
  });

  app.post('/api/recibidos/decidir', async (req) => {
    const b = valid(DecideBody, req.body ?? {});
    const data = await run(() =>
      decideRecibido(ctx, account(req), b.clave, {
        decision: b.decision as (typeof DECISIONS)[number],
        ...(b.detalle !== undefined ? { detalle: b.detalle } : {}),
        ...(b.condicionImpuesto !== undefined ? { condicionImpuesto: b.condicionImpuesto } : {}),
        ...(b.ivaAcreditable !== undefined ? { ivaAcreditable: b.ivaAcreditable } : {}),
        ...(b.gastoAplicable !== undefined ? { gastoAplicable: b.gastoAplicable } : {}),
        ...(b.forzar ? { forzar: true } : {}),
      }),
    );
    return { status: 'success', data };
  });

  app.post('/api/recibidos/resumen', async (req) => {
    const b = valid(SummaryBody, req.body ?? {});
    // Issue 36: one issuer's summary (an object), or without `emisor` one per issuer (an array); never a sum across cédulas.
    const all = await run(() => issuerSummaries(ctx, account(req), b.mes, b.emisor === undefined ? {} : { emisor: b.emisor }));
    return { status: 'success', data: b.emisor === undefined ? all : all[0] };
  });

  app.post('/api/recibidos/archivo', async (req) => {
    const b = valid(RecibidoFileBody, req.body ?? {});
    const bytes = await run(() => recibidoFile(ctx, account(req), b.clave, b.fileType));
    if (!bytes) throw new HttpError(404, ERROR_CODES.notFound, MESSAGES.fileNotFound);
    return { status: 'success', data: { claveHacienda: b.clave, fileType: b.fileType, encodedFile: bytes.toString('base64') } };
  });
}
