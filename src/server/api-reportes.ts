/**
 * fecr's own report routes (issue 29), additive like api-extra.ts and api-recibidos.ts: same bearer authentication
 * (the app's onRequest hook covers every /api/ path), same tenancy (an account sees only its own documents and its own
 * issuers), the spec's error bodies.
 *
 * - `POST /api/reportes/iva {mes: YYYY-MM, emisor?: identificación, plazoDias?: days}` → `{status: 'success', data: IvaReport}`: one
 *   issuer's month of IVA figures (service/report-iva.ts); without `emisor`, `data` is an array of them, one per issuer
 *   of the account by identificación (issue 36: never one sum across cédulas); 400 with details at `mes` or `emisor`
 *   (not an issuer of the account).
 * - `POST /api/consultar/tipo-cambio {fecha: YYYY-MM-DD, moneda?: USD|EUR}` → `{status: 'success', data: {moneda,
 *   fecha, venta, fuente, cached}}`: the rate tipoCambio "auto" takes (service/exchange-rate.ts, cached per day); 503
 *   when Hacienda's indicator API cannot give it, with why (`fecr tipo-cambio` on a remote profile).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { codeTable } from '../core/code-table.js';
import { isCalendarDay } from '../core/dates.js';
import type { ServiceContext } from '../service/context.js';
import { ivaReport, ivaReports, type IvaReport as IvaReportData } from '../service/report-iva.js';
import { AUTO_CURRENCIES, tipoCambioOrError } from '../service/exchange-rate.js';
import { run, valid } from './request.js';

export const REPORTES_PATHS = ['/api/reportes/iva', '/api/consultar/tipo-cambio'] as const;

export const IvaReportBody = z.object({
  mes: z.string('is required').trim().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month YYYY-MM').describe('The month, YYYY-MM (FechaEmision in Costa Rica time)'),
  emisor: z.string('must be a string').trim().regex(/^\d{9,12}$/, 'must be an identificación of 9 to 12 digits').optional().describe("This issuer's sales and purchases (its identificación); without it, data is an array: one report per issuer of the account"),
  plazoDias: z.number('must be a whole number of days').int('must be a whole number of days').min(1).max(999).optional().describe('The term to answer a received document, in calendar days after FechaEmision: purchases answered later are listed in compras.fueraDePlazo, unanswered ones past it flagged plazoVencido'),
});

export const TipoCambioBody = z.object({
  fecha: z
    .string('is required')
    .trim()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
    .refine(isCalendarDay, 'must be a date YYYY-MM-DD')
    .describe('The Costa Rica day'),
  moneda: z.enum(AUTO_CURRENCIES, `must be one of ${AUTO_CURRENCIES.join(', ')}`).default('USD').describe('USD (default) or EUR (today only: Hacienda publishes no history of the euro)'),
});

const Bucket = z.object({ base: z.string(), impuesto: z.string(), documentos: z.number() }).loose();

const IvaReport = z
  .object({
    mes: z.string(),
    emisor: z.object({ identificacion: z.string(), nombre: z.string() }).describe('Whose figures these are'),
    moneda: z.literal('CRC'),
    ventas: z.object({ gravado: z.array(Bucket), exento: Bucket, noSujeto: Bucket, exonerado: Bucket, exportaciones: Bucket, ivaDebito: z.string(), pagosRecibidos: Bucket, autoliquidado: z.array(Bucket), ivaAutoliquidado: z.string() }).loose(),
    compras: z.object({ mes: z.string(), documentos: z.number(), porTarifa: z.array(z.object({}).loose()), totales: z.object({}).loose() }).loose(),
    diferencia: z.object({ ivaDebito: z.string(), ivaAutoliquidado: z.string(), ivaAcreditable: z.string(), saldo: z.string(), resultado: z.enum(['por_pagar', 'a_favor', 'cero']) }),
    excluidos: z.array(z.object({ clave: z.string(), tipo: z.string(), estado: z.string(), motivo: z.string() }).loose()),
    d150: z.null(),
    nota: z.string(),
  })
  .loose();

/** For /openapi.json (src/server/openapi.ts): the request body and the `data` of the answer. */
export const REPORTES_SCHEMAS: Record<string, z.ZodType> = codeTable({
  IvaReportBody,
  TipoCambioBody,
  TipoCambioResponse: z.object({ moneda: z.string(), fecha: z.string(), venta: z.string(), fuente: z.string(), cached: z.boolean() }),
  IvaReportResponse: z.union([IvaReport, z.array(IvaReport).describe('Without emisor: one report per issuer of the account, by identificación (never one sum across cédulas)')]),
});

export const REPORTES_ENDPOINTS = [
  {
    path: '/api/reportes/iva' as const,
    summary:
      "One month's IVA figures of one issuer in colones (without emisor: one report per issuer, an array): sales by tarifa (gravado, exento, no sujeto, exonerado, exportaciones), the FEC's self-assessed IVA, the purchases' IVA acreditable (received documents whose MensajeReceptor Hacienda accepted), the difference, and the documents left out with why (fecr extension, not in SERVICE-SPEC)",
    request: 'IvaReportBody',
    response: 'IvaReportResponse',
    errors: [400],
    extension: true,
  },
  {
    path: '/api/consultar/tipo-cambio' as const,
    summary: "The BCCR reference selling rate of a day from Hacienda's indicator API (what tipoCambio \"auto\" takes), its source and whether it was cached (fecr extension, not in SERVICE-SPEC)",
    request: 'TipoCambioBody',
    response: 'TipoCambioResponse',
    errors: [400, 503],
    extension: true,
  },
];

export function registerReportesEndpoints(app: FastifyInstance, ctx: ServiceContext, account: (req: FastifyRequest) => number): void {
  app.post('/api/reportes/iva', async (req) => {
    const b = valid(IvaReportBody, req.body ?? {});
    const opts = b.plazoDias === undefined ? {} : { plazoDias: b.plazoDias };
    // Issue 36: without `emisor`, one report per issuer of the account (an array), never one sum across cédulas.
    return { status: 'success', data: await run<IvaReportData | IvaReportData[]>(() => (b.emisor === undefined ? ivaReports(ctx, account(req), b.mes, opts) : ivaReport(ctx, account(req), b.mes, b.emisor, opts))) };
  });
  app.post('/api/consultar/tipo-cambio', async (req) => {
    const b = valid(TipoCambioBody, req.body ?? {});
    return { status: 'success', data: await run(() => tipoCambioOrError(ctx, b.moneda, b.fecha)) };
  });
}
