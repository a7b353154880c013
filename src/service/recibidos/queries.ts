/**
 * What an account sees of its received comprobantes: the list (by estado, from a date, by emisor), one in full (with
 * its findings, Hacienda's state, our answer and that answer's state at Hacienda), the files (the XML received, its
 * MensajeHacienda, our MensajeReceptor and Hacienda's answer to it), and the monthly summary an IVA return needs:
 * IVA acreditable and gasto aplicable by tarifa, over the documents accepted (fully or partly) that month.
 */
import type { Finding } from '../../core/model.js';
import { dec, money, ZERO, type Decimal } from '../../core/money.js';
import type { IvaPorTarifa } from '../../core/received/figures.js';
import type { RecibidoEstado, RecibidosTable } from '../../store/schema.js';
import type { Selectable } from 'kysely';
import type { ServiceContext } from '../context.js';
import { ServiceError } from '../service-error.js';

export const RECIBIDO_ESTADOS: readonly RecibidoEstado[] = ['invalido', 'pendiente', 'aceptado', 'parcial', 'rechazado'];

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
  importadoEn: string;
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

export interface MonthlySummary {
  mes: string;
  documentos: number;
  porTarifa: MonthlyLine[];
  totales: { base: string; impuesto: string; ivaAcreditable: string; gastoAplicable: string };
  /** Received that month and not answered yet; rejected ones; refused at import. Not in the figures. */
  pendientes: number;
  rechazados: number;
  invalidos: number;
}

/**
 * The month's IVA acreditable and gasto aplicable by tarifa (`mes` YYYY-MM, by FechaEmision). Each accepted document's
 * MontoTotalImpuestoAcreditar is spread over its tarifas in proportion to their IVA, its MontoTotalDeGastoAplicable in
 * proportion to their base + IVA; the rounding remainder goes to its largest tarifa, so the lines add up to the
 * documents' own figures. A nota de crédito counts negative.
 */
export async function monthlySummary(ctx: ServiceContext, accountId: number, mes: string): Promise<MonthlySummary> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(mes)) throw ServiceError.validation([{ path: 'mes', message: 'must be a month YYYY-MM' }]);
  const rows = await ctx.store.db.selectFrom('recibidos').selectAll().where('account_id', '=', accountId).where('fecha_emision', 'like', `${mes}-%`).execute();
  const by = new Map<string, { tarifa: string; base: Decimal; impuesto: Decimal; iva: Decimal; gasto: Decimal }>();
  let documentos = 0;
  const count = { pendientes: 0, rechazados: 0, invalidos: 0 };
  for (const r of rows) {
    if (r.estado === 'pendiente') count.pendientes++;
    if (r.estado === 'rechazado') count.rechazados++;
    if (r.estado === 'invalido') count.invalidos++;
    if (r.estado !== 'aceptado' && r.estado !== 'parcial') continue;
    documentos++;
    const sign = r.kind === 'NC' ? -1 : 1;
    const lines = JSON.parse(r.iva_json) as IvaPorTarifa[];
    const ivaDoc = dec(r.iva_acreditable ?? '0');
    const gastoDoc = dec(r.gasto_aplicable ?? '0');
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
  return { mes, documentos, porTarifa, totales: { base: sum('base'), impuesto: sum('impuesto'), ivaAcreditable: sum('ivaAcreditable'), gastoAplicable: sum('gastoAplicable') }, ...count };
}
