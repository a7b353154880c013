/**
 * fecr's own routes for what follows a sale (issue 30), additive like api-reportes.ts: same bearer authentication (the
 * app's onRequest hook covers every /api/ path), same tenancy (an account sees only its own documents), the spec's
 * error bodies. Each of the first three makes a document's body from the stored original (service/corrections.ts) and
 * submits it as POST /api/enviar/items does, under the series' next free number (numeroReferencia is fecr's to take:
 * the caller cannot know it); the answer is its clave and that number.
 *
 * - `POST /api/documentos/anular {clave, razon?}`: the NC that annuls an accepted comprobante in full (code 01).
 * - `POST /api/documentos/sustituir {clave, documento, razon?}`: `documento` replacing a rejected comprobante (code 16,
 *   TipoDocIR 10).
 * - `POST /api/documentos/pago {clave, monto, fecha?, medioPago?}`: the REP of a payment received against a credit sale.
 * - `POST /api/documentos/referencias {clave}` → the documents that reference it and, for a sale, its balance; 404 for
 *   an unknown clave.
 * A refusal (not accepted, not rejected, already annulled, an overpayment, …) is a 400 with one sentence.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { codeTable } from '../core/code-table.js';
import type { ServiceContext } from '../service/context.js';
import { annulmentBodyFor, documentLinks, paymentBodyFor, replacementBodyFor } from '../service/corrections.js';
import { submitDocument } from '../service/documents.js';
import { ServiceError } from '../service/service-error.js';
import { run, valid } from './request.js';

const Clave = z.string('is required').trim().regex(/^[A-Za-z0-9]{50}$/, 'must be a clave of 50 letters or digits').describe('The clave of the original comprobante');
const Razon = z.string('must be a string').trim().min(3, 'must have at least 3 characters').max(180, 'must have at most 180 characters').optional().describe('The Razon of the InformacionReferencia');

export const AnularBody = z.object({ clave: Clave, razon: Razon });
export const SustituirBody = z.object({ clave: Clave, documento: z.record(z.string(), z.unknown(), 'must be a document body (an object)').describe('The corrected document body (the spec\'s "Electronic document")'), razon: Razon });
export const PagoBody = z.object({
  clave: Clave,
  monto: z.string('is required').trim().describe('The amount received, IVA included, in the sale\'s currency (decimal text)'),
  fecha: z.string('must be a string').trim().optional().describe("The payment's date, YYYY-MM-DD or an ISO 8601 date-time (the REP's FechaEmision; default now)"),
  medioPago: z.string('must be a string').trim().optional().describe('TipoMedioPago (Nota 6), default 04'),
});
export const ReferenciasBody = z.object({ clave: Clave });

/** For /openapi.json (src/server/openapi.ts): the request bodies and the `data` of the answers. */
export const DOCUMENTOS_SCHEMAS: Record<string, z.ZodType> = codeTable({
  AnularBody,
  SustituirBody,
  PagoBody,
  ReferenciasBody,
  DocumentoDerivadoResponse: z.object({ clave: z.string(), numeroReferencia: z.number().int() }),
  ReferenciasResponse: z
    .object({
      clave: z.string(),
      referenciadoPor: z.array(
        z.object({ clave: z.string(), tipo: z.string(), estado: z.string(), codigoReferencia: z.string().nullable(), monto: z.string().nullable(), fechaEmision: z.string() }),
      ),
      saldo: z.string().optional().describe('A sale: TotalComprobante − accepted NCs + accepted NDs − accepted REPs; 0 when Hacienda rejected it or it is annulled'),
      saldoPendiente: z.string().optional().describe('The same, counting the documents Hacienda has not decided on yet'),
      moneda: z.string().optional(),
      reemplazadoPor: z.object({ clave: z.string(), estado: z.string() }).optional().describe('The replacement (CodigoReferencia 16) of this rejected comprobante; a rejected comprobante owes nothing (saldo 0)'),
      anuladoPor: z.object({ clave: z.string(), estado: z.string() }).optional().describe('The nota de crédito that annuls it in full (CodigoReferencia 01 or 13); saldo 0 once it is accepted'),
    })
    .loose(),
});

const ext = { errors: [400, 404], extension: true };
export const DOCUMENTOS_ENDPOINTS = [
  { path: '/api/documentos/anular' as const, summary: 'Signs and sends the nota de crédito that annuls an accepted comprobante in full (CodigoReferencia 01), under the next free number (fecr extension, issue 30)', request: 'AnularBody', response: 'DocumentoDerivadoResponse', ...ext },
  { path: '/api/documentos/sustituir' as const, summary: 'Signs and sends the corrected document replacing one Hacienda rejected (CodigoReferencia 16, TipoDocIR 10), under the next free number (fecr extension, issue 30)', request: 'SustituirBody', response: 'DocumentoDerivadoResponse', ...ext },
  { path: '/api/documentos/pago' as const, summary: 'Signs and sends the recibo electrónico de pago of a payment received against an accepted credit sale (condicionVenta 08 or 10); an overpayment is refused (fecr extension, issue 30)', request: 'PagoBody', response: 'DocumentoDerivadoResponse', ...ext },
  { path: '/api/documentos/referencias' as const, summary: "The account's documents that reference a comprobante (notes, replacements, payments) and a sale's balance (fecr extension, issue 30)", request: 'ReferenciasBody', response: 'ReferenciasResponse', ...ext },
];

export const DOCUMENTOS_PATHS = DOCUMENTOS_ENDPOINTS.map((e) => e.path);

export function registerDocumentosEndpoints(app: FastifyInstance, ctx: ServiceContext, account: (req: FastifyRequest) => number): void {
  const submit = async (accountId: number, body: unknown) => {
    const r = await submitDocument(ctx, accountId, body, { assignNumber: true });
    // The consecutivo's last 10 digits (the clave's 32nd to 41st characters) are the number.
    return { status: 'success', data: { clave: r.clave, numeroReferencia: Number(r.clave.slice(31, 41)) } };
  };
  app.post('/api/documentos/anular', async (req) => {
    const b = valid(AnularBody, req.body ?? {});
    const id = account(req);
    return run(async () => submit(id, await annulmentBodyFor(ctx, id, b.clave, b.razon !== undefined ? { razon: b.razon } : {})));
  });
  app.post('/api/documentos/sustituir', async (req) => {
    const b = valid(SustituirBody, req.body ?? {});
    const id = account(req);
    return run(async () => submit(id, await replacementBodyFor(ctx, id, b.clave, b.documento, b.razon !== undefined ? { razon: b.razon } : {})));
  });
  app.post('/api/documentos/pago', async (req) => {
    const b = valid(PagoBody, req.body ?? {});
    const id = account(req);
    const p = { monto: b.monto, ...(b.fecha !== undefined ? { fecha: b.fecha } : {}), ...(b.medioPago !== undefined ? { medioPago: b.medioPago } : {}) };
    return run(async () => submit(id, await paymentBodyFor(ctx, id, b.clave, p)));
  });
  app.post('/api/documentos/referencias', async (req) => {
    const b = valid(ReferenciasBody, req.body ?? {});
    const links = await run(() => documentLinks(ctx, account(req), b.clave));
    if (!links) return run(() => Promise.reject(ServiceError.notFound(`no document with clave ${b.clave}`)));
    return { status: 'success', data: links };
  });
}
