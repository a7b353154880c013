/**
 * One balance rule for every recibo electrónico de pago made here (issue 37, point 5): `fecr documents payment`, the
 * API's `/api/documentos/pago`, and a REP body sent as any document (`/api/enviar/items`, `fecr send`, `fecr batch`)
 * all reach submitDocument (documents.ts), which runs `guardPayment` inside the transaction that stores the REP.
 *
 * The rule (core/corrections/references.ts balanceOf, the one `fecr status` shows and paymentBodyFor pre-checks): a
 * REP that references sales of the account pays only an accepted credit sale (an FE, TE or ND with condicionVenta 08
 * or 10: ANEXOS Nota 5, "el pago de un comprobante a crédito para las condiciones ... 08 y 10"; core/corrections/
 * payment.ts), and what it pays (its lines' MontoTotalLinea, document-references.ts) must not exceed the balance left
 * on them, counting every payment still on its way (`committed`). A REP that names no document of the account (a sale
 * made elsewhere) is not judged here: there is no balance to read.
 *
 * Concurrency: the check and the REP's INSERT are one transaction, serialised per referenced sale, so two REPs at once
 * cannot both pass on the same balance:
 *  - PostgreSQL: `SELECT … FOR UPDATE` on the sales' rows (ordered by id, so two REPs of the same sales cannot
 *    deadlock); a second REP waits for the first to commit, and under READ COMMITTED its next statement (the
 *    references read) sees the first REP's row.
 *  - SQLite: Kysely opens a deferred `BEGIN` on the store's one connection (store/index.ts), which its mutex holds for
 *    the whole transaction: in one process transactions never interleave. For two processes on one file, the
 *    transaction's first statement is a write (a no-op UPDATE of the sales' rows), which takes SQLite's write lock
 *    before anything is read: BEGIN IMMEDIATE's semantics (waiting busy_timeout for another writer), so no REP reads a
 *    balance another process is about to change.
 */
import { REP_CONDICION_FOR_SALE, balanceOf } from '../core/corrections/references.js';
import { dec, money, sum } from '../core/money.js';
import type { Comprobante } from '../core/model.js';
import type { Totals } from '../core/totals.js';
import { parseComprobanteXml } from '../core/xml/parse-comprobante.js';
import { referencingDocuments, type ReferenceRow } from '../store/document-references.js';
import type { Executor } from '../store/jobs.js';
import type { ServiceContext } from './context.js';
import { ServiceError } from './service-error.js';

/** The kinds a REP made here pays (core/corrections/payment.ts PAYABLE_KINDS: an FE, TE or ND). */
const PAYABLE_KINDS = new Set(['FE', 'TE', 'ND']);

/** What submitDocument knows of a REP before storing it. */
export interface PaymentToCheck {
  refs: readonly ReferenceRow[];
  /** What it pays: its lines' MontoTotalLinea (base + IVA), summed. */
  paid: string;
  /** Where that amount is in the body (a finding's path). */
  path: string;
}

/** The REP's payment, when `doc` is a REP that references comprobantes by clave; else undefined. */
export function paymentOf(doc: Comprobante, totals: Totals, refs: readonly ReferenceRow[]): PaymentToCheck | undefined {
  if (doc.kind !== 'REP' || refs.length === 0) return undefined;
  const n = totals.lineas.length;
  return { refs, paid: money(sum(totals.lineas.map((l) => l.montoTotalLinea))), path: n === 1 ? 'detalleServicio[0].montoTotalLinea' : 'detalleServicio' };
}

/** Inside the REP's transaction, before its INSERT: locks the sales it pays and refuses an overpayment (400). */
export async function guardPayment(ctx: Pick<ServiceContext, 'store'>, trx: Executor, accountId: number, p: PaymentToCheck): Promise<void> {
  const claves = [...new Set(p.refs.map((r) => r.ref_clave))];
  // SQLite: a write first (the database's write lock, as BEGIN IMMEDIATE would take it); see above.
  if (ctx.store.dialect === 'sqlite') await trx.updateTable('documents').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('account_id', '=', accountId).where('clave', 'in', claves).execute();
  let q = trx.selectFrom('documents').select(['id', 'clave', 'kind', 'state', 'total_comprobante', 'moneda', 'xml']).where('account_id', '=', accountId).where('clave', 'in', claves).orderBy('id');
  if (ctx.store.dialect === 'postgres') q = q.forUpdate();
  const sales = await q.execute();
  if (sales.length === 0) return;
  let left = dec(0);
  for (const sale of sales) {
    const at = `informacionReferencia[${p.refs.findIndex((r) => r.ref_clave === sale.clave)}].numero`;
    if (sale.state !== 'aceptado') throw refused(`El comprobante ${sale.clave} está ${sale.state}: un recibo de pago se registra contra un comprobante que Hacienda aceptó`, at, `estado ${sale.state}, no aceptado`);
    const condicion = PAYABLE_KINDS.has(sale.kind) ? parseComprobanteXml(sale.xml).condicionVenta : undefined;
    if (condicion === undefined || REP_CONDICION_FOR_SALE[condicion] === undefined) {
      throw refused(
        `El comprobante ${sale.clave} no es una venta a crédito: un recibo de pago paga una factura, tiquete o nota de débito con condicionVenta 08 o 10 (ANEXOS, nota 5)`,
        at,
        'no es una venta a crédito (condicionVenta 08 o 10)',
      );
    }
    const links = (await referencingDocuments(trx, accountId, sale.clave)).map((r) => ({ clave: r.clave, kind: r.kind, state: r.state, codigo: r.codigo, monto: r.monto }));
    left = left.plus(dec(balanceOf(sale.total_comprobante, links, sale.state).committed));
  }
  const moneda = sales[0]!.moneda;
  const names = sales.map((s) => s.clave).join(', ');
  const saldo = money(left);
  if (left.lte(0)) throw refused(`El comprobante ${names} ya está pagado por completo (saldo ${saldo} ${moneda})`, p.path, `el saldo es ${saldo} ${moneda}`);
  if (dec(p.paid).gt(left)) {
    throw refused(`El pago de ${p.paid} ${moneda} excede el saldo de ${names} (${saldo} ${moneda})`, p.path, `excede el saldo pendiente: ${saldo} ${moneda}`);
  }
}

function refused(message: string, path: string, finding: string): ServiceError {
  return ServiceError.badRequest(message, [{ path, message: finding }]);
}
