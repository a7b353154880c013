/**
 * The archive on a hosted service (issue 29), additive like api-reportes.ts: same bearer authentication, tenancy
 * (an account archives only its own documents and issuers) and error bodies.
 *
 * - `POST /api/archivo/exportar {desde, hasta, emisor?, pdf?}` → 200 `application/gzip`: the period's archive as
 *   `fecr archive export` writes it (service/archive.ts: sales and purchases, Hacienda's answers, MensajeReceptor, PDFs
 *   when `pdf` is true, `manifest.jsonl` last), streamed as it is made, so memory does not grow with the period. The
 *   request is checked before the first byte (400 with details at `desde`, `hasta` or `emisor`); a failure after
 *   that cuts the connection, so a client never takes a truncated archive for a whole one (and `fecr archive verify`
 *   would name what is missing). PDFs are rendered on the API's threads (service/heavy-work.ts), and the request
 *   takes one of the account's heavy turns (account-gate.ts) until the archive is sent.
 */
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { codeTable } from '../core/code-table.js';
import { isCalendarDay } from '../core/dates.js';
import { checkArchiveRequest, exportArchive, type SaleRow } from '../service/archive.js';
import type { PdfRow } from '../service/heavy-work-types.js';
import type { ServiceContext } from '../service/context.js';
import type { AccountGate } from './account-gate.js';
import { run, valid } from './request.js';

export const ARCHIVO_PATHS = ['/api/archivo/exportar'] as const;

const Day = z
  .string('is required')
  .trim()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine(isCalendarDay, 'must be a date YYYY-MM-DD');

export const ArchivoBody = z.object({
  desde: Day.describe('The first day (FechaEmision, Costa Rica time), YYYY-MM-DD'),
  hasta: Day.describe('The last day, YYYY-MM-DD'),
  emisor: z.string('must be a string').trim().regex(/^\d{9,12}$/, 'must be an identificación of 9 to 12 digits').optional().describe("Only this issuer's documents"),
  pdf: z.boolean('must be true or false').default(false).describe('Also each sale\'s PDF (slower: rendered for the archive)'),
});

export const ARCHIVO_SCHEMAS: Record<string, z.ZodType> = codeTable({ ArchivoBody });

export const ARCHIVO_ENDPOINTS = [
  {
    path: '/api/archivo/exportar' as const,
    summary:
      "A period's archive as a .tar.gz (application/gzip), streamed: every comprobante, Hacienda's answer, PDF (pdf: true) and MensajeReceptor, sales and purchases, with manifest.jsonl (sha256 of each file) last; check it with fecr archive verify (fecr extension, not in SERVICE-SPEC)",
    request: 'ArchivoBody',
    response: 'application/gzip',
    binary: true,
    errors: [400, 429],
    extension: true,
  },
];

export function registerArchivoEndpoints(app: FastifyInstance, ctx: ServiceContext, account: (req: FastifyRequest) => number, gate?: AccountGate): void {
  const onRequest = gate ? async (req: FastifyRequest, reply: FastifyReply) => gate.hold(account(req), reply.raw) : undefined;
  app.post('/api/archivo/exportar', { ...(onRequest ? { onRequest } : {}) }, async (req, reply) => {
    const b = valid(ArchivoBody, req.body ?? {});
    const id = account(req);
    const opts = { since: b.desde, until: b.hasta, ...(b.emisor !== undefined ? { emisor: b.emisor } : {}), pdf: b.pdf };
    await run(() => checkArchiveRequest(ctx, id, opts));
    const out = new PassThrough();
    const renderPdf = b.pdf ? (row: SaleRow) => pdfOf(ctx, row as unknown as PdfRow) : undefined;
    exportArchive(ctx, id, out, { ...opts, ...(renderPdf ? { renderPdf } : {}) }).catch((e: unknown) => {
      req.log.error({ err: e }, 'archive export failed after it started: connection cut');
      out.destroy(e instanceof Error ? e : new Error(String(e)));
    });
    reply.raw.on('close', () => out.destroy()); // the client left: stop reading the store
    return reply
      .type('application/gzip')
      .header('content-disposition', `attachment; filename="fecr-archivo-${b.desde}-${b.hasta}.tar.gz"`)
      .header('cache-control', 'no-store')
      .send(out);
  });
}

async function pdfOf(ctx: ServiceContext, row: PdfRow): Promise<Buffer> {
  if (ctx.heavyWork) return ctx.heavyWork.documentPdf(row);
  return (await import('../service/pdf.js')).renderPdf(ctx, row);
}
