/**
 * The checks of a received file that need nothing but its bytes (core/received/check.ts), or the refusal of a file
 * over the size limit without reading it. Pure and CPU-bound (≈ 0.25 s for a 0.9 MB document: parsing, the XAdES
 * digests, the totals of every line), so the client API runs it on its threads (service/heavy-work.ts), the CLI's
 * local import on its own thread; the same answer either way.
 */
import { createHash } from 'node:crypto';
import { analyzeReceived, type ReceivedAnalysis } from '../../core/received/check.js';
import { oversizeFinding } from '../../core/received/limits.js';

/** A file as import.ts receives it: its bytes and, when they are only its beginning, its size. */
export interface FileToAnalyze {
  bytes: Uint8Array;
  size?: number;
}

/**
 * What `analyzeReceived` takes besides the bytes and the clock (e.g. the trust anchors of the signing certificate's
 * chain), handed through as it is. Plain data: it crosses to a thread by postMessage (an X509Certificate does too).
 */
export type CheckArgs = Parameters<typeof analyzeReceived> extends [Uint8Array, Date, ...infer Rest] ? Rest : [];

/** The bytes' analysis, or the refusal of a file over the size limit without reading it. */
export function analyzeFile(file: FileToAnalyze, limit: number, now: Date, ...args: CheckArgs): ReceivedAnalysis {
  const size = Math.max(file.size ?? 0, file.bytes.length);
  if (size <= limit) return analyzeReceived(file.bytes, now, ...args);
  return { sha256: createHash('sha256').update(file.bytes).digest('hex'), iva: [], findings: [oversizeFinding(size, limit)], warnings: [] };
}
