/**
 * The numbering of an issuer's documents as a use case (local mode: `fecr emisor numbers`): the next free number of
 * each kind's series, and where a series starts for an issuer coming from another system. The queries and the rule
 * (next = max(start, highest used + 1)) are store/numbering.ts; the taking of a number is submitDocument's.
 */
import type { DocumentKind } from '../core/model.js';
import { TIPO_DOC_OF_KIND } from '../core/lifecycle.js';
import { nextOf, seriesOf, setStart, type SeriesState } from '../store/numbering.js';
import type { ServiceContext } from './context.js';
import { findIssuer } from './issuers.js';
import { ServiceError } from './service-error.js';

/** The kinds an issuer numbers (its answers to suppliers, MensajeReceptor, are numbered by fecr recibidos). */
export const NUMBERED_KINDS = Object.keys(TIPO_DOC_OF_KIND) as DocumentKind[];

/** The highest number accepted by the schema (core/input/schema.ts: numeroReferencia, 10 digits). */
export const MAX_NUMERO = 9_999_999_999;

export interface NumberSeries {
  kind: string;
  sucursal: number;
  terminal: number;
  /** The highest number used (null: none). */
  last: number | null;
  /** The start set for the series (null: none). */
  start: number | null;
  /** The number the next document without numeroReferencia takes. */
  next: number;
}

export interface IssuerNumbers {
  identificacion: string;
  /** The issuer's sucursal: a body without `sucursal` is numbered in it. */
  sucursal: number;
  series: NumberSeries[];
}

/** A start refused because a number at or above it is used in the series (400). */
export class StartBelowUsedError extends ServiceError {
  constructor(
    readonly series: Omit<NumberSeries, 'next' | 'start' | 'last'>,
    readonly requested: number,
    readonly highest: number,
  ) {
    super(400, 'bad_request', `El numeroReferencia ${highest} ya fue usado en ${series.kind}, sucursal ${series.sucursal}, terminal ${series.terminal}: la numeración no puede empezar en ${requested}`, [
      { path: series.kind, message: `ya se usó el ${highest}; el inicio debe ser ${highest + 1} o mayor` },
    ]);
    this.name = 'StartBelowUsedError';
  }
}

/**
 * Every kind's series at the issuer's sucursal and terminal 1 (where a body without them is numbered), and every
 * other series with documents or a start, ordered by kind, sucursal, terminal.
 */
export async function issuerNumbers(ctx: ServiceContext, accountId: number, identificacion: string): Promise<IssuerNumbers> {
  const row = await issuerOf(ctx, accountId, identificacion);
  const sucursal = Number((JSON.parse(row.record_json) as { sucursal?: number }).sucursal ?? 1);
  const stored = (await seriesOf(ctx.store.db, row.id)).filter((s) => (NUMBERED_KINDS as string[]).includes(s.kind));
  const all: SeriesState[] = [...stored];
  for (const kind of NUMBERED_KINDS) {
    if (!all.some((s) => s.kind === kind && s.sucursal === sucursal && s.terminal === 1)) all.push({ kind, sucursal, terminal: 1, highest: null, start: null });
  }
  const order = (k: string) => NUMBERED_KINDS.indexOf(k as DocumentKind);
  all.sort((a, b) => order(a.kind) - order(b.kind) || a.sucursal - b.sucursal || a.terminal - b.terminal);
  return { identificacion: row.identificacion, sucursal, series: all.map(toSeries) };
}

export interface StartRequest {
  kind: string;
  /** Default: the issuer's sucursal. */
  sucursal?: number;
  /** Default: 1. */
  terminal?: number;
  /** The number the series' next document takes. */
  next: number;
}

/**
 * Sets where series start (each one in its own transaction, checked against the numbers used: StartBelowUsedError);
 * returns the issuer's numbers after. A start below one set before but above every number used is allowed.
 */
export async function setNumberStarts(ctx: ServiceContext, accountId: number, identificacion: string, starts: readonly StartRequest[]): Promise<IssuerNumbers> {
  const row = await issuerOf(ctx, accountId, identificacion);
  const issuerSucursal = Number((JSON.parse(row.record_json) as { sucursal?: number }).sucursal ?? 1);
  for (const s of starts) {
    if (!(NUMBERED_KINDS as string[]).includes(s.kind)) throw ServiceError.badRequest(`Tipo de documento desconocido: ${s.kind}`, [{ path: 'kind', message: `debe ser uno de ${NUMBERED_KINDS.join(', ')}` }]);
    if (!Number.isSafeInteger(s.next) || s.next < 1 || s.next > MAX_NUMERO) throw ServiceError.badRequest(`Número fuera de rango: ${s.next}`, [{ path: s.kind, message: `debe ser un entero de 1 a ${MAX_NUMERO}` }]);
    const series = { kind: s.kind, sucursal: s.sucursal ?? issuerSucursal, terminal: s.terminal ?? 1 };
    const r = await setStart(ctx.store.db, { issuerId: row.id, ...series }, s.next, ctx.now());
    if (r) throw new StartBelowUsedError(series, s.next, r.refusedBy);
    ctx.logger.info({ accountId, identificacion: row.identificacion, ...series, next: s.next }, 'numbering start set');
  }
  return issuerNumbers(ctx, accountId, identificacion);
}

async function issuerOf(ctx: ServiceContext, accountId: number, identificacion: string) {
  const row = await findIssuer(ctx, accountId, identificacion);
  if (!row) throw ServiceError.notFound(`El emisor ${identificacion} no está registrado en esta cuenta`);
  return row;
}

function toSeries(s: SeriesState): NumberSeries {
  return { kind: s.kind, sucursal: s.sucursal, terminal: s.terminal, last: s.highest, start: s.start, next: nextOf(s) };
}
