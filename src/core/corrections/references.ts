/**
 * What one comprobante says about another through its InformacionReferencia (issue 30): the codes fecr writes when
 * it annuls, replaces or collects a comprobante, and the balance left on a comprobante. Pure.
 *
 * Codes: ANEXOS v4.4 Nota 9 (CodigoReferencia) and Nota 10 (TipoDocIR), in their April-2026 revision as the 2026
 * XSDs spell them (schemas/xsd/2026/v4.4/*.xsd, CodigoReferenciaType / TipoDocReferenciaType; core/codes.ts).
 */
import type { DocumentKind } from '../model.js';
import { Decimal, dec, money, ZERO } from '../money.js';

/** Nota 9, 01: "Anula documento de referencia". */
export const CODIGO_ANULA = '01';
/** Nota 9, 13 (2026): "Anula documento de referencia por error material": a full annulment too. */
export const CODIGO_ANULA_ERROR_MATERIAL = '13';
/** Nota 9, 16 (2026): "Sustituye comprobante electrónico rechazado". */
export const CODIGO_SUSTITUYE_RECHAZADO = '16';
/** Nota 9, 17 (2026, REP only): "Pago a comprobante electrónico". */
export const CODIGO_PAGO = '17';
/** Nota 10, 10: "Comprobante electrónico rechazado por el Ministerio de Hacienda". */
export const TIPO_DOC_IR_RECHAZADO = '10';

/**
 * The TipoDocIR that names a comprobante of this kind (Nota 10): 01 FE, 02 ND, 03 NC, 04 TE, 19 FEE and 20 REP (the
 * 2026 additions). A factura de compra is named by 17/18 only from its own notes (not built here): undefined.
 */
export const TIPO_DOC_IR_OF_KIND: Partial<Record<DocumentKind, string>> = { FE: '01', ND: '02', NC: '03', TE: '04', FEE: '19', REP: '20' };

/**
 * What an NC made here annuls in full (issue 30): a sale of this issuer (FE, TE) or an ND it issued. An NC is undone
 * by an ND, not by another NC; a REP records a payment (Nota 9's 17); a factura de compra's notes name it with
 * TipoDocIR 17, written by its buyer; an FEE's receptor is foreign, which fecr's NC does not take (kind-rules.ts).
 */
export const ANNULLABLE_KINDS: ReadonlySet<DocumentKind> = new Set(['FE', 'TE', 'ND']);

/** The sales whose balance `fecr status` shows: what an NC, ND or REP may reduce or add to. */
export const SALE_KINDS: ReadonlySet<DocumentKind> = new Set(['FE', 'TE', 'FEE', 'ND']);

/**
 * What a REP pays (ANEXOS Nota 5 and its footnotes; LineaDetalle of the REP: "el pago de un comprobante a crédito
 * para las condiciones ya establecidas para los códigos 08 y 10 de la nota 5"): the REP's CondicionVenta for the
 * sale's (09 pays 08, servicios prestados al Estado a crédito; 11 pays 10, venta a crédito en IVA hasta 90 días).
 */
export const REP_CONDICION_FOR_SALE: Readonly<Record<string, string>> = { '08': '09', '10': '11' };

/** A document that references another, as the store keeps it. */
export interface ReferenceLink {
  clave: string;
  kind: string;
  state: string;
  codigo: string | null;
  /** What it counts against the referenced comprobante (decimal text), or null when it cannot say (several references). */
  monto: string | null;
}

/** States in which a document still counts (sent, or on its way): everything but Hacienda's rejection or error. */
const DEAD_STATES = new Set(['rechazado', 'error']);

/**
 * The balance left on a comprobante: its TotalComprobante − NCs + NDs − REPs that reference it (fecr's choice: an ND
 * adds to what is owed). `decided` counts the accepted documents only; `committed` also those still on their way
 * (what a new annulment or payment must not exceed).
 *
 * With the comprobante's own `state` (issue 36): one Hacienda rejected (or that ended in error) is no comprobante
 * ("Comprobante electrónico rechazado por el Ministerio de Hacienda", Nota 10 code 10: what a replacement names), so
 * nothing is owed on it: 0, whatever references it (its replacement, code 16, carries the sale). One annulled in full
 * (an NC with Nota 9's code 01 or 13, "Anula documento de referencia") owes nothing once the annulment is accepted
 * (`decided`), or on its way (`committed`), whatever that NC's own amount.
 */
export function balanceOf(totalComprobante: string, links: readonly ReferenceLink[], state?: string): { decided: string; committed: string } {
  if (state !== undefined && DEAD_STATES.has(state)) return { decided: money(ZERO), committed: money(ZERO) };
  const sumOf = (pick: (l: ReferenceLink) => boolean): Decimal =>
    links.filter(pick).reduce((acc, l) => acc.plus(signOf(l.kind).times(dec(l.monto ?? '0'))), ZERO);
  const total = dec(totalComprobante);
  const annulment = links.find(isStandingAnnulment);
  return {
    decided: annulment?.state === 'aceptado' ? money(ZERO) : money(total.plus(sumOf((l) => l.state === 'aceptado'))),
    committed: annulment ? money(ZERO) : money(total.plus(sumOf((l) => !DEAD_STATES.has(l.state)))),
  };
}

/**
 * What settled a comprobante, if anything still stands (issue 36): the replacement of a rejected one (code 16) and
 * the NC that annuls it in full (code 01 or 13), each its clave and state; the latest standing one of each.
 */
export function settledBy(links: readonly ReferenceLink[]): { reemplazadoPor?: { clave: string; estado: string }; anuladoPor?: { clave: string; estado: string } } {
  const last = (pick: (l: ReferenceLink) => boolean) => links.filter(pick).at(-1);
  const r = last(isStandingReplacement);
  const a = last(isStandingAnnulment);
  return { ...(r ? { reemplazadoPor: { clave: r.clave, estado: r.state } } : {}), ...(a ? { anuladoPor: { clave: a.clave, estado: a.state } } : {}) };
}

function signOf(kind: string): Decimal {
  if (kind === 'ND') return dec(1);
  if (kind === 'NC' || kind === 'REP') return dec(-1);
  return ZERO;
}

/** Whether a link annuls its comprobante in full and still stands (an NC with code 01 or 13, not rejected). */
export function isStandingAnnulment(l: ReferenceLink): boolean {
  return l.kind === 'NC' && (l.codigo === CODIGO_ANULA || l.codigo === CODIGO_ANULA_ERROR_MATERIAL) && !DEAD_STATES.has(l.state);
}

/** Whether a link replaces a rejected comprobante and still stands. */
export function isStandingReplacement(l: ReferenceLink): boolean {
  return l.codigo === CODIGO_SUSTITUYE_RECHAZADO && !DEAD_STATES.has(l.state);
}
