/**
 * A figure belongs to one taxpayer (issue 36): every report and summary (`fecr report iva`, `fecr recibidos
 * resumen`, their API routes) is made per issuer of the account, never one sum across cédulas, since each figure goes
 * into that cédula's own return. This is who they are made for: the issuer named (or a validation error at `emisor`),
 * or every issuer of the account, by identificación. A sale belongs to the issuer that issued it (its row's
 * issuer_id, the FEC's buyer included: core/parties.ts); a received document to the issuer who is its buyer (the row's
 * issuer_id, set at import: service/recibidos/import.ts checkBuyer).
 */
import type { ServiceContext } from './context.js';
import { ServiceError } from './service-error.js';

export interface Taxpayer {
  id: number;
  identificacion: string;
  nombre: string;
}

/** The issuer `emisor` of the account (a validation error at `emisor` if none), or, without it, every one. */
export async function taxpayersOf(ctx: ServiceContext, accountId: number, emisor?: string): Promise<Taxpayer[]> {
  let q = ctx.store.db.selectFrom('issuers').select(['id', 'identificacion', 'record_json']).where('account_id', '=', accountId);
  if (emisor !== undefined) q = q.where('identificacion', '=', emisor.trim());
  const rows = await q.orderBy('identificacion').orderBy('id').execute();
  if (emisor !== undefined && rows.length === 0) throw ServiceError.validation([{ path: 'emisor', message: `no issuer ${emisor.trim()} in this account` }]);
  return rows.map((r) => ({ id: Number(r.id), identificacion: r.identificacion, nombre: nombreOf(r.record_json) }));
}

function nombreOf(recordJson: string): string {
  try {
    const n = (JSON.parse(recordJson) as { nombre?: unknown }).nombre;
    return typeof n === 'string' ? n : '';
  } catch {
    return '';
  }
}
