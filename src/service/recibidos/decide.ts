/**
 * The buyer's answer (issue 16): a v4.4 MensajeReceptor, Mensaje 1 aceptado (consecutivo tipo 05), 2 aceptado
 * parcialmente (06) or 3 rechazado (07), with its own consecutivo per tipo and issuer, signed with the buyer's .p12
 * and stored as a `documents` row of kind MR05/MR06/MR07 with its `send` job: the worker sends it (POST recepción
 * with `consecutivoReceptor`) and follows it to aceptado/rechazado like any document. Its clave column is Hacienda's
 * key for it, `<clave>-<consecutivoReceptor>` (NOTES §4.3). The decision, the amounts and the webhook event
 * `recibido.decidido` are stored in the same transaction.
 *
 * Defaults a buyer expects: aceptar = all the IVA creditable (CondicionImpuesto 01, MontoTotalImpuestoAcreditar =
 * the document's TotalImpuesto); gasto aplicable = TotalComprobante − the IVA credited. A partial acceptance needs the
 * IVA it credits (default: all of it, condición 02); a rejection credits nothing.
 *
 * A document is accepted (fully or partly) only if its signing certificate chains to a trusted CA (issue 25.2): a row
 * imported as `invalido` is refused with the findings it was refused for, and a `pendiente` one is checked again
 * against today's trust anchors (service/recibidos/trust.ts) before anything is signed.
 *
 * One answer in force per received document (issue 25): a second one, the same or another, is refused and nothing is
 * sent (Hacienda counts every MensajeReceptor it accepts), unless Hacienda did not take the first (issue 26,
 * `mayAnswerAgain`: its MensajeReceptor ended `rechazado` or `error`). Then the new answer gets a MensajeReceptor of its
 * own consecutivo (its type's next number) and replaces the one in force, which is kept in `recibidos_respuestas`
 * (migration 0012) with its MensajeReceptor row. The decision is stored only if the row still holds the answer read
 * (none, or that rejected one), so two answers at once cannot both be sent.
 *
 * Hacienda must know the comprobante (issue 26): a MensajeReceptor about a clave it has no record of is rejected. A
 * document Hacienda had not accepted when it was imported is asked about again (hacienda-state.ts) and the answer is
 * refused while Hacienda still has no record of it (or has not accepted it), unless `forzar`.
 */
import { buildConsecutivo } from '../../core/clave.js';
import { formatCr } from '../../core/dates.js';
import type { Finding } from '../../core/model.js';
import { dec, isDecimalString, money } from '../../core/money.js';
import { signCanonical } from '../../core/sign/xades.js';
import { buildMensajeReceptorXml } from '../../core/xml/mensaje.js';
import { enqueueJob } from '../../store/jobs.js';
import type { RecibidosTable } from '../../store/schema.js';
import type { Selectable } from 'kysely';
import type { ServiceContext } from '../context.js';
import { isUniqueViolation, issuerForSigning } from '../issuers.js';
import { ServiceError } from '../service-error.js';
import { queueRecibidoEvent } from './events.js';
import { mensajeReceptorKey } from '../../core/received/mensaje-key.js';
import { analyzeReceived, CHAIN_FINDING_PATH } from '../../core/received/check.js';
import { recibidosTrust } from './trust.js';
import { buyerReceptionClient, notAnswerableYet } from './hacienda-state.js';
import type { Issuer } from '../../store/schema.js';

export { mensajeReceptorKey } from '../../core/received/mensaje-key.js';

export type Decision = 'aceptar' | 'parcial' | 'rechazar';
export const DECISIONS: readonly Decision[] = ['aceptar', 'parcial', 'rechazar'];

export interface DecisionInput {
  decision: Decision;
  detalle?: string;
  /** Nota 18: 01 crédito IVA, 02 crédito parcial, 03 bienes de capital, 04 gasto corriente sin crédito, 05 proporcionalidad. */
  condicionImpuesto?: string;
  ivaAcreditable?: string;
  gastoAplicable?: string;
  /** Answer even though Hacienda has no record of the comprobante (or has not accepted it): `--force`, API `forzar`. */
  forzar?: boolean;
}

export interface DecisionResult {
  clave: string;
  estado: 'aceptado' | 'parcial' | 'rechazado';
  mensaje: 1 | 2 | 3;
  consecutivoReceptor: string;
  /** The MensajeReceptor's key at Hacienda: `<clave>-<consecutivoReceptor>`. */
  mensajeClave: string;
  montoTotalImpuestoAcreditar: string | null;
  montoTotalDeGastoAplicable: string | null;
  /** True: a MensajeReceptor was queued (a second answer is refused, not returned; the field stays for clients). */
  creado: boolean;
  documentId: number;
}

const MENSAJE: Record<Decision, { mensaje: 1 | 2 | 3; tipo: string; estado: DecisionResult['estado']; detalle: string }> = {
  aceptar: { mensaje: 1, tipo: '05', estado: 'aceptado', detalle: 'Comprobante aceptado' },
  parcial: { mensaje: 2, tipo: '06', estado: 'parcial', detalle: 'Comprobante aceptado parcialmente' },
  rechazar: { mensaje: 3, tipo: '07', estado: 'rechazado', detalle: 'Comprobante rechazado' },
};

/** The kind of the MensajeReceptor's documents row (numbered per issuer and tipo, like any document). */
export function mensajeReceptorKind(tipo: string): string {
  return `MR${tipo}`;
}

function validate(input: DecisionInput, row: Selectable<RecibidosTable>): { detalle?: string; condicion?: string; iva?: string; gasto?: string } {
  const findings: Finding[] = [];
  const d = input.decision;
  const detalle = input.detalle?.trim() || (d === 'aceptar' ? undefined : MENSAJE[d].detalle);
  if (detalle !== undefined && (detalle.length < 5 || detalle.length > 160)) findings.push({ path: 'detalle', message: 'must be 5 to 160 characters' });
  const condicion = input.condicionImpuesto ?? (d === 'aceptar' ? '01' : d === 'parcial' ? '02' : undefined);
  if (condicion !== undefined && !/^0[1-5]$/.test(condicion)) findings.push({ path: 'condicionImpuesto', message: 'must be 01, 02, 03, 04 or 05 (Nota 18)' });
  for (const [path, v] of [['ivaAcreditable', input.ivaAcreditable], ['gastoAplicable', input.gastoAplicable]] as const) {
    if (v !== undefined && (!isDecimalString(v) || dec(v).isNegative())) findings.push({ path, message: 'must be a decimal amount ≥ 0' });
  }
  if (d === 'rechazar' && (input.ivaAcreditable !== undefined || input.gastoAplicable !== undefined)) {
    findings.push({ path: 'ivaAcreditable', message: 'a rejection credits no IVA and applies no expense' });
  }
  if (findings.length > 0) throw ServiceError.validation(findings);
  if (d === 'rechazar') return { ...(detalle ? { detalle } : {}) };
  const total = dec(row.total_comprobante ?? '0');
  const impuesto = dec(row.total_impuesto ?? '0');
  const iva = input.ivaAcreditable !== undefined ? dec(input.ivaAcreditable) : condicion === '04' ? dec(0) : impuesto;
  if (iva.gt(impuesto)) throw ServiceError.validation([{ path: 'ivaAcreditable', message: `must not exceed the document's TotalImpuesto ${money(impuesto)}` }]);
  const gasto = input.gastoAplicable !== undefined ? dec(input.gastoAplicable) : total.minus(iva);
  if (gasto.gt(total)) throw ServiceError.validation([{ path: 'gastoAplicable', message: `must not exceed the document's TotalComprobante ${money(total)}` }]);
  return { ...(detalle ? { detalle } : {}), ...(condicion ? { condicion } : {}), iva: money(iva), gasto: money(gasto) };
}

/**
 * Whether a received document already answered may be answered again: only when Hacienda did not take our
 * MensajeReceptor, i.e. it ended `rechazado` (Hacienda's verdict) or `error` (refused at reception, or given up: never
 * accepted). A pending one (sent, not decided) and an accepted one are final. The update in decideRecibido then
 * replaces the decision only if the row still holds `previous.documentId`.
 */
export function mayAnswerAgain(previous: { estado: string; documentId: number | null; respuestaEstado: string | null }): boolean {
  return previous.documentId !== null && (previous.respuestaEstado === 'rechazado' || previous.respuestaEstado === 'error');
}

/** Answers a received comprobante of the account. 404 when unknown; 400 when invalid, or already answered. */
export async function decideRecibido(ctx: ServiceContext, accountId: number, clave: string, input: DecisionInput): Promise<DecisionResult> {
  if (!DECISIONS.includes(input.decision)) throw ServiceError.validation([{ path: 'decision', message: 'must be aceptar, parcial or rechazar' }]);
  const row = await ctx.store.db
    .selectFrom('recibidos')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('clave', '=', clave)
    .where('estado', '!=', 'invalido')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!row) {
    const refused = await ctx.store.db.selectFrom('recibidos').select(['id', 'hallazgos_json']).where('account_id', '=', accountId).where('clave', '=', clave).executeTakeFirst();
    if (refused) {
      // With the findings it was refused for (an untrusted signing certificate, a digest that does not match, …).
      const why = JSON.parse(refused.hallazgos_json) as Finding[];
      throw ServiceError.badRequest(`El comprobante recibido ${clave} fue rechazado al importarlo; no se puede responder`, [{ path: 'clave', message: 'imported as invalid' }, ...why]);
    }
    throw ServiceError.notFound(`No hay un comprobante recibido con la clave ${clave}`);
  }
  const m = MENSAJE[input.decision];
  if (row.estado !== 'pendiente') {
    const prev = await previousAnswer(ctx, row);
    if (!mayAnswerAgain(prev)) throw alreadyAnswered(clave, prev);
  }
  if (input.decision !== 'rechazar') untrustedRefusal(ctx, row);
  const v = validate(input, row);
  const issuerRow = row.issuer_id === null ? undefined : await ctx.store.db.selectFrom('issuers').selectAll().where('id', '=', row.issuer_id).executeTakeFirst();
  if (!issuerRow) throw ServiceError.badRequest(`El receptor del comprobante ${clave} ya no es un emisor de la cuenta`);
  if (!input.forzar) await refuseUnknownAtHacienda(ctx, row, issuerRow);
  const issuer = issuerForSigning(ctx, issuerRow);
  const kind = mensajeReceptorKind(m.tipo);
  const sucursal = Number(issuer.record.sucursal) || 1;

  for (let attempt = 1; ; attempt++) {
    const now = ctx.now();
    const last = await ctx.store.db.selectFrom('documents').select((eb) => eb.fn.max('numero_referencia').as('n')).where('issuer_id', '=', issuerRow.id).where('kind', '=', kind).executeTakeFirst();
    const numero = Number(last?.n ?? 0) + 1;
    const consecutivo = buildConsecutivo({ sucursal, terminal: 1, tipoComprobante: m.tipo, numero });
    const fecha = formatCr(new Date(now));
    const unsigned = buildMensajeReceptorXml({
      clave,
      numeroCedulaEmisor: row.emisor_numero ?? '',
      fechaEmisionDoc: fecha,
      mensaje: m.mensaje,
      ...(v.detalle ? { detalleMensaje: v.detalle } : {}),
      ...(row.total_impuesto !== null ? { montoTotalImpuesto: row.total_impuesto } : {}),
      ...(v.condicion && v.condicion !== '05' && issuer.record.codigoActividad ? { codigoActividad: issuer.record.codigoActividad } : {}),
      ...(v.condicion ? { condicionImpuesto: v.condicion } : {}),
      ...(v.iva !== undefined ? { montoTotalImpuestoAcreditar: v.iva } : {}),
      ...(v.gasto !== undefined ? { montoTotalDeGastoAplicable: v.gasto } : {}),
      totalFactura: row.total_comprobante ?? '0',
      numeroCedulaReceptor: issuer.record.identificacion,
      numeroConsecutivoReceptor: consecutivo,
    });
    const xml = signCanonical(unsigned, issuer.creds, { signingTime: new Date(now), newId: () => ctx.randomBytes(8).toString('hex') });
    const key = `${clave}-${consecutivo}`;
    try {
      const documentId = await ctx.store.db.transaction().execute(async (trx) => {
        const doc = await trx
          .insertInto('documents')
          .values({
            account_id: accountId,
            issuer_id: issuerRow.id,
            clave: key,
            kind,
            sucursal,
            terminal: 1,
            numero_referencia: numero,
            body_hash: `recibido:${row.id}:${input.decision}`,
            state: 'pendiente',
            xml,
            response_xml: null,
            mensaje: null,
            detalle_mensaje: null,
            fecha_emision: fecha,
            total_comprobante: row.total_comprobante ?? '0',
            moneda: row.moneda ?? 'CRC',
            receptor_nombre: row.emisor_nombre,
            // The POST's emisor is the comprobante's issuer; its receptor, the buyer (NOTES §4.3).
            emisor_tipo: row.emisor_tipo,
            emisor_numero: row.emisor_numero,
            receptor_tipo: issuer.record.tipoIdentificacion,
            receptor_numero: issuer.record.identificacion,
            // A MensajeReceptor is mailed to nobody (the receptor's mail after aceptado is for comprobantes).
            correos: '[]',
            created_at: now,
            updated_at: now,
            decided_at: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await enqueueJob(trx, { type: 'send', document_id: doc.id, run_at: now }, now);
        // The answer replaced (its MensajeReceptor not taken by Hacienda) goes to the history, with the row's update.
        if (row.mensaje !== null && row.estado !== 'pendiente' && row.estado !== 'invalido') {
          await trx
            .insertInto('recibidos_respuestas')
            .values({
              recibido_id: row.id,
              account_id: accountId,
              estado: row.estado,
              mensaje: Number(row.mensaje),
              detalle: row.detalle,
              condicion_impuesto: row.condicion_impuesto,
              iva_acreditable: row.iva_acreditable,
              gasto_aplicable: row.gasto_aplicable,
              mensaje_document_id: row.mensaje_document_id,
              decided_at: row.decided_at,
              replaced_at: now,
            })
            .execute();
        }
        const upd = await trx
          .updateTable('recibidos')
          .set({
            estado: m.estado,
            mensaje: m.mensaje,
            detalle: v.detalle ?? null,
            condicion_impuesto: v.condicion ?? null,
            iva_acreditable: v.iva ?? null,
            gasto_aplicable: v.gasto ?? null,
            mensaje_document_id: doc.id,
            decided_at: now,
            updated_at: now,
          })
          .where('id', '=', row.id)
          // Only over the answer read (none, or the one mayAnswerAgain let go): one answer at a time.
          .where('estado', '=', row.estado)
          .where('mensaje_document_id', row.mensaje_document_id === null ? 'is' : '=', row.mensaje_document_id)
          .executeTakeFirst();
        if (Number(upd.numUpdatedRows) !== 1) throw new ConcurrentDecision();
        await queueRecibidoEvent(trx, now, {
          accountId,
          recibidoId: row.id,
          folioId: clave,
          event: { type: 'recibido.decidido', decision: m.estado, consecutivoReceptor: consecutivo, montoTotalImpuestoAcreditar: v.iva ?? null, montoTotalDeGastoAplicable: v.gasto ?? null },
        });
        return Number(doc.id);
      });
      ctx.logger.info({ accountId, clave, decision: m.estado, consecutivo }, 'MensajeReceptor queued');
      return { clave, estado: m.estado, mensaje: m.mensaje, consecutivoReceptor: consecutivo, mensajeClave: key, montoTotalImpuestoAcreditar: v.iva ?? null, montoTotalDeGastoAplicable: v.gasto ?? null, creado: true, documentId };
    } catch (e) {
      if (e instanceof ConcurrentDecision) {
        const now2 = await ctx.store.db.selectFrom('recibidos').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
        throw alreadyAnswered(clave, await previousAnswer(ctx, now2));
      }
      // Another answer of this issuer took the number: draw the next one.
      if (!isUniqueViolation(e) || attempt >= 5) throw e;
    }
  }
}

class ConcurrentDecision extends Error {}

/**
 * Its IVA is credited only if its signing certificate chains to a CA trusted now (issue 25.2): a row imported before
 * that check (or before the operator removed a CA) is checked again, as of its import, and refused with the finding.
 */
function untrustedRefusal(ctx: ServiceContext, row: Selectable<RecibidosTable>): void {
  if (!row.xml) return;
  const a = analyzeReceived(Buffer.from(row.xml, 'utf8'), new Date(Number(row.created_at)), recibidosTrust(ctx));
  const chain = a.findings.filter((f) => f.path === CHAIN_FINDING_PATH);
  if (chain.length === 0) return;
  throw ServiceError.badRequest(`El comprobante recibido ${row.clave} no está firmado con un certificado de una autoridad certificadora de confianza; no se puede aceptar`, chain);
}

interface PreviousAnswer {
  estado: string;
  documentId: number | null;
  consecutivoReceptor: string | null;
  /** Our MensajeReceptor's state at Hacienda (its documents row). */
  respuestaEstado: string | null;
}

async function previousAnswer(ctx: ServiceContext, row: Selectable<RecibidosTable>): Promise<PreviousAnswer> {
  const doc = row.mensaje_document_id === null ? undefined : await ctx.store.db.selectFrom('documents').select(['id', 'clave', 'state']).where('id', '=', row.mensaje_document_id).executeTakeFirst();
  return {
    estado: row.estado,
    documentId: doc ? Number(doc.id) : null,
    consecutivoReceptor: doc ? (mensajeReceptorKey(doc.clave)?.consecutivoReceptor ?? null) : null,
    respuestaEstado: doc?.state ?? null,
  };
}

/**
 * Refuses (400, one finding at `hacienda`) to answer a comprobante Hacienda had not accepted at import, when asking
 * again now says it still has no record of it (or has not accepted it); stores what Hacienda says now either way.
 */
async function refuseUnknownAtHacienda(ctx: ServiceContext, row: Selectable<RecibidosTable>, issuer: Issuer): Promise<void> {
  if (row.hacienda_estado === 'aceptado' || !row.clave) return;
  const client = buyerReceptionClient(ctx, issuer);
  let why: string | null;
  try {
    const st = await client.getStatus(row.clave);
    why = notAnswerableYet(st, '(asked now)');
    if (st.estado !== row.hacienda_estado || (st.respuestaXml && !row.hacienda_xml)) {
      await ctx.store.db
        .updateTable('recibidos')
        .set({ hacienda_estado: st.estado, ...(st.respuestaXml ? { hacienda_xml: st.respuestaXml.toString('utf8') } : {}), updated_at: ctx.now() })
        .where('id', '=', row.id)
        .execute();
    }
  } catch (e) {
    why = `the state of this comprobante at Hacienda could not be asked (${e instanceof Error ? e.message : String(e)}): a MensajeReceptor about a comprobante Hacienda has no record of is rejected`;
  } finally {
    await client.close();
  }
  if (why === null) return;
  throw ServiceError.badRequest(`Hacienda no tiene el comprobante ${row.clave} como aceptado; no se envía el MensajeReceptor (forzar: true para enviarlo de todos modos)`, [{ path: 'hacienda', message: why }]);
}

function alreadyAnswered(clave: string, prev: PreviousAnswer): ServiceError {
  const mr = prev.consecutivoReceptor ? ` con el MensajeReceptor ${prev.consecutivoReceptor} (Hacienda: ${prev.respuestaEstado ?? 'pendiente'})` : '';
  return ServiceError.badRequest(`El comprobante recibido ${clave} ya fue respondido (${prev.estado})${mr}; no se envía otra respuesta`, [
    { path: 'decision', message: `already ${prev.estado}${prev.consecutivoReceptor ? ` by MensajeReceptor ${prev.consecutivoReceptor}` : ''}: a document is answered once` },
  ]);
}
