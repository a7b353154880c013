/**
 * What the use cases hand over to the service's threads (ServiceContext.heavyWork): the interface only, so that the
 * context names it without importing the threads (heavy-work.ts → heavy-work-worker.ts → pdf.ts → context.ts).
 */
import type { ReceivedAnalysis } from '../core/received/check.js';
import type { TrustStore } from '../core/sign/chain.js';
import type { DocumentRow } from '../store/schema.js';
import type { FileToAnalyze } from './recibidos/analyze.js';

export type PdfRow = Pick<DocumentRow, 'xml' | 'state' | 'clave'> & Partial<DocumentRow>;

/** What the use cases hand over (ServiceContext.heavyWork). */
export interface HeavyWork {
  /** recibidos/analyze.ts `analyzeFile` of each file, in order. */
  analyzeReceived(files: readonly FileToAnalyze[], limit: number, now: Date, trust?: TrustStore): Promise<ReceivedAnalysis[]>;
  /** pdf.ts `renderPdf` of a stored row (the row the account's own: checked by the caller). */
  documentPdf(row: PdfRow): Promise<Buffer>;
  close(): Promise<void>;
}
