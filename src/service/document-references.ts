/**
 * The references of a document being issued, as rows of `document_references` (store/document-references.ts,
 * migration 0015): one per InformacionReferencia that names a clave. `monto` is what the document counts against the
 * comprobante it references when it references exactly one: an NC's or ND's TotalComprobante, a REP's lines (each
 * SubTotal plus its IVA: what was paid), a replacement's (CodigoReferencia 16) TotalComprobante (what stands in the
 * rejected one's place; issue 36: it counts nothing against the balance, core/corrections/references.ts); null otherwise.
 */
import type { Comprobante } from '../core/model.js';
import { isClave } from '../core/clave.js';
import { CODIGO_SUSTITUYE_RECHAZADO } from '../core/corrections/references.js';
import { money, sum } from '../core/money.js';
import type { Totals } from '../core/totals.js';
import type { ReferenceRow } from '../store/document-references.js';

export function referenceRowsOf(accountId: number, doc: Comprobante, totals: Totals): ReferenceRow[] {
  const refs = doc.informacionReferencia.filter((r) => r.numero !== undefined && isClave(r.numero));
  const monto =
    refs.length !== 1
      ? null
      : doc.kind === 'REP'
        ? money(sum(totals.lineas.map((l) => l.montoTotalLinea)))
        : doc.kind === 'NC' || doc.kind === 'ND' || refs[0]!.codigo === CODIGO_SUSTITUYE_RECHAZADO
          ? money(totals.resumen.totalComprobante)
          : null;
  return refs.map((r, orden) => ({ orden, account_id: accountId, ref_clave: r.numero!, tipo_doc_ir: r.tipoDocIR, codigo: r.codigo ?? null, monto }));
}
