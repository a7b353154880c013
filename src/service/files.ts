/**
 * The stored files of a document, base64-encoded for `/api/consultar/archivo`: `XML` (the signed comprobante),
 * `RESPUESTA` (Hacienda's MensajeHacienda, once decided) and `PDF` (the representación gráfica).
 */
import { echo } from '../core/echo.js';
import type { DocumentRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { getDocument } from './documents.js';
import { renderPdf } from './pdf.js';
import { ServiceError } from './service-error.js';
import { isClave } from '../core/clave.js';

export const FILE_TYPES = ['XML', 'PDF', 'RESPUESTA'] as const;
export type FileType = (typeof FILE_TYPES)[number];

/** The spec's "Stored file". */
export interface StoredFile {
  claveHacienda: string;
  fileType: FileType;
  encodedFile: string;
}

/** A file type, case-insensitive; throws 400 for an unknown one. */
export function parseFileType(fileType: string | undefined): FileType {
  const t = (fileType ?? 'XML').trim().toUpperCase();
  if ((FILE_TYPES as readonly string[]).includes(t)) return t as FileType;
  throw ServiceError.badRequest(`fileType debe ser XML, PDF o RESPUESTA (se recibió "${echo(String(fileType))}")`, [
    { path: 'fileType', message: 'must be XML, PDF or RESPUESTA' },
  ]);
}

/**
 * The file of a document of the account, or null when there is none: unknown clave, another account's
 * clave, RESPUESTA before Hacienda's verdict.
 */
export async function getFile(ctx: ServiceContext, accountId: number, clave: string, fileType: string = 'XML'): Promise<StoredFile | null> {
  const type = parseFileType(fileType);
  if (!isClave(clave)) return null;
  const doc = await getDocument(ctx, accountId, clave);
  if (!doc) return null;
  const bytes = await fileBytes(ctx, doc, type);
  return bytes ? { claveHacienda: clave, fileType: type, encodedFile: bytes.toString('base64') } : null;
}

async function fileBytes(ctx: ServiceContext, doc: DocumentRow, type: FileType): Promise<Buffer | null> {
  switch (type) {
    case 'XML':
      return Buffer.from(doc.xml, 'utf8');
    case 'RESPUESTA':
      return isDecided(doc) && doc.response_xml ? Buffer.from(doc.response_xml, 'utf8') : null;
    case 'PDF':
      // On the API's threads, a final document's kept (heavy-work.ts); else here.
      return ctx.heavyWork ? ctx.heavyWork.documentPdf(doc) : renderPdf(ctx, doc);
  }
}

/** Whether Hacienda has given its verdict on the document. */
export function isDecided(doc: Pick<DocumentRow, 'state' | 'decided_at'>): boolean {
  return doc.decided_at !== null || doc.state === 'aceptado' || doc.state === 'rechazado';
}
