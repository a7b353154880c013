/**
 * Retry timing: exponential backoff with jitter, and the waits servers ask for
 * (`Retry-After`, `X-Ratelimit-Reset`).
 */

export interface RetryPolicy {
  /** Max requests of one kind for one operation (the first try included). */
  maxAttempts: number;
  /** Backoff base: the n-th retry waits about base·2^(n-1), jittered. */
  baseDelayMs: number;
  /** Backoff cap. */
  maxDelayMs: number;
  /** Longest server-requested wait (Retry-After / X-Ratelimit-Reset) the client will sleep through. */
  maxServerWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 15_000, maxServerWaitMs: 120_000 };

export interface Timing {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export function timing(t: Partial<Timing> = {}): Timing {
  return { now: t.now ?? Date.now, sleep: t.sleep ?? realSleep, random: t.random ?? Math.random };
}

export function retryPolicy(p: Partial<RetryPolicy> | undefined, defaults: RetryPolicy = DEFAULT_RETRY): RetryPolicy {
  return { ...defaults, ...p };
}

/** "Equal jitter": half the exponential step plus a random half, so retries spread out but never collapse to 0. */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * How long the server asked us to wait, in ms, or undefined. `Retry-After` (delta-seconds or HTTP-date) wins;
 * otherwise `X-Ratelimit-Reset` when the answer was 429 or `X-Ratelimit-Remaining` is 0. Hacienda documents
 * X-Ratelimit-Reset as "UTC epoch seconds"; a small value is read as seconds from now.
 */
export function serverWaitMs(status: number, headers: Record<string, string>, now: number): number | undefined {
  const ra = headers['retry-after'];
  if (ra !== undefined && ra.trim() !== '') {
    const s = ra.trim();
    if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
    const at = Date.parse(s);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  const reset = headers['x-ratelimit-reset'];
  const remaining = headers['x-ratelimit-remaining'];
  if (reset !== undefined && (status === 429 || remaining?.trim() === '0')) {
    const v = Number(reset.trim());
    if (Number.isFinite(v) && v >= 0) return v > 1e9 ? Math.max(0, v * 1000 - now) : Math.round(v * 1000);
  }
  return undefined;
}
