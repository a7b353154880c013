/**
 * `fecr report iva` (issue 29): one issuer's month for the IVA return (issue 36: without an issuer named, one report
 * per issuer of the account, `ivaReports`; never one sum across cédulas). Sales from the issuer's comprobantes dated in
 * the month (FechaEmision, Costa Rica time) that Hacienda accepted, summed by core/report/iva.ts from their signed
 * XML; purchases (of that issuer as the buyer when one is named; in colones at each document's TipoCambio) from the
 * received documents' monthly summary (service/recibidos/queries.ts: accepted and their
 * MensajeReceptor accepted by Hacienda, one concept in one place); the difference; the documents left out, with why.
 */
import { D150_NOTA, salesIvaFigures, type SalesFigures } from '../core/report/iva.js';
import { dec, money } from '../core/money.js';
import { parseComprobanteXml, type ParsedComprobante } from '../core/xml/parse-comprobante.js';
import type { ServiceContext } from './context.js';
import { monthlySummary, type MonthlySummary } from './recibidos/queries.js';
import { ServiceError } from './service-error.js';
import { taxpayersOf, type Taxpayer } from './taxpayers.js';

export const SALE_KINDS = ['FE', 'ND', 'NC', 'TE', 'FEE', 'FEC', 'REP'] as const;

/** One of the issuer's documents of the month not in the sales figures, and why (its state at Hacienda). */
export interface LeftOutSale {
  clave: string;
  tipo: string;
  fechaEmision: string;
  estado: string;
  motivo: string;
}

export interface IvaReport {
  mes: string;
  /** Whose figures these are: one issuer of the account (issue 36: never a sum across cédulas). */
  emisor: { identificacion: string; nombre: string };
  moneda: 'CRC';
  ventas: SalesFigures;
  compras: MonthlySummary;
  /** ivaDebito + ivaAutoliquidado − compras.totales.ivaAcreditable: positive to pay, negative a credit. */
  diferencia: { ivaDebito: string; ivaAutoliquidado: string; ivaAcreditable: string; saldo: string; resultado: 'por_pagar' | 'a_favor' | 'cero' };
  excluidos: LeftOutSale[];
  d150: null;
  nota: string;
}

const MOTIVO: Record<string, string> = {
  rechazado: 'rejected by Hacienda',
  error: 'ended in error (not accepted by Hacienda)',
  credenciales_invalidas: "held: the issuer's Hacienda credentials were refused",
};

/** One issuer's month (`emisor`, its identificación; a validation error at `emisor` when the account has no such issuer). */
export async function ivaReport(ctx: ServiceContext, accountId: number, mes: string, emisor: string, opts: { plazoDias?: number } = {}): Promise<IvaReport> {
  checkMes(mes);
  const [taxpayer] = await taxpayersOf(ctx, accountId, emisor);
  return reportOf(ctx, accountId, mes, taxpayer!, opts);
}

/** The month of every issuer of the account, one report each (by identificación), never one sum across them (issue 36). */
export async function ivaReports(ctx: ServiceContext, accountId: number, mes: string, opts: { plazoDias?: number } = {}): Promise<IvaReport[]> {
  checkMes(mes);
  const out: IvaReport[] = [];
  for (const t of await taxpayersOf(ctx, accountId)) out.push(await reportOf(ctx, accountId, mes, t, opts));
  return out;
}

function checkMes(mes: string): void {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(mes)) throw ServiceError.validation([{ path: 'mes', message: 'must be a month YYYY-MM' }]);
}

async function reportOf(ctx: ServiceContext, accountId: number, mes: string, taxpayer: Taxpayer, opts: { plazoDias?: number }): Promise<IvaReport> {
  const query = ctx.store.db
    .selectFrom('documents as d')
    .select(['d.clave', 'd.kind', 'd.state', 'd.xml', 'd.fecha_emision'])
    .where('d.account_id', '=', accountId)
    .where('d.issuer_id', '=', taxpayer.id)
    .where('d.kind', 'in', [...SALE_KINDS])
    .where('d.fecha_emision', 'like', `${mes}-%`);
  const rows = await query.orderBy('d.fecha_emision').orderBy('d.id').execute();
  const parsed: ParsedComprobante[] = [];
  const excluidos: LeftOutSale[] = [];
  for (const r of rows) {
    if (r.state !== 'aceptado') {
      excluidos.push({ clave: r.clave, tipo: r.kind, fechaEmision: r.fecha_emision, estado: r.state, motivo: MOTIVO[r.state] ?? 'pending: Hacienda has not accepted it yet' });
      continue;
    }
    parsed.push(parseComprobanteXml(r.xml));
  }
  const ventas = salesIvaFigures(parsed);
  const compras = await monthlySummary(ctx, accountId, mes, { issuerId: taxpayer.id, ...(opts.plazoDias === undefined ? {} : { plazoDias: opts.plazoDias }) });
  const saldo = dec(ventas.ivaDebito).plus(dec(ventas.ivaAutoliquidado)).minus(dec(compras.totales.ivaAcreditable));
  return {
    mes,
    emisor: { identificacion: taxpayer.identificacion, nombre: taxpayer.nombre },
    moneda: 'CRC',
    ventas,
    compras,
    diferencia: {
      ivaDebito: ventas.ivaDebito,
      ivaAutoliquidado: ventas.ivaAutoliquidado,
      ivaAcreditable: compras.totales.ivaAcreditable,
      saldo: money(saldo),
      resultado: saldo.isZero() ? 'cero' : saldo.isPositive() ? 'por_pagar' : 'a_favor',
    },
    excluidos,
    d150: null,
    nota: D150_NOTA,
  };
}
