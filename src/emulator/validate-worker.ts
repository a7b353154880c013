/**
 * Worker-thread side of the emulator's pool (pool.ts): analyses received documents, i.e. every check but the
 * XSD, which the pool's owner batches (analyze.ts). A task carries one or more documents (under load the
 * owner sends several per message: fewer cross-thread wake-ups). Answers are plain data, one per document;
 * an exception inside an analysis is answered, not thrown, so that the owner can tell it from a failure of
 * the pool itself.
 */
import { analyzeDocument, type AnalysisOptions, type DocumentAnalysis, type ValidationMeta } from './analyze.js';

export interface WorkerTask {
  /** The received bytes (a Buffer on the sending side arrives as a Uint8Array) and their POST data. */
  docs: { xml: Uint8Array; meta: ValidationMeta }[];
  opts: AnalysisOptions;
}

export type WorkerAnswer = ({ ok: true; analysis: DocumentAnalysis } | { ok: false; message: string })[];

export default function analyze(task: WorkerTask): WorkerAnswer {
  return task.docs.map((d) => {
    try {
      return { ok: true, analysis: analyzeDocument(d.xml, d.meta, task.opts) };
    } catch (e) {
      return { ok: false, message: e instanceof Error ? e.message : String(e) };
    }
  });
}
