/**
 * Two endpoints the spec lacks and the CLI's remote mode needs (`fecr status`, `--wait`, `fecr documents list`).
 * Additive: same bearer authentication (the app's onRequest hook covers every /api/ path), same tenancy (an
 * account sees only its own documents) and the same error bodies as the spec's eight.
 *
 * - `POST /api/consultar/estado {claveHacienda}` → `{status: 'success', data: DocumentStatus}`;
 *   404 not_found "Documento no encontrado para la clave proporcionada".
 * - `POST /api/consultar/documentos {estado?, desde?, limite?, emisor?}` → `{status: 'success', data: DocumentStatus[]}`,
 *   newest first; `desde` is an ISO 8601 date or date-time (Costa Rica time when it has no offset), `limite` 1–1000
 *   (default 100).
 * - `POST /api/consultar/webhook {}` → `{status: 'success', data: {url: string | null}}`: the account's webhook URL.
 * - `POST /api/configurar/webhook {url: string | null}` → `{status: 'success', data: {url, secret}}`: points the
 *   webhook at `url` (null: no deliveries) keeping the signing secret; `secret` is the new `whsec_…` secret when the
 *   account had none (shown once), else null. Used by `fecr webhooks listen` (and to put the previous URL back).
 * - `POST /api/consultar/emisores {identificacion?}` → `{status: 'success', data: IssuerDetails[]}`: the account's
 *   issuers (or the one with that identificación; none: `[]`), each record without any secret (`fecr emisor list|show`).
 * - `POST /api/enviar/correo {claveHacienda, correos?}` → `{status: 'success', data: MailStatus}`: mails an accepted
 *   document to its receptor again (to `correos` when given, else to its stored recipients; `fecr documents email`);
 *   404 as `/api/consultar/estado`, 400 when it is not aceptado, has no recipient, an address is bad, or is neither a
 *   recipient of the document nor on the account's allow-list (`details` at `correos[i]`), or the service has no
 *   sender; 429 too_many_requests with Retry-After past the account's or the document's limit
 *   (service/delivery/email-policy.ts).
 * `/api/consultar/estado` and `/api/consultar/documentos` give each document's latest mail as `correo`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { documentStatusFromRow } from '../service/document-status.js';
import { AccountError, pointWebhook, webhookUrlOf } from '../service/accounts.js';
import { getDocument, listDocuments } from '../service/documents.js';
import { mailStatusOf, requestMail } from '../service/delivery/email.js';
import { MailLimitError } from '../service/delivery/email-policy.js';
import { ServiceError } from '../service/service-error.js';
import { listIssuerDetails } from '../service/issuers.js';
import { findingsFromZod } from './api-schemas.js';
import { ERROR_CODES, HttpError, MESSAGES } from './errors.js';
import { isClave } from '../core/clave.js';
import { DOCUMENT_STATES } from '../core/lifecycle.js';
import { parseSince } from '../core/dates.js';

export const EXTRA_MESSAGES = {
  documentNotFound: 'Documento no encontrado para la clave proporcionada',
} as const;

export const EXTRA_PATHS = ['/api/consultar/estado', '/api/consultar/documentos', '/api/consultar/webhook', '/api/configurar/webhook', '/api/consultar/emisores', '/api/enviar/correo'] as const;

const required = (what: string) => ({ error: (iss: { input: unknown }) => (iss.input === undefined ? 'is required' : `must be ${what}`) });

export const STATES = DOCUMENT_STATES;

export const StatusBody = z.object({
  claveHacienda: z.string(required('a string')).trim().min(1, 'is required').describe('The 50-digit clave of the document'),
});

export const ListBody = z.object({
  estado: z.enum(STATES, { error: `must be one of ${STATES.join(', ')}` }).optional(),
  desde: z
    .string('must be a string')
    .trim()
    .refine((s) => parseSince(s) !== null, 'must be an ISO 8601 date (2026-03-15) or date-time')
    .optional(),
  limite: z.coerce.number('must be a number').int('must be an integer').min(1, 'must be at least 1').max(1000, 'must be at most 1000').optional(),
  emisor: z.string('must be a string').trim().regex(/^\d{9,12}$/, 'must be an identificación of 9 to 12 digits').optional(),
});

export const WebhookBody = z.object({
  url: z
    .string('must be a string or null')
    .trim()
    .refine((u) => {
      try {
        const p = new URL(u).protocol;
        return p === 'http:' || p === 'https:';
      } catch {
        return false;
      }
    }, 'must be an http or https URL')
    .nullable()
    .describe('Where deliveries go from now on; null: nowhere'),
});

export const EmailBody = z.object({
  claveHacienda: z.string(required('a string')).trim().min(1, 'is required').describe('The 50-digit clave of an accepted document'),
  correos: z.array(z.string('must be a string')).max(10, 'must have at most 10 addresses').optional().describe("Send to these addresses instead of the document's recipients: each one of them, or registered for the account by its operator"),
});

export const IssuersBody = z.object({
  identificacion: z
    .union([z.string('must be a string'), z.number().int().positive()])
    .transform((v) => String(v).trim())
    .optional()
    .describe('Only the issuer with this identificación'),
});

export { parseSince } from '../core/dates.js';

function valid<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const r = schema.safeParse(body);
  if (!r.success) throw new HttpError(400, ERROR_CODES.badRequest, MESSAGES.requiredFields, findingsFromZod(r.error));
  return r.data;
}

/** Registers the two endpoints on the client API; `account` is the app's tenancy resolver (the request's account id). */
export function registerExtraEndpoints(app: FastifyInstance, ctx: Parameters<typeof getDocument>[0], account: (req: FastifyRequest) => number): void {
  app.post('/api/consultar/estado', async (req) => {
    const body = valid(StatusBody, req.body);
    const accountId = account(req);
    const row = isClave(body.claveHacienda) ? await getDocument(ctx, accountId, body.claveHacienda) : null;
    if (!row) throw new HttpError(404, ERROR_CODES.notFound, EXTRA_MESSAGES.documentNotFound);
    const mails = await mailStatusOf(ctx, [row.id]);
    return { status: 'success', data: documentStatusFromRow(row, mails.get(row.id) ?? null) };
  });

  app.post('/api/enviar/correo', async (req) => {
    const body = valid(EmailBody, req.body);
    try {
      // An account: only the document's recipients and its allow-list, within its limits.
      const r = await requestMail(ctx, account(req), body.claveHacienda, { caller: 'account', ...(body.correos ? { to: body.correos } : {}) });
      return { status: 'success', data: r.mail };
    } catch (e) {
      if (e instanceof MailLimitError) throw new HttpError(429, ERROR_CODES.tooManyRequests, e.message, undefined, { 'retry-after': String(e.retryAfterSeconds) });
      if (e instanceof ServiceError) throw new HttpError(e.status, e.status === 404 ? ERROR_CODES.notFound : ERROR_CODES.badRequest, e.message, e.details);
      throw e;
    }
  });

  app.post('/api/consultar/documentos', async (req) => {
    const body = valid(ListBody, req.body ?? {});
    const rows = await listDocuments(ctx, account(req), {
      ...(body.estado ? { state: body.estado } : {}),
      ...(body.desde ? { since: parseSince(body.desde)! } : {}),
      ...(body.limite ? { limit: body.limite } : {}),
      ...(body.emisor ? { issuer: body.emisor } : {}),
    });
    const mails = await mailStatusOf(ctx, rows.map((r) => Number(r.id)));
    return { status: 'success', data: rows.map((r) => documentStatusFromRow(r, mails.get(Number(r.id)) ?? null)) };
  });

  app.post('/api/consultar/webhook', async (req) => {
    return { status: 'success', data: { url: await webhookUrlOf(ctx, account(req)) } };
  });

  app.post('/api/consultar/emisores', async (req) => {
    const body = valid(IssuersBody, req.body ?? {});
    return { status: 'success', data: await listIssuerDetails(ctx, account(req), body.identificacion) };
  });

  app.post('/api/configurar/webhook', async (req) => {
    const body = valid(WebhookBody, req.body);
    try {
      return { status: 'success', data: await pointWebhook(ctx, account(req), body.url) };
    } catch (e) {
      if (e instanceof AccountError && e.code === 'invalid_webhook_url') {
        throw new HttpError(400, ERROR_CODES.badRequest, MESSAGES.requiredFields, [{ path: 'url', message: e.message }]);
      }
      throw e;
    }
  });
}
