/**
 * The client API's CPU-heavy work, off its event loop (issue 25, point 9): one tenant's 0.9 MB received comprobante
 * took the loop 0.25–0.6 s to check, and the PDF of a 1 000-line document 0.7–1.5 s to render, during which no other
 * tenant's request was answered. `ServiceThreads` does both on worker threads (piscina, adapters/thread-pool.ts
 * FallibleThreads) and keeps final documents' PDFs (pdf-cache.ts); the use cases find it as `ctx.heavyWork`
 * (recibidos/import.ts, files.ts) and work on their own thread without it (the CLI's local mode).
 *
 * - Received files: a batch under `minBytes` in all (an ordinary invoice is 5–15 KB, ≈ 3 ms) is checked here, where
 *   the trip to a thread would cost more than it saves; a larger one goes to a thread in chunks of up to `chunkBytes`,
 *   one chunk after the other, so a request takes one thread at a time and other requests' tasks get in between.
 * - PDFs: every one on a thread (the first of a process also loads pdfkit and parses the fonts, ≈ 0.2 s); a final
 *   document's is rendered once and kept.
 * - If the threads cannot start or die, the work is done on this thread from then on: the same answers, only on the
 *   event loop (FallibleThreads).
 *
 * The answers are the same as on this thread: the same analysis (findings, warnings, figures, text) and the same PDF
 * bytes (test/server-api-heavy.test.ts).
 */
import { availableParallelism } from 'node:os';
import { FallibleThreads } from '../adapters/thread-pool.js';
import { workerModule } from '../adapters/worker-module.js';
import type { ReceivedAnalysis } from '../core/received/check.js';
import type { TrustStore } from '../core/sign/chain.js';
import type { DocumentRow } from '../store/schema.js';
import type { HeavyWork, PdfRow } from './heavy-work-types.js';
import type { HeavyAnswer, HeavyTask } from './heavy-work-worker.js';
import { PdfCache, PDF_CACHE_BYTES } from './pdf-cache.js';
import { analyzeFile, type FileToAnalyze } from './recibidos/analyze.js';

export type { HeavyWork, PdfRow } from './heavy-work-types.js';

export interface ServiceThreadsOptions {
  /** Threads (default: cores − 1, from 1 to 2, as the emulator's). */
  threads?: number;
  /** A batch of received files at least this large (bytes) goes to a thread (default 64 KiB). */
  minBytes?: number;
  /** Received files per task, up to this many bytes (a larger file goes alone; default 256 KiB). */
  chunkBytes?: number;
  /** The PDF cache's budget in bytes (default 32 MiB; 0: none). */
  pdfCacheBytes?: number;
  /** Another worker module (tests: one that cannot start). */
  workerFile?: string;
  /** Told once, when the threads fail (the work goes on on this thread). */
  onError?: (e: unknown) => void;
}

export const HEAVY_MIN_BYTES = 64 * 1024;
export const HEAVY_CHUNK_BYTES = 256 * 1024;

export function defaultHeavyThreads(): number {
  return Math.max(1, Math.min(2, availableParallelism() - 1));
}

/** pdfkit and the fonts load with the first PDF rendered on this thread (the threads failed), never before. */
const renderHere = async (row: PdfRow) => (await import('./pdf.js')).renderPdf(undefined, row);

export class ServiceThreads implements HeavyWork {
  private readonly threads: FallibleThreads<HeavyTask, HeavyAnswer>;
  private readonly pdfs: PdfCache | undefined;
  private readonly minBytes: number;
  private readonly chunkBytes: number;
  /** Where the work was done (for the tests and the bench). */
  readonly stats = { filesOnThreads: 0, filesHere: 0, pdfsOnThreads: 0, pdfsHere: 0 };

  constructor(o: ServiceThreadsOptions = {}) {
    this.threads = new FallibleThreads({
      module: o.workerFile ? { filename: o.workerFile } : workerModule('heavy-work-worker', import.meta.url),
      threads: o.threads ?? defaultHeavyThreads(),
      // A check's or a PDF's garbage is short-lived: a small young generation collects it soon (peak RSS).
      youngGenerationMb: 16,
      ...(o.onError ? { onError: o.onError } : {}),
      closedMessage: 'the service threads are closed',
    });
    this.minBytes = o.minBytes ?? HEAVY_MIN_BYTES;
    this.chunkBytes = o.chunkBytes ?? HEAVY_CHUNK_BYTES;
    const cacheBytes = o.pdfCacheBytes ?? PDF_CACHE_BYTES;
    this.pdfs = cacheBytes > 0 ? new PdfCache(cacheBytes) : undefined;
  }

  /** PDFs answered from the cache. */
  get pdfCacheHits(): number {
    return this.pdfs?.hits ?? 0;
  }

  async analyzeReceived(files: readonly FileToAnalyze[], limit: number, now: Date, trust?: TrustStore): Promise<ReceivedAnalysis[]> {
    const total = files.reduce((n, f) => n + f.bytes.length, 0);
    if (total < this.minBytes) return this.here(files, limit, now, trust);
    const out: ReceivedAnalysis[] = [];
    for (const chunk of chunks(files, this.chunkBytes)) {
      const answer = this.threads.usable
        ? await this.threads.run({ kind: 'analyze', files: chunk.map(ownBytes), limit, now: now.getTime(), trust })
        : undefined;
      if (answer === undefined) out.push(...this.here(chunk, limit, now, trust));
      else if ('analyses' in answer) {
        this.stats.filesOnThreads += chunk.length;
        out.push(...answer.analyses);
      } else throw new Error('error' in answer ? answer.error : 'the service thread answered nothing');
    }
    return out;
  }

  async documentPdf(row: PdfRow): Promise<Buffer> {
    const render = async (): Promise<Buffer> => {
      const answer = this.threads.usable ? await this.threads.run({ kind: 'pdf', row }) : undefined;
      if (answer === undefined) {
        this.stats.pdfsHere++;
        return renderHere(row);
      }
      if ('pdf' in answer) {
        this.stats.pdfsOnThreads++;
        return Buffer.from(answer.pdf.buffer, answer.pdf.byteOffset, answer.pdf.byteLength);
      }
      throw new Error('error' in answer ? answer.error : 'the service thread answered nothing');
    };
    return this.pdfs ? this.pdfs.get(PdfCache.keyOf(row), render) : render();
  }

  close(): Promise<void> {
    return this.threads.close();
  }

  private here(files: readonly FileToAnalyze[], limit: number, now: Date, trust?: TrustStore): ReceivedAnalysis[] {
    this.stats.filesHere += files.length;
    return files.map((f) => analyzeFile(f, limit, now, trust));
  }
}

/** Consecutive files up to `max` bytes each group (a larger file alone). */
function chunks<T extends FileToAnalyze>(files: readonly T[], max: number): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let size = 0;
  for (const f of files) {
    if (cur.length > 0 && size + f.bytes.length > max) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(f);
    size += f.bytes.length;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * The file as it crosses to a thread: only its bytes (a structured clone copies a view's whole ArrayBuffer, e.g. the
 * 8 KiB pool of a small Buffer or a larger read buffer) and its size.
 */
function ownBytes(f: FileToAnalyze): FileToAnalyze {
  const b = f.bytes;
  const bytes = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : new Uint8Array(b);
  return { bytes, ...(f.size !== undefined ? { size: f.size } : {}) };
}
