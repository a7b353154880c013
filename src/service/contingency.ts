/**
 * Contingency (issue 30): the provisional (paper) comprobantes of an outage, recorded with their own numbering and
 * replaced later by electronic documents that reference them (core/contingency.ts: CodigoReferencia 05, TipoDocIR
 * 08, situación 2); what is still owed (those not replaced and accepted yet, every document signed that Hacienda has
 * not received yet whatever its situación, and the documents signed in situación 2 or 3 that Hacienda has not
 * accepted); and whether Hacienda's reception and IdP answer now (the `contingencia: auto`
 * setting signs in situación 3 when it does not).
 */
import { parseIsoDateTime } from '../core/dates.js';
import { CODIGO_SUSTITUYE_PROVISIONAL, SITUACION_CONTINGENCIA, TIPO_DOC_IR_CONTINGENCIA, parseProvisional, type Provisional } from '../core/contingency.js';
import { dec } from '../core/money.js';
import { parseComprobanteXml } from '../core/xml/parse-comprobante.js';
import type { Finding } from '../core/model.js';
import {
  insertProvisional,
  markProvisionalReplaced,
  owedDocuments,
  provisionalById,
  provisionalByNumero,
  provisionalsWithReplacement,
  type ProvisionalRow,
} from '../store/contingency.js';
import type { DocumentState } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { probeIdp, probeReception } from './doctor.js';
import { findIssuer, isUniqueViolation } from './issuers.js';
import { ServiceError } from './service-error.js';

/** A provisional comprobante as the client sees it. */
export interface ProvisionalView extends Provisional {
  id: number;
  /** ISO 8601 instant it was recorded. */
  recordedAt: string;
  /** The clave of the electronic document that replaces it, and that document's state (null: not replaced yet). */
  reemplazo: { clave: string; estado: DocumentState | null } | null;
}

/**
 * A document owed to Hacienda: signed but not received by it yet (`pendiente`, or held: `credenciales_invalidas`), in
 * any situación; or signed in situación 2 or 3 and not accepted.
 */
export interface ContingencyDocument {
  clave: string;
  kind: string;
  estado: DocumentState;
  situacion: string;
  numeroReferencia: number;
  totalComprobante: string;
  moneda: string;
  /** ISO 8601 instant it was signed. */
  createdAt: string;
}

export interface ContingencyOwed {
  provisionales: ProvisionalView[];
  documentos: ContingencyDocument[];
}

const viewOf = (r: ProvisionalRow & { replacement_state?: DocumentState | null }): ProvisionalView => ({
  id: r.id,
  numero: r.numero,
  fechaEmision: r.fecha_emision,
  emisor: r.emisor,
  receptor: r.receptor,
  totalComprobante: r.total_comprobante,
  codigoMoneda: r.moneda,
  kind: r.kind as Provisional['kind'],
  recordedAt: new Date(r.recorded_at).toISOString(),
  reemplazo: r.replaced_by === null ? null : { clave: r.replaced_by, estado: r.replacement_state ?? null },
});

const sameRecord = (r: ProvisionalRow, p: Provisional) =>
  r.fecha_emision === p.fechaEmision && r.kind === p.kind && r.total_comprobante === p.totalComprobante && r.moneda === p.codigoMoneda && r.receptor === p.receptor;

/**
 * Records provisional comprobantes (one object or a list). Every record is checked before any is stored: findings at
 * their paths (`[1].fechaEmision`), an issuer the account does not have, a number recorded before with other data.
 * The same record again is no error (it is returned, `created` false).
 */
export async function recordProvisionals(ctx: ServiceContext, accountId: number, input: unknown): Promise<{ provisional: ProvisionalView; created: boolean }[]> {
  const list = Array.isArray(input) ? input : [input];
  if (list.length === 0) throw ServiceError.validation([{ path: '', message: 'must hold at least one provisional comprobante' }]);
  const findings: Finding[] = [];
  const parsed: Provisional[] = [];
  for (const [i, item] of list.entries()) {
    const path = Array.isArray(input) ? `[${i}]` : '';
    const r = parseProvisional(item, path);
    if (!r.ok) {
      findings.push(...r.findings);
      continue;
    }
    const at = (p: string) => (path ? `${path}.${p}` : p);
    if (!(await findIssuer(ctx, accountId, r.value.emisor))) findings.push({ path: at('emisor'), message: `${r.value.emisor} is not a registered issuer of this account` });
    const earlier = await provisionalByNumero(ctx.store.db, accountId, r.value.emisor, r.value.numero);
    if (earlier && !sameRecord(earlier, r.value)) findings.push({ path: at('numero'), message: `${r.value.numero} is recorded already with other data (provisional ${earlier.id})` });
    if (parsed.some((p) => p.emisor === r.value.emisor && p.numero === r.value.numero)) findings.push({ path: at('numero'), message: `${r.value.numero} is twice in this input` });
    parsed.push(r.value);
  }
  if (findings.length) throw ServiceError.validation(findings);
  const out: { provisional: ProvisionalView; created: boolean }[] = [];
  for (const p of parsed) {
    const row = await insertProvisional(ctx.store.db, {
      account_id: accountId,
      emisor: p.emisor,
      numero: p.numero,
      kind: p.kind,
      fecha_emision: p.fechaEmision,
      fecha_ms: parseIsoDateTime(p.fechaEmision)!.getTime(),
      receptor: p.receptor,
      total_comprobante: p.totalComprobante,
      moneda: p.codigoMoneda,
      recorded_at: ctx.now(),
    });
    const stored = row ?? (await provisionalByNumero(ctx.store.db, accountId, p.emisor, p.numero));
    if (!stored) throw new Error(`provisional ${p.numero} of ${p.emisor} was neither stored nor found`);
    out.push({ provisional: viewOf(stored), created: row !== undefined });
  }
  return out;
}

/** One provisional comprobante of the account, with its replacement's state. */
export async function getProvisional(ctx: ServiceContext, accountId: number, id: number): Promise<ProvisionalView> {
  const row = await provisionalById(ctx.store.db, accountId, id);
  if (!row) throw ServiceError.notFound(`no provisional comprobante ${id} (fecr contingency status lists them)`);
  const state = row.replaced_by === null ? null : ((await documentState(ctx, accountId, row.replaced_by)) ?? null);
  return viewOf({ ...row, replacement_state: state });
}

/**
 * Marks a provisional comprobante replaced by the account's document `clave` (sent by the caller with the reference
 * core/contingency.ts replacementBody adds). Only a document that is its replacement (issue 37, point 6): of the
 * provisional's issuer and kind, signed in situación 2 ("comprobantes electrónicos que sustituyen al comprobante
 * físico emitido por contingencia", ANEXOS p.67, NOTES §2.2) and referencing it in its InformacionReferencia with
 * Codigo 05 "Sustituye comprobante provisional por contingencia" and TipoDocIR 08 "Comprobante emitido en contingencia"
 * whose Numero is the provisional's number (ANEXOS p.56 d) and Notas 9 and 10, p.72-73); one rejected by Hacienda
 * replaces nothing. A document replaces one provisional only (the unique index of migration 0022). Refused when it is
 * replaced already by another document that Hacienda has not rejected.
 *
 * A different total is a warning (`avisos`, and the log), not a refusal: neither the ANEXOS nor NOTES say that the
 * replacement's TotalComprobante must be the provisional's (a paper comprobante's figures may have been wrong), as
 * `fecr contingency replace` warns before sending.
 */
export async function markReplaced(ctx: ServiceContext, accountId: number, id: number, clave: string): Promise<ProvisionalView & { avisos?: string[] }> {
  const p = await getProvisional(ctx, accountId, id);
  const doc = await ctx.store.db
    .selectFrom('documents')
    .select(['state', 'kind', 'xml', 'emisor_numero', 'total_comprobante', 'moneda'])
    .where('account_id', '=', accountId)
    .where('clave', '=', clave)
    .executeTakeFirst();
  if (!doc) throw ServiceError.notFound(`no document with clave ${clave}`);
  const notIt = (why: string) => ServiceError.badRequest(`${clave} does not replace provisional ${id}: ${why}`, [{ path: 'clave', message: why }]);
  if (doc.kind !== p.kind) throw notIt(`it is a ${doc.kind}, the provisional comprobante a ${p.kind}`);
  if (doc.emisor_numero !== null && doc.emisor_numero !== p.emisor) throw notIt(`its issuer is ${doc.emisor_numero}, the provisional comprobante's ${p.emisor}`);
  if (clave.charAt(41) !== SITUACION_CONTINGENCIA) throw notIt(`it is signed in situación ${clave.charAt(41)}, not 2 (contingencia, ANEXOS p.67)`);
  if (!parseComprobanteXml(doc.xml).informacionReferencia.some((r) => r.codigo === CODIGO_SUSTITUYE_PROVISIONAL && r.tipoDocIR === TIPO_DOC_IR_CONTINGENCIA && r.numero?.trim() === p.numero)) {
    throw notIt(`it has no InformacionReferencia with Codigo 05, TipoDocIR 08 and Numero ${p.numero}`);
  }
  if (doc.state === 'rechazado' || doc.state === 'error') throw notIt(`Hacienda answered ${doc.state}: it replaces nothing`);
  if (p.reemplazo && p.reemplazo.clave !== clave && !replaceable(p)) {
    throw ServiceError.badRequest(`provisional ${id} is replaced already by ${p.reemplazo.clave} (${p.reemplazo.estado})`, [{ path: 'id', message: `replaced by ${p.reemplazo.clave}` }]);
  }
  const other = await ctx.store.db.selectFrom('contingency_provisionals').select('id').where('account_id', '=', accountId).where('replaced_by', '=', clave).where('id', '!=', id).executeTakeFirst();
  const once = (otherId: number | string) => notIt(`it replaces provisional ${otherId} already`);
  if (other) throw once(other.id);
  try {
    await markProvisionalReplaced(ctx.store.db, id, clave, ctx.now());
  } catch (e) {
    // A concurrent marking of the same document for another provisional won (migration 0022's index).
    if (!isUniqueViolation(e)) throw e;
    const won = await ctx.store.db.selectFrom('contingency_provisionals').select('id').where('account_id', '=', accountId).where('replaced_by', '=', clave).executeTakeFirst();
    throw once(won?.id ?? '?');
  }
  const avisos: string[] = [];
  if (!dec(doc.total_comprobante).eq(dec(p.totalComprobante)) || doc.moneda !== p.codigoMoneda) {
    avisos.push(`el totalComprobante del documento (${doc.total_comprobante} ${doc.moneda}) no es el del comprobante provisional (${p.totalComprobante} ${p.codigoMoneda})`);
    ctx.logger.warn({ accountId, provisional: id, clave, total: doc.total_comprobante, provisionalTotal: p.totalComprobante }, 'replacement total differs from the provisional comprobante');
  }
  const view = await getProvisional(ctx, accountId, id);
  return avisos.length ? { ...view, avisos } : view;
}

/** A provisional comprobante may be replaced (again): never replaced, or its replacement was refused by Hacienda. */
export function replaceable(p: ProvisionalView): boolean {
  return p.reemplazo === null || p.reemplazo.estado === 'rechazado' || p.reemplazo.estado === 'error';
}

/**
 * What is still owed to Hacienda: provisional comprobantes not replaced by an accepted document, documents signed but
 * not received by Hacienda yet (whatever the contingency setting: it only decides the situación digit), and
 * contingency documents not accepted.
 */
export async function contingencyOwed(ctx: ServiceContext, accountId: number): Promise<ContingencyOwed> {
  const provisionales = (await provisionalsWithReplacement(ctx.store.db, accountId)).map(viewOf).filter((p) => p.reemplazo?.estado !== 'aceptado');
  const replacing = new Set(provisionales.map((p) => p.reemplazo?.clave).filter((c): c is string => c !== undefined));
  const documentos = (await owedDocuments(ctx.store.db, accountId))
    // A provisional's replacement is listed with it, not twice.
    .filter((d) => !replacing.has(d.clave))
    .map((d) => ({
      clave: d.clave,
      kind: d.kind,
      estado: d.state,
      situacion: d.clave.charAt(41),
      numeroReferencia: d.numero_referencia,
      totalComprobante: d.total_comprobante,
      moneda: d.moneda,
      createdAt: new Date(d.created_at).toISOString(),
    }));
  return { provisionales, documentos };
}

/**
 * Whether Hacienda can take a document now: its reception API (service/doctor.ts probeReception) and its IdP's token
 * endpoint each answer one GET without credentials, at once, within `timeoutMs` (any status below 500: DNS, TCP and
 * TLS work and the service is up; a send needs both). What the `contingencia: auto` setting asks before signing. The
 * first cause in words when not.
 */
export async function haciendaReachable(ctx: ServiceContext, timeoutMs: number): Promise<{ ok: true } | { ok: false; cause: string }> {
  const [reception, idp] = await Promise.all([probeReception(ctx, { timeoutMs }), probeIdp(ctx, { timeoutMs })]);
  if (!reception.ok) return { ok: false, cause: reception.cause };
  if (!idp.ok) return { ok: false, cause: `the IdP: ${idp.cause}` };
  return { ok: true };
}

async function documentState(ctx: ServiceContext, accountId: number, clave: string): Promise<DocumentState | undefined> {
  const r = await ctx.store.db.selectFrom('documents').select('state').where('account_id', '=', accountId).where('clave', '=', clave).executeTakeFirst();
  return r?.state;
}
