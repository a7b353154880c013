/**
 * The client API's threads' module (piscina; heavy-work.ts): the checks of received files (recibidos/analyze.ts) and
 * the PDF of a stored document (pdf.ts). Its imports are static: a thread started from the sources (tests) resolves
 * no dynamic import() of a .ts file.
 */
import { lowerThreadPriority } from '../adapters/thread-priority.js';
import type { ReceivedAnalysis } from '../core/received/check.js';
import type { TrustStore } from '../core/sign/chain.js';
import type { DocumentRow } from '../store/schema.js';
import { renderPdf } from './pdf.js';
import { analyzeFile, type FileToAnalyze } from './recibidos/analyze.js';

// Behind the event loop when the CPU is short: a cheap request waits for no check or PDF.
lowerThreadPriority(10);

export type HeavyTask =
  | { kind: 'analyze'; files: FileToAnalyze[]; limit: number; /** epoch ms */ now: number; trust?: TrustStore }
  | { kind: 'pdf'; row: Pick<DocumentRow, 'xml' | 'state' | 'clave'> & Partial<DocumentRow> };

/** A task's own failure comes back as `{ error }`: a thrown error means the thread itself failed. */
export type HeavyAnswer = { analyses: ReceivedAnalysis[] } | { pdf: Uint8Array } | { error: string };

export default async function run(task: HeavyTask): Promise<HeavyAnswer> {
  try {
    if (task.kind === 'analyze') {
      const now = new Date(task.now);
      return { analyses: task.files.map((f) => analyzeFile(f, task.limit, now, task.trust)) };
    }
    return { pdf: await renderPdf(undefined, task.row) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}
