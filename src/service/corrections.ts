/**
 * Issue 30: what a business does after a sale — annul it (an NC), replace a comprobante Hacienda rejected, record a
 * payment against a credit sale (a REP) — and what references each comprobante (`fecr status`). Each use case checks
 * the stored original and returns the body of the new document; the caller submits it as any body
 * (service/documents.ts submitDocument, the same path as `fecr send`), so numbering, signing, the queue and the
 * references' rows are the ones every document gets. Refusals are 400s with one sentence (ServiceError).
 */
import { isClave } from '../core/clave.js';
import { CorrectionRefused, annulmentBody } from '../core/corrections/annul.js';
import { paymentBody } from '../core/corrections/payment.js';
import { replacementBody } from '../core/corrections/replace.js';
import { ANNULLABLE_KINDS, CODIGO_SUSTITUYE_RECHAZADO, SALE_KINDS, balanceOf, isStandingAnnulment, isStandingReplacement, settledBy, type ReferenceLink } from '../core/corrections/references.js';
import { formatCr, parseIsoDateTime } from '../core/dates.js';
import { dec, money } from '../core/money.js';
import { parseComprobanteXml, type ParsedComprobante } from '../core/xml/parse-comprobante.js';
import { referencingDocuments } from '../store/document-references.js';
import type { DocumentRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { getDocument } from './documents.js';
import { ServiceError } from './service-error.js';

/** The wire shapes (src/api/contract.ts). */
export type { DocumentLinks, ReferenciaDe } from '../api/contract.js';
import type { DocumentLinks } from '../api/contract.js';

export async function documentLinks(ctx: ServiceContext, accountId: number, clave: string): Promise<DocumentLinks | null> {
  const row = isClave(clave) ? await getDocument(ctx, accountId, clave) : null;
  if (!row) return null;
  const links = await linksOf(ctx, accountId, clave);
  const refs = (await referencingDocuments(ctx.store.db, accountId, clave)).map((r) => ({
    clave: r.clave,
    tipo: r.kind,
    estado: r.state,
    codigoReferencia: r.codigo,
    // A replacement stored before its amount was kept (issue 36): its own TotalComprobante (document-references.ts).
    monto: r.monto ?? (r.codigo === CODIGO_SUSTITUYE_RECHAZADO ? r.total_comprobante : null),
    fechaEmision: r.fecha_emision,
  }));
  // What replaced or annulled it (issue 36), for every kind.
  const settled = settledBy(links);
  if (!SALE_KINDS.has(row.kind as never)) return { clave, referenciadoPor: refs, ...settled };
  const b = balanceOf(row.total_comprobante, links, row.state);
  return { clave, referenciadoPor: refs, saldo: b.decided, saldoPendiente: b.committed, moneda: row.moneda, ...settled };
}

/** The NC body that annuls an accepted comprobante in full. */
export async function annulmentBodyFor(ctx: ServiceContext, accountId: number, clave: string, opts: { razon?: string } = {}): Promise<Record<string, unknown>> {
  const { row, parsed } = await original(ctx, accountId, clave);
  if (row.state !== 'aceptado') throw refused(`${clave} is ${row.state}: only a comprobante Hacienda accepted is annulled with a nota de crédito`);
  const links = await linksOf(ctx, accountId, clave);
  const annulment = links.find(isStandingAnnulment);
  if (annulment) throw refused(`${clave} is already annulled by ${annulment.clave} (${annulment.state})`);
  // A partial NC already credits part of it: an annulment copies the whole comprobante, which would credit that part twice.
  const partial = links.find((l) => l.kind === 'NC' && l.state !== 'rechazado' && l.state !== 'error');
  if (partial && ANNULLABLE_KINDS.has(parsed.kind)) {
    const left = balanceOf(row.total_comprobante, links.filter((l) => l.kind !== 'REP')).committed;
    throw refused(`${clave} is already credited in part by ${partial.clave} (${partial.state}); what is left (${left} ${row.moneda}) needs a nota de crédito of its own (fecr send)`);
  }
  return derived(() => annulmentBody(parsed, { fechaEmision: nowCr(ctx), ...(opts.razon !== undefined ? { razon: opts.razon } : {}) }));
}

/** The corrected body, referencing the rejected comprobante it replaces (code 16, TipoDocIR 10). */
export async function replacementBodyFor(ctx: ServiceContext, accountId: number, clave: string, body: unknown, opts: { razon?: string } = {}): Promise<unknown> {
  const row = await stored(ctx, accountId, clave);
  if (row.state !== 'rechazado') throw refused(`${clave} is ${row.state}: only a comprobante Hacienda rejected is replaced (CodigoReferencia 16)`);
  const replacement = (await linksOf(ctx, accountId, clave)).find(isStandingReplacement);
  if (replacement) throw refused(`${clave} is already replaced by ${replacement.clave} (${replacement.state})`);
  return replacementBody(body, { clave, fechaEmision: row.fecha_emision, numero: row.numero_referencia }, opts.razon);
}

export interface PaymentRequest {
  /** What was received, IVA included, in the sale's currency. */
  monto: string;
  /** YYYY-MM-DD or an ISO 8601 date-time: the REP's FechaEmision (default now). */
  fecha?: string;
  /** TipoMedioPago (Nota 6), default 04. */
  medioPago?: string;
}

/** The REP body of a payment received against an accepted credit sale; an overpayment is refused. */
export async function paymentBodyFor(ctx: ServiceContext, accountId: number, clave: string, p: PaymentRequest): Promise<Record<string, unknown>> {
  if (!/^\d{1,13}(\.\d{1,5})?$/.test(p.monto.trim()) || dec(p.monto.trim()).lte(0)) {
    throw ServiceError.validation([{ path: 'monto', message: 'must be an amount greater than 0 with at most 5 decimals, e.g. "56500.00"' }]);
  }
  if (p.medioPago !== undefined && !/^\d{2}$/.test(p.medioPago)) throw ServiceError.validation([{ path: 'medioPago', message: 'must be a two-digit TipoMedioPago code (Nota 6), e.g. "04"' }]);
  const fechaEmision = p.fecha === undefined ? nowCr(ctx) : fechaOf(ctx, p.fecha);
  const { row, parsed } = await original(ctx, accountId, clave);
  if (row.state !== 'aceptado') throw refused(`${clave} is ${row.state}: a payment is recorded against a comprobante Hacienda accepted`);
  const links = await linksOf(ctx, accountId, clave);
  const left = balanceOf(row.total_comprobante, links).committed;
  if (dec(left).lte(0)) throw refused(`${clave} is paid in full (balance ${left} ${row.moneda})`);
  const monto = money(dec(p.monto.trim()));
  if (dec(monto).gt(dec(left))) throw refused(`a payment of ${monto} ${row.moneda} exceeds the balance left on ${clave} (${left} ${row.moneda})`);
  const cuota = links.filter((l) => l.kind === 'REP' && l.state !== 'rechazado' && l.state !== 'error').length + 1;
  return derived(() => paymentBody(parsed, { monto, fechaEmision, cuota, ...(p.medioPago !== undefined ? { medioPago: p.medioPago } : {}) }));
}

async function stored(ctx: ServiceContext, accountId: number, clave: string): Promise<DocumentRow> {
  const row = isClave(clave) ? await getDocument(ctx, accountId, clave) : null;
  if (!row) throw ServiceError.notFound(`no document with clave ${clave}`);
  return row;
}

async function original(ctx: ServiceContext, accountId: number, clave: string): Promise<{ row: DocumentRow; parsed: ParsedComprobante }> {
  const row = await stored(ctx, accountId, clave);
  return { row, parsed: parseComprobanteXml(row.xml) };
}

async function linksOf(ctx: ServiceContext, accountId: number, clave: string): Promise<ReferenceLink[]> {
  return (await referencingDocuments(ctx.store.db, accountId, clave)).map((r) => ({ clave: r.clave, kind: r.kind, state: r.state, codigo: r.codigo, monto: r.monto }));
}

function derived<T>(make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (e instanceof CorrectionRefused) throw refused(e.message);
    throw e;
  }
}

function refused(message: string): ServiceError {
  return ServiceError.badRequest(message);
}

function nowCr(ctx: ServiceContext): string {
  return formatCr(new Date(ctx.now()));
}

/** A payment's date: a date-time as given, or a day at the current Costa Rica time of day. */
function fechaOf(ctx: ServiceContext, text: string): string {
  const t = text.trim();
  const withTime = /^\d{4}-\d{2}-\d{2}$/.test(t) ? `${t}T${nowCr(ctx).slice(11)}` : t;
  const d = parseIsoDateTime(withTime);
  if (!d) throw ServiceError.validation([{ path: 'fecha', message: 'must be a date YYYY-MM-DD or an ISO 8601 date-time' }]);
  return formatCr(d);
}
