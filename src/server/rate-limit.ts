/**
 * In-memory sliding-window counter of failures per key (login failures per account and per client IP).
 * A key is limited once it has `max` failures within the last `windowMs`; it frees up as they age out.
 * Memory is bounded: at most `maxKeys` keys are tracked (the oldest are dropped first).
 */

export interface FailureLimiterOptions {
  /** Failures allowed within the window; the next attempt is refused. */
  max: number;
  windowMs: number;
  now?: () => number;
  maxKeys?: number;
}

export type LimitCheck = { limited: false } | { limited: true; retryAfterSeconds: number };

export class FailureLimiter {
  readonly #max: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #maxKeys: number;
  readonly #failures = new Map<string, number[]>();

  constructor(opts: FailureLimiterOptions) {
    if (!(opts.max >= 1) || !(opts.windowMs > 0)) throw new Error('max >= 1 and windowMs > 0 are required');
    this.#max = opts.max;
    this.#windowMs = opts.windowMs;
    this.#now = opts.now ?? Date.now;
    this.#maxKeys = opts.maxKeys ?? 100_000;
  }

  /** Recent failures of `key` (dropping the aged-out ones). */
  #recent(key: string, now: number): number[] | undefined {
    const list = this.#failures.get(key);
    if (!list) return undefined;
    const from = now - this.#windowMs;
    let i = 0;
    while (i < list.length && (list[i] as number) <= from) i++;
    if (i > 0) list.splice(0, i);
    if (list.length === 0) {
      this.#failures.delete(key);
      return undefined;
    }
    return list;
  }

  check(key: string): LimitCheck {
    const now = this.#now();
    const list = this.#recent(key, now);
    if (!list || list.length < this.#max) return { limited: false };
    // Free again when the failure that makes it `max` ages out.
    const pivot = list[list.length - this.#max] as number;
    return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil((pivot + this.#windowMs - now) / 1000)) };
  }

  fail(key: string): void {
    const now = this.#now();
    const list = this.#recent(key, now);
    if (list) {
      list.push(now);
      // Only the last `max` failures matter.
      if (list.length > this.#max) list.splice(0, list.length - this.#max);
      return;
    }
    if (this.#failures.size >= this.#maxKeys) {
      const oldest = this.#failures.keys().next();
      if (!oldest.done) this.#failures.delete(oldest.value);
    }
    this.#failures.set(key, [now]);
  }

  reset(key: string): void {
    this.#failures.delete(key);
  }

  /** Number of keys tracked (for tests). */
  get size(): number {
    return this.#failures.size;
  }
}
