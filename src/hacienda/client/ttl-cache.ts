/** A small in-memory cache with per-entry expiry on an injected clock, and shared in-flight loads. */

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly loading = new Map<string, Promise<V>>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 5_000,
  ) {}

  get(key: string): { value: V } | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return { value: e.value };
  }

  set(key: string, value: V, ttlMs: number): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      // Drop the oldest insertion (Map keeps insertion order).
      const first = this.entries.keys().next();
      if (!first.done) this.entries.delete(first.value);
    }
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  /** Cached value, or the result of `load` (concurrent callers share one load; failures are not cached). */
  async getOrLoad(key: string, ttlMs: number, load: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit) return hit.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const p = load().then(
      (v) => {
        this.set(key, v, ttlMs);
        this.loading.delete(key);
        return v;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, p);
    return p;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
