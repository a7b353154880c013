/**
 * Login throttling (the auth server's POST /login) and the client address it is keyed on.
 *
 * - `FailureBackoff`: per key, a few failures are free, then each further failure makes the key wait before its
 *   next attempt, the wait doubling up to a ceiling. The auth app keys it on the (account name, client address)
 *   pair, so whoever fails on an account from one address slows only that pair: the account's owner, from
 *   anywhere else, is never made to wait.
 * - `FailureLimiter`: a sliding-window ceiling of failures per key (per client address, any account: against
 *   password spraying from one address).
 * - `LoginThrottle`: the two together as the auth app uses them. An attempt is counted as a failure when it is
 *   let through (before the password check), so concurrent attempts cannot slip past the delay; a success takes
 *   it back.
 * - `addressKey`: the client address as a key (an IPv6 client by its /64, an IPv4-mapped one as IPv4);
 *   `parseTrustProxy`: the proxies whose X-Forwarded-For is believed (Fastify's `trustProxy` list).
 *
 * Memory is bounded: each map tracks at most `maxKeys` keys, dropping the least recently failed first.
 */
import ipaddr from 'ipaddr.js';

export type LimitCheck = { limited: false } | { limited: true; retryAfterSeconds: number };

const retryAfter = (untilMs: number, now: number): number => Math.max(1, Math.ceil((untilMs - now) / 1000));

/** Inserts or refreshes `key` as the most recent, dropping the oldest key beyond `maxKeys`. */
function touch<V>(map: Map<string, V>, key: string, value: V, maxKeys: number): void {
  map.delete(key);
  if (map.size >= maxKeys) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

export interface FailureLimiterOptions {
  /** Failures allowed within the window; the next attempt is refused. */
  max: number;
  windowMs: number;
  now?: () => number;
  maxKeys?: number;
}

/** Sliding window: a key is limited once it has `max` failures within the last `windowMs`; it frees up as they age out. */
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
    return { limited: true, retryAfterSeconds: retryAfter(pivot + this.#windowMs, now) };
  }

  fail(key: string): void {
    const now = this.#now();
    const list = this.#recent(key, now) ?? [];
    list.push(now);
    // Only the last `max` failures matter.
    if (list.length > this.#max) list.splice(0, list.length - this.#max);
    touch(this.#failures, key, list, this.#maxKeys);
  }

  /** Takes back the latest failure of `key` (an attempt counted in advance that succeeded). */
  forgive(key: string): void {
    const list = this.#failures.get(key);
    if (!list) return;
    list.pop();
    if (list.length === 0) this.#failures.delete(key);
  }

  reset(key: string): void {
    this.#failures.delete(key);
  }

  /** Number of keys tracked (for tests). */
  get size(): number {
    return this.#failures.size;
  }
}

export interface FailureBackoffOptions {
  /** Failures answered without delay; the one that reaches this number starts the delays. */
  freeFailures: number;
  /** The first delay; each further failure doubles it. */
  baseDelayMs: number;
  /** The longest delay. */
  maxDelayMs: number;
  /** A key with no failure for this long is forgotten (starts afresh). */
  forgetMs: number;
  now?: () => number;
  maxKeys?: number;
}

interface BackoffEntry {
  failures: number;
  lastMs: number;
  untilMs: number;
}

/** Exponential delay per key: after `freeFailures` failures the key waits baseDelay, 2×, 4×, … up to maxDelay. */
export class FailureBackoff {
  readonly #o: Required<Omit<FailureBackoffOptions, 'now'>>;
  readonly #now: () => number;
  readonly #entries = new Map<string, BackoffEntry>();

  constructor(opts: FailureBackoffOptions) {
    if (!(opts.freeFailures >= 1) || !(opts.baseDelayMs > 0) || !(opts.maxDelayMs >= opts.baseDelayMs) || !(opts.forgetMs > 0)) {
      throw new Error('freeFailures >= 1, baseDelayMs > 0, maxDelayMs >= baseDelayMs and forgetMs > 0 are required');
    }
    this.#o = { maxKeys: 100_000, ...opts };
    this.#now = opts.now ?? Date.now;
  }

  #entry(key: string, now: number): BackoffEntry | undefined {
    const e = this.#entries.get(key);
    if (e && now >= e.untilMs && now - e.lastMs >= this.#o.forgetMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** The delay after the `failures`-th failure (0 while they are free). */
  delayAfter(failures: number): number {
    if (failures < this.#o.freeFailures) return 0;
    const exp = failures - this.#o.freeFailures;
    return exp >= 40 ? this.#o.maxDelayMs : Math.min(this.#o.maxDelayMs, this.#o.baseDelayMs * 2 ** exp);
  }

  check(key: string): LimitCheck {
    const now = this.#now();
    const e = this.#entry(key, now);
    return e && now < e.untilMs ? { limited: true, retryAfterSeconds: retryAfter(e.untilMs, now) } : { limited: false };
  }

  fail(key: string): void {
    const now = this.#now();
    const failures = (this.#entry(key, now)?.failures ?? 0) + 1;
    const delay = this.delayAfter(failures);
    touch(this.#entries, key, { failures, lastMs: now, untilMs: delay > 0 ? now + delay : 0 }, this.#o.maxKeys);
  }

  reset(key: string): void {
    this.#entries.delete(key);
  }

  /** Number of keys tracked (for tests). */
  get size(): number {
    return this.#entries.size;
  }
}

export interface LoginThrottleOptions {
  /** Failures of one account from one address answered at once; the next attempt waits. Default 5. */
  freeFailures?: number;
  /** The first wait, doubled at each further failure of the pair. Default 1 s. */
  baseDelayMs?: number;
  /** The longest wait. Default 15 min. */
  maxDelayMs?: number;
  /** A pair with no failure for this long starts afresh. Default 1 h. */
  forgetMs?: number;
  /** Failed logins per client address, any account, within `windowMs` before 429. Default 100. */
  perAddress?: number;
  /** The per-address window. Default 1 h. */
  windowMs?: number;
  now?: () => number;
  maxKeys?: number;
}

/** The auth app's policy: exponential delay per (account, address) pair, a ceiling per address. */
export class LoginThrottle {
  readonly #pairs: FailureBackoff;
  readonly #addresses: FailureLimiter;

  constructor(o: LoginThrottleOptions = {}) {
    const common = { ...(o.now ? { now: o.now } : {}), ...(o.maxKeys ? { maxKeys: o.maxKeys } : {}) };
    this.#pairs = new FailureBackoff({
      freeFailures: o.freeFailures ?? 5,
      baseDelayMs: o.baseDelayMs ?? 1000,
      maxDelayMs: o.maxDelayMs ?? 15 * 60_000,
      forgetMs: o.forgetMs ?? 60 * 60_000,
      ...common,
    });
    this.#addresses = new FailureLimiter({ max: o.perAddress ?? 100, windowMs: o.windowMs ?? 60 * 60_000, ...common });
  }

  /**
   * Whether `account` may try a password from `address` now. When it may, the attempt is already counted as a
   * failure of the pair and of the address (concurrent attempts see it); `succeeded` takes it back.
   */
  admit(account: string, address: string): LimitCheck {
    const pair = pairKey(account, address);
    const checks = [this.#pairs.check(pair), this.#addresses.check(address)];
    const waits = checks.map((c) => (c.limited ? c.retryAfterSeconds : 0));
    if (Math.max(...waits) > 0) return { limited: true, retryAfterSeconds: Math.max(...waits) };
    this.#pairs.fail(pair);
    this.#addresses.fail(address);
    return { limited: false };
  }

  /** The admitted attempt was right: the pair starts afresh and the address's count forgets that attempt. */
  succeeded(account: string, address: string): void {
    this.#pairs.reset(pairKey(account, address));
    this.#addresses.forgive(address);
  }
}

/** An address never contains a newline, so the pair's key cannot be confused with another pair's. */
const pairKey = (account: string, address: string): string => `${address}\n${account}`;

/**
 * The client address as a throttling key: IPv4 as is (an IPv4-mapped IPv6 address as its IPv4), IPv6 by its /64
 * (one host or network usually holds a whole /64, so rotating addresses inside it gains nothing).
 */
export function addressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const a = ipaddr.process(ip);
  if (a.kind() === 'ipv4') return a.toString();
  const parts = (a as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `--trust-proxy` / FECR_TRUST_PROXY: a comma-separated list of the proxies (addresses, CIDRs, or proxy-addr's
 * names loopback, linklocal, uniquelocal) whose X-Forwarded-For Fastify believes. Throws on anything else.
 */
export function parseTrustProxy(value: string): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new Error('needs at least one proxy address or CIDR (e.g. 10.0.0.0/8)');
  for (const item of items) {
    const ok =
      PROXY_NAMES.has(item) ||
      ipaddr.IPv4.isValidFourPartDecimal(item) ||
      ipaddr.IPv4.isValidCIDRFourPartDecimal(item) ||
      ipaddr.IPv6.isValid(item) ||
      ipaddr.IPv6.isValidCIDR(item);
    if (!ok) throw new Error(`"${item}" is not an IP address or CIDR (nor loopback, linklocal, uniquelocal)`);
  }
  return items;
}
