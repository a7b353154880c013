/**
 * What an account sees of its received comprobantes: the list (by estado, from a date, by emisor), one in full (with
 * its findings, Hacienda's state, our answer and that answer's state at Hacienda), the files (the XML received, its
 * MensajeHacienda, our MensajeReceptor and Hacienda's answer to it), and the monthly summary an IVA return needs:
 * IVA acreditable and gasto aplicable by tarifa, over the documents accepted (fully or partly) that month whose
 * MensajeReceptor Hacienda accepted (issue 26): the others are listed apart with why (`situacionIva`).
 */
import type { Finding } from '../../core/model.js';
import { dec, money, ZERO, type Decimal } from '../../core/money.js';
import type { IvaPorTarifa } from '../../core/received/figures.js';
import type { RecibidoEstado, RecibidosTable } from '../../store/schema.js';
import type { Selectable } from 'kysely';
import type { ServiceContext } from '../context.js';
import { ServiceError } from '../service-error.js';
import { formatCr } from '../../core/dates.js';
import { mensajeReceptorKey } from '../../core/received/mensaje-key.js';
import { taxpayersOf } from '../taxpayers.js';

export const RECIBIDO_ESTADOS: readonly RecibidoEstado[] = ['invalido', 'pendiente', 'aceptado', 'parcial', 'rechazado'];

/**
 * Whether a received comprobante's IVA goes into the IVA return's figures, and if not why (issue 26). Only
 * `acreditable` counts: accepted (fully or partly) by the buyer AND its MensajeReceptor accepted by Hacienda.
 *  - `sin_respuesta`: not answered yet;
 *  - `respuesta_pendiente`: answered, Hacienda has not decided on the MensajeReceptor yet;
 *  - `respuesta_rechazada`: Hacienda rejected the MensajeReceptor (it can be answered again);
 *  - `respuesta_fallida`: the MensajeReceptor ended in error (refused at reception, or given up): not taken;
 *  - `rechazado_por_comprador`: the buyer rejected it (no IVA to credit);
 *  - `invalido`: refused at import.
 */
export const SITUACIONES_IVA = ['acreditable', 'sin_respuesta', 'respuesta_pendiente', 'respuesta_rechazada', 'respuesta_fallida', 'rechazado_por_comprador', 'invalido'] as const;
export type SituacionIva = (typeof SITUACIONES_IVA)[number];

/** The situación of a row: its estado (the buyer's decision) and its MensajeReceptor's state at Hacienda. */
export function situacionIva(estado: RecibidoEstado, respuestaEstado: string | null): SituacionIva {
  if (estado === 'invalido') return 'invalido';
  if (estado === 'pendiente') return 'sin_respuesta';
  if (respuestaEstado === 'rechazado') return 'respuesta_rechazada';
  if (respuestaEstado === 'error') return 'respuesta_fallida';
  if (respuestaEstado !== 'aceptado') return 'respuesta_pendiente';
  return estado === 'rechazado' ? 'rechazado_por_comprador' : 'acreditable';
}

export interface RecibidoSummary {
  clave: string | null;
  estado: RecibidoEstado;
  tipo: string | null;
  version: string | null;
  emisor: { tipo: string | null; numero: string | null; nombre: string | null };
  receptor: { tipo: string | null; numero: string | null };
  fechaEmision: string | null;
  moneda: string | null;
  totalComprobante: string | null;
  totalImpuesto: string | null;
  haciendaEstado: string | null;
  /** Our MensajeReceptor's state at Hacienda (pendiente … aceptado | rechazado), once we answered. */
  respuestaEstado: string | null;
  /** Whether its IVA counts in the IVA return's figures (`acreditable`), or why not. */
  situacionIva: SituacionIva;
  importadoEn: string;
}

/** An earlier answer, replaced after Hacienda did not take its MensajeReceptor (issue 26). */
export interface RespuestaAnterior {
  estado: 'aceptado' | 'parcial' | 'rechazado';
  mensaje: number;
  detalle: string | null;
  condicionImpuesto: string | null;
  montoTotalImpuestoAcreditar: string | null;
  montoTotalDeGastoAplicable: string | null;
  consecutivoReceptor: string | null;
  mensajeClave: string | null;
  /** Hacienda's verdict on that MensajeReceptor, and its detail. */
  respuestaEstado: string | null;
  respuestaDetalle: string | null;
  decididoEn: string | null;
  reemplazadaEn: string;
}

export interface RecibidoDetail extends RecibidoSummary {
  sha256: string;
  hallazgos: Finding[];
  avisos: Finding[];
  iva: IvaPorTarifa[];
  decision: null | {
    mensaje: number;
    detalle: string | null;
    condicionImpuesto: string | null;
    montoTotalImpuestoAcreditar: string | null;
    montoTotalDeGastoAplicable: string | null;
    mensajeClave: string | null;
    decididoEn: string | null;
    respuestaDetalle: string | null;
  };
  /** The answers before the one in force, oldest first (each replaced after Hacienda did not take it). */
  respuestasAnteriores: RespuestaAnterior[];
}

export interface RecibidosQuery {
  estado?: RecibidoEstado;
  /** Documents issued (FechaEmision) on or after this day, YYYY-MM-DD. */
  desde?: string;
  emisor?: string;
  limit?: number;
}

type Row = Selectable<RecibidosTable> & { respuesta_estado: string | null; respuesta_clave: string | null; respuesta_detalle: string | null };

function baseQuery(ctx: ServiceContext, accountId: number) {
  return ctx.store.db
    .selectFrom('recibidos as r')
    .leftJoin('documents as d', 'd.id', 'r.mensaje_document_id')
    .selectAll('r')
    .select(['d.state as respuesta_estado', 'd.clave as respuesta_clave', 'd.detalle_mensaje as respuesta_detalle'])
    .where('r.account_id', '=', accountId);
}

function summary(r: Row): RecibidoSummary {
  return {
    clave: r.clave,
    estado: r.estado,
    tipo: r.kind,
    version: r.version,
    emisor: { tipo: r.emisor_tipo, numero: r.emisor_numero, nombre: r.emisor_nombre },
    receptor: { tipo: r.receptor_tipo, numero: r.receptor_numero },
    fechaEmision: r.fecha_emision,
    moneda: r.moneda,
    totalComprobante: r.total_comprobante,
    totalImpuesto: r.total_impuesto,
    haciendaEstado: r.hacienda_estado,
    respuestaEstado: r.respuesta_estado,
    situacionIva: situacionIva(r.estado, r.respuesta_estado),
    importadoEn: new Date(Number(r.created_at)).toISOString(),
  };
}

export async function listRecibidos(ctx: ServiceContext, accountId: number, q: RecibidosQuery = {}): Promise<RecibidoSummary[]> {
  if (q.estado !== undefined && !RECIBIDO_ESTADOS.includes(q.estado)) throw ServiceError.validation([{ path: 'estado', message: `must be one of ${RECIBIDO_ESTADOS.join(', ')}` }]);
  if (q.desde !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(q.desde)) throw ServiceError.validation([{ path: 'desde', message: 'must be a date YYYY-MM-DD' }]);
  let query = baseQuery(ctx, accountId);
  if (q.estado) query = query.where('r.estado', '=', q.estado);
  if (q.desde) query = query.where('r.fecha_emision', '>=', q.desde);
  if (q.emisor) query = query.where('r.emisor_numero', '=', q.emisor.trim());
  const rows = (await query.orderBy('r.id', 'desc').limit(Math.min(Math.max(1, q.limit ?? 1000), 10_000)).execute()) as Row[];
  return rows.map(summary);
}

/** The received comprobante with this clave (the valid import when there are several), or null. */
export async function getRecibido(ctx: ServiceContext, accountId: number, clave: string): Promise<RecibidoDetail | null> {
  const rows = (await baseQuery(ctx, accountId).where('r.clave', '=', clave).orderBy('r.id', 'desc').execute()) as Row[];
  const r = rows.find((x) => x.estado !== 'invalido') ?? rows[0];
  if (!r) return null;
  const earlier = await ctx.store.db
    .selectFrom('recibidos_respuestas as a')
    .leftJoin('documents as d', 'd.id', 'a.mensaje_document_id')
    .selectAll('a')
    .select(['d.state as respuesta_estado', 'd.clave as respuesta_clave', 'd.detalle_mensaje as respuesta_detalle'])
    .where('a.recibido_id', '=', r.id)
    .orderBy('a.id')
    .execute();
  return {
    ...summary(r),
    sha256: r.sha256,
    hallazgos: JSON.parse(r.hallazgos_json) as Finding[],
    avisos: JSON.parse(r.avisos_json) as Finding[],
    iva: JSON.parse(r.iva_json) as IvaPorTarifa[],
    decision:
      r.mensaje === null
        ? null
        : {
            mensaje: Number(r.mensaje),
            detalle: r.detalle,
            condicionImpuesto: r.condicion_impuesto,
            montoTotalImpuestoAcreditar: r.iva_acreditable,
            montoTotalDeGastoAplicable: r.gasto_aplicable,
            mensajeClave: r.respuesta_clave,
            decididoEn: r.decided_at === null ? null : new Date(Number(r.decided_at)).toISOString(),
            respuestaDetalle: r.respuesta_detalle,
          },
    respuestasAnteriores: earlier.map((a) => ({
      estado: a.estado,
      mensaje: Number(a.mensaje),
      detalle: a.detalle,
      condicionImpuesto: a.condicion_impuesto,
      montoTotalImpuestoAcreditar: a.iva_acreditable,
      montoTotalDeGastoAplicable: a.gasto_aplicable,
      consecutivoReceptor: a.respuesta_clave ? (mensajeReceptorKey(a.respuesta_clave)?.consecutivoReceptor ?? null) : null,
      mensajeClave: a.respuesta_clave,
      respuestaEstado: a.respuesta_estado,
      respuestaDetalle: a.respuesta_detalle,
      decididoEn: a.decided_at === null ? null : new Date(Number(a.decided_at)).toISOString(),
      reemplazadaEn: new Date(Number(a.replaced_at)).toISOString(),
    })),
  };
}

export const RECIBIDO_FILES = ['XML', 'RESPUESTA', 'MENSAJE_RECEPTOR', 'RESPUESTA_MENSAJE_RECEPTOR'] as const;
export type RecibidoFile = (typeof RECIBIDO_FILES)[number];

/** A file of a received comprobante: the XML as received, its MensajeHacienda, our MensajeReceptor, Hacienda's answer to it. */
export async function recibidoFile(ctx: ServiceContext, accountId: number, clave: string, type: RecibidoFile): Promise<Buffer | null> {
  const rows = (await baseQuery(ctx, accountId).where('r.clave', '=', clave).orderBy('r.id', 'desc').execute()) as Row[];
  const r = rows.find((x) => x.estado !== 'invalido') ?? rows[0];
  if (!r) return null;
  // A refused file's bytes are not kept (import.ts): no XML to give.
  if (type === 'XML') return r.xml ? Buffer.from(r.xml, 'utf8') : null;
  if (type === 'RESPUESTA') return r.hacienda_xml ? Buffer.from(r.hacienda_xml, 'utf8') : null;
  if (r.mensaje_document_id === null) return null;
  const doc = await ctx.store.db.selectFrom('documents').select(['xml', 'response_xml']).where('id', '=', r.mensaje_document_id).executeTakeFirst();
  if (!doc) return null;
  if (type === 'MENSAJE_RECEPTOR') return Buffer.from(doc.xml, 'utf8');
  return doc.response_xml ? Buffer.from(doc.response_xml, 'utf8') : null;
}

export interface MonthlyLine {
  codigoTarifaIVA: string;
  tarifa: string;
  base: string;
  impuesto: string;
  ivaAcreditable: string;
  gastoAplicable: string;
}

/** A document of the month whose IVA is not in the figures, and why (`motivo`). */
export interface ExcludedDocument {
  clave: string | null;
  tipo: string | null;
  emisor: { numero: string | null; nombre: string | null };
  fechaEmision: string | null;
  totalComprobante: string | null;
  totalImpuesto: string | null;
  /** The buyer's decision (pendiente: none yet). */
  estado: RecibidoEstado;
  /** The MensajeReceptor in force: its consecutivo and Hacienda's state of it. */
  consecutivoReceptor: string | null;
  respuestaEstado: string | null;
  /** The IVA the answer claims (not counted). */
  ivaAcreditable: string | null;
  motivo: Exclude<SituacionIva, 'acreditable' | 'invalido'>;
  /** Not answered and the term (`plazoDias`, when given) has passed: Hacienda may presume it accepted (Decreto 44739-H art. 20). */
  plazoVencido?: boolean;
}

/**
 * A document of the month answered after the term (`plazoDias` calendar days after FechaEmision, the profile's
 * setting: no term in force is published as a number, see commands/recibidos/due.ts). Its IVA is counted when
 * Hacienda accepted the MensajeReceptor (that acceptance is the evidence we have), and listed here to be checked.
 */
export interface LateAnswer {
  clave: string | null;
  emisor: { numero: string | null; nombre: string | null };
  fechaEmision: string | null;
  /** The answer's day (Costa Rica) and the days after FechaEmision's day. */
  respondidoEl: string;
  dias: number;
  situacionIva: SituacionIva;
}

/** A month's purchases; every amount in colones (a foreign-currency document at its own TipoCambio). */
export interface MonthlySummary {
  mes: string;
  /** The documents counted: accepted (fully or partly) and their MensajeReceptor accepted by Hacienda. */
  documentos: number;
  porTarifa: MonthlyLine[];
  totales: { base: string; impuesto: string; ivaAcreditable: string; gastoAplicable: string };
  /** Received that month and not answered yet; rejected by the buyer; refused at import. Not in the figures. */
  pendientes: number;
  rechazados: number;
  invalidos: number;
  /** Every document of the month (refused ones aside: `invalidos`) whose IVA is not in the figures, with why. */
  excluidos: ExcludedDocument[];
  /** With a term (`plazoDias`): the documents answered after it, counted or not. */
  fueraDePlazo: LateAnswer[];
}

/**
 * The month's IVA acreditable and gasto aplicable by tarifa (`mes` YYYY-MM, by FechaEmision), over the documents whose
 * situacionIva is `acreditable` (their MensajeReceptor accepted by Hacienda); the others are `excluidos`. Each one's
 * MontoTotalImpuestoAcreditar is spread over its tarifas in proportion to their IVA, its MontoTotalDeGastoAplicable in
 * proportion to their base + IVA; the rounding remainder goes to its largest tarifa, so the lines add up to the
 * documents' own figures. A nota de crédito counts negative. Of one issuer (`issuerId`, the buyer); without it, of
 * every row of the account: the routes and verbs ask per issuer (issuerSummaries), never that sum (issue 36).
 */
export async function monthlySummary(ctx: ServiceContext, accountId: number, mes: string, opts: { issuerId?: number; plazoDias?: number } = {}): Promise<MonthlySummary> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(mes)) throw ServiceError.validation([{ path: 'mes', message: 'must be a month YYYY-MM' }]);
  let q = baseQuery(ctx, accountId).where('r.fecha_emision', 'like', `${mes}-%`);
  if (opts.issuerId !== undefined) q = q.where('r.issuer_id', '=', opts.issuerId);
  const rows = (await q.orderBy('r.id').execute()) as Row[];
  const by = new Map<string, { tarifa: string; base: Decimal; impuesto: Decimal; iva: Decimal; gasto: Decimal }>();
  let documentos = 0;
  const count = { pendientes: 0, rechazados: 0, invalidos: 0 };
  const excluidos: ExcludedDocument[] = [];
  const fueraDePlazo: LateAnswer[] = [];
  const today = crDayNumber(ctx.now());
  for (const r of rows) {
    const emitidoMs = r.fecha_emision === null ? Number.NaN : Date.parse(r.fecha_emision);
    const emitido = Number.isNaN(emitidoMs) ? null : crDayNumber(emitidoMs);
    if (opts.plazoDias !== undefined && emitido !== null && r.decided_at !== null && crDayNumber(r.decided_at) - emitido > opts.plazoDias) {
      fueraDePlazo.push({ clave: r.clave, emisor: { numero: r.emisor_numero, nombre: r.emisor_nombre }, fechaEmision: r.fecha_emision, respondidoEl: formatCr(new Date(r.decided_at)).slice(0, 10), dias: crDayNumber(r.decided_at) - emitido, situacionIva: situacionIva(r.estado, r.respuesta_estado) });
    }
    if (r.estado === 'pendiente') count.pendientes++;
    if (r.estado === 'rechazado') count.rechazados++;
    if (r.estado === 'invalido') count.invalidos++;
    const situacion = situacionIva(r.estado, r.respuesta_estado);
    if (situacion === 'invalido') continue;
    if (situacion !== 'acreditable') {
      excluidos.push({
        clave: r.clave,
        tipo: r.kind,
        emisor: { numero: r.emisor_numero, nombre: r.emisor_nombre },
        fechaEmision: r.fecha_emision,
        totalComprobante: r.total_comprobante,
        totalImpuesto: r.total_impuesto,
        estado: r.estado,
        consecutivoReceptor: r.respuesta_clave ? (mensajeReceptorKey(r.respuesta_clave)?.consecutivoReceptor ?? null) : null,
        respuestaEstado: r.respuesta_estado,
        ivaAcreditable: r.iva_acreditable,
        motivo: situacion,
        ...(situacion === 'sin_respuesta' && opts.plazoDias !== undefined && emitido !== null ? { plazoVencido: today - emitido > opts.plazoDias } : {}),
      });
      continue;
    }
    documentos++;
    const sign = r.kind === 'NC' ? -1 : 1;
    // In colones: a foreign-currency document's figures (its lines and the MensajeReceptor's amounts, in its own
    // currency) at its TipoCambio, rounded as money (issue 29: the return is in colones).
    const rate = colonesRate(r);
    const lines = (JSON.parse(r.iva_json) as IvaPorTarifa[]).map((l) => (rate === null ? l : { ...l, base: money(dec(l.base).times(rate)), impuesto: money(dec(l.impuesto).times(rate)) }));
    const inColones = (v: string | null) => (rate === null ? dec(v ?? '0') : dec(money(dec(v ?? '0').times(rate))));
    const ivaDoc = inColones(r.iva_acreditable);
    const gastoDoc = inColones(r.gasto_aplicable);
    const impuestoTotal = lines.reduce((a, l) => a.plus(dec(l.impuesto)), ZERO);
    const pesoTotal = lines.reduce((a, l) => a.plus(dec(l.base)).plus(dec(l.impuesto)), ZERO);
    const spread = (total: Decimal, weight: (l: IvaPorTarifa) => Decimal, all: Decimal): Decimal[] => {
      if (lines.length === 0) return [];
      const parts = lines.map((l) => (all.isZero() ? ZERO : dec(money(total.times(weight(l)).dividedBy(all)))));
      const rest = total.minus(parts.reduce((a, p) => a.plus(p), ZERO));
      let big = 0;
      lines.forEach((l, i) => (weight(l).gt(weight(lines[big]!)) ? (big = i) : undefined));
      parts[big] = parts[big]!.plus(rest);
      return parts;
    };
    const ivas = spread(ivaDoc, (l) => dec(l.impuesto), impuestoTotal);
    const gastos = spread(gastoDoc, (l) => dec(l.base).plus(dec(l.impuesto)), pesoTotal);
    lines.forEach((l, i) => {
      const cur = by.get(l.codigoTarifaIVA) ?? { tarifa: l.tarifa, base: ZERO, impuesto: ZERO, iva: ZERO, gasto: ZERO };
      by.set(l.codigoTarifaIVA, {
        tarifa: cur.tarifa,
        base: cur.base.plus(dec(l.base).times(sign)),
        impuesto: cur.impuesto.plus(dec(l.impuesto).times(sign)),
        iva: cur.iva.plus(ivas[i]!.times(sign)),
        gasto: cur.gasto.plus(gastos[i]!.times(sign)),
      });
    });
  }
  const porTarifa = [...by.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([codigoTarifaIVA, v]) => ({ codigoTarifaIVA, tarifa: v.tarifa, base: money(v.base), impuesto: money(v.impuesto), ivaAcreditable: money(v.iva), gastoAplicable: money(v.gasto) }));
  const sum = (k: 'base' | 'impuesto' | 'ivaAcreditable' | 'gastoAplicable') => money(porTarifa.reduce((a, l) => a.plus(dec(l[k])), ZERO));
  return { mes, documentos, porTarifa, totales: { base: sum('base'), impuesto: sum('impuesto'), ivaAcreditable: sum('ivaAcreditable'), gastoAplicable: sum('gastoAplicable') }, ...count, excluidos, fueraDePlazo };
}

/** One issuer's month of purchases, naming it (issue 36: `fecr recibidos resumen`, POST /api/recibidos/resumen). */
export type IssuerMonthlySummary = { emisor: { identificacion: string; nombre: string } } & MonthlySummary;

/**
 * The month's purchases of the issuer `emisor` (the buyer: a validation error at `emisor` if the account has no such
 * issuer), or without it of every issuer of the account, one summary each (by identificación): never one sum across
 * cédulas (issue 36; service/taxpayers.ts). A file refused at import as addressed to none of them belongs to none.
 */
export async function issuerSummaries(ctx: ServiceContext, accountId: number, mes: string, opts: { emisor?: string; plazoDias?: number } = {}): Promise<IssuerMonthlySummary[]> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(mes)) throw ServiceError.validation([{ path: 'mes', message: 'must be a month YYYY-MM' }]);
  const out: IssuerMonthlySummary[] = [];
  for (const t of await taxpayersOf(ctx, accountId, opts.emisor)) {
    out.push({ emisor: { identificacion: t.identificacion, nombre: t.nombre }, ...(await monthlySummary(ctx, accountId, mes, { issuerId: t.id, ...(opts.plazoDias === undefined ? {} : { plazoDias: opts.plazoDias }) })) });
  }
  return out;
}

/** The TipoCambio to colones of a received document in another currency (null for CRC, or no currency given). */
function colonesRate(r: Row): Decimal | null {
  if (r.moneda === null || r.moneda === 'CRC') return null;
  const tc = r.tipo_cambio === null ? null : dec(r.tipo_cambio);
  return tc !== null && tc.isFinite() && tc.gt(0) ? tc : null;
}

/** The Costa Rica day of an instant, as a day number (for differences in whole days). */
function crDayNumber(ms: number): number {
  return Math.round(Date.parse(`${formatCr(new Date(ms)).slice(0, 10)}T00:00:00Z`) / 86_400_000);
}
