/**
 * The references between the account's documents (migration 0015, issue 30): written with the document, read by
 * `fecr status` (who references this comprobante, and its balance) and by the checks of annul, replace and payment.
 */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, DocumentReferencesTable } from './schema.js';

export type ReferenceRow = Omit<Insertable<DocumentReferencesTable>, 'document_id'>;

/** Writes a document's references (in the caller's transaction). */
export async function insertReferences(db: Kysely<Database> | Transaction<Database>, documentId: number, rows: readonly ReferenceRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('document_references')
    .values(rows.map((r) => ({ ...r, document_id: documentId })))
    .execute();
}

export interface ReferencingDocument {
  clave: string;
  kind: string;
  state: string;
  codigo: string | null;
  tipo_doc_ir: string;
  monto: string | null;
  /** The referencing document's own TotalComprobante. */
  total_comprobante: string;
  fecha_emision: string;
  created_at: number;
}

/** The account's documents that reference `clave`, oldest first. */
export async function referencingDocuments(db: Kysely<Database>, accountId: number, clave: string): Promise<ReferencingDocument[]> {
  return db
    .selectFrom('document_references as r')
    .innerJoin('documents as d', 'd.id', 'r.document_id')
    .select(['d.clave', 'd.kind', 'd.state', 'r.codigo', 'r.tipo_doc_ir', 'r.monto', 'd.total_comprobante', 'd.fecha_emision', 'd.created_at'])
    .where('r.account_id', '=', accountId)
    .where('r.ref_clave', '=', clave)
    .orderBy('d.id')
    .execute();
}
