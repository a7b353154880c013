/**
 * The checks of a received file that need nothing but its bytes (core/received/check.ts), or the refusal of a file
 * over the size limit without reading it. Pure and CPU-bound (≈ 0.25 s for a 0.9 MB document: parsing, the XAdES
 * digests, the totals of every line), so the client API runs it on its threads (service/heavy-work.ts), the CLI's
 * local import on its own thread; the same answer either way.
 */
import { createHash } from 'node:crypto';
import { analyzeReceived, type ReceivedAnalysis } from '../../core/received/check.js';
import { oversizeFinding } from '../../core/received/limits.js';
import type { TrustStore } from '../../core/sign/chain.js';

/** A file as import.ts receives it: its bytes and, when they are only its beginning, its size. */
export interface FileToAnalyze {
  bytes: Uint8Array;
  size?: number;
}

/**
 * The bytes' analysis, or the refusal of a file over the size limit without reading it. `trust`: the anchors the
 * signing certificate must chain to (recibidos/trust.ts; none: nothing is trusted). Plain data: it crosses to a thread
 * as it is (postMessage carries X509Certificate objects).
 */
export function analyzeFile(file: FileToAnalyze, limit: number, now: Date, trust?: TrustStore): ReceivedAnalysis {
  const size = Math.max(file.size ?? 0, file.bytes.length);
  if (size <= limit) return analyzeReceived(file.bytes, now, trust);
  return { sha256: createHash('sha256').update(file.bytes).digest('hex'), iva: [], findings: [oversizeFinding(size, limit)], warnings: [] };
}
