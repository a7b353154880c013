/**
 * Fault injection for tests and chaos runs, set at start and through `/_emulator/faults`.
 * Random decisions use an injectable source (`random`), so runs are reproducible with a seed.
 */
import { z } from 'zod';

export type FaultTarget = 'idp' | 'recepcion' | 'fe';

export interface FaultConfig {
  /** Added delay before handling each API request, ms. */
  latencyMs: number;
  /** Added delay after processing, before the answer is written, ms (a client timeout then leaves a processed request behind). */
  responseDelayMs: number;
  /** Fraction of API requests answered 503 before any processing. */
  errorRate: number;
  /** Fraction answered 429 with Retry-After before any processing. */
  rateLimitRate: number;
  /** Retry-After seconds sent with the 429s (integer). */
  retryAfterSeconds: number;
  /** Fraction whose connection is destroyed before any processing. */
  dropRate: number;
  /** Fraction processed normally whose connection is cut before the answer is written. */
  lostResponseRate: number;
  /** The IdP answers 503 to every request. */
  idpOutage: boolean;
  /** These claves are rejected whatever their content. */
  rejectClaves: string[];
  /** Reception answers 403 to these IdP usernames. */
  forbiddenUsers: string[];
  /** APIs the random faults (latency, 5xx, 429, drops, lost responses) apply to. */
  targets: FaultTarget[];
  /** HTTP methods the random faults apply to (e.g. only POST, to lose POST answers but not status queries). */
  methods: FaultMethod[];
  /**
   * Index delay, ms (0 = off): for this long after a document's POST was accepted, GET /recepcion/{clave} and
   * GET /comprobantes/{clave} answer 404 exactly as for an unknown clave, and /comprobantes does not list it, as the
   * real sandbox does right after the 202 (NOTES §4.4). A second POST of the clave is still refused as received.
   */
  indexDelayMs: number;
  /**
   * Per-issuer quota of POST /recepcion per minute (0 = off): once the emisor (numeroIdentificacion of the POST
   * body) has posted this many documents in the current minute, POST answers 429 with Retry-After (seconds to the
   * next minute). Fixed windows aligned to the clock's minutes; a POST refused with 429 does not count.
   */
  quotaPerMinute: number;
}

export type FaultMethod = 'GET' | 'POST';

export const NO_FAULTS: FaultConfig = {
  latencyMs: 0,
  responseDelayMs: 0,
  errorRate: 0,
  rateLimitRate: 0,
  retryAfterSeconds: 1,
  dropRate: 0,
  lostResponseRate: 0,
  idpOutage: false,
  rejectClaves: [],
  forbiddenUsers: [],
  targets: ['idp', 'recepcion', 'fe'],
  methods: ['GET', 'POST'],
  indexDelayMs: 0,
  quotaPerMinute: 0,
};

const fraction = z.number().min(0).max(1);

export const faultPatchSchema = z
  .object({
    latencyMs: z.number().int().min(0).max(600_000),
    responseDelayMs: z.number().int().min(0).max(600_000),
    errorRate: fraction,
    rateLimitRate: fraction,
    retryAfterSeconds: z.number().int().min(0).max(3600),
    dropRate: fraction,
    lostResponseRate: fraction,
    idpOutage: z.boolean(),
    rejectClaves: z.array(z.string()),
    forbiddenUsers: z.array(z.string()),
    targets: z.array(z.enum(['idp', 'recepcion', 'fe'])),
    methods: z.array(z.enum(['GET', 'POST'])),
    indexDelayMs: z.number().int().min(0).max(3_600_000),
    quotaPerMinute: z.number().int().min(0).max(1_000_000),
    /** true: start from no faults before applying the other fields. */
    reset: z.boolean(),
  })
  .partial()
  .strict();

export type FaultPatch = z.infer<typeof faultPatchSchema>;

export function applyFaultPatch(current: FaultConfig, patch: FaultPatch): FaultConfig {
  const { reset, ...rest } = patch;
  const base = reset ? { ...NO_FAULTS } : { ...current };
  const next: FaultConfig = { ...base };
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) (next as unknown as Record<string, unknown>)[k] = v;
  if (next.errorRate + next.rateLimitRate + next.dropRate > 1) throw new RangeError('errorRate + rateLimitRate + dropRate must be ≤ 1');
  return next;
}

export type FaultDecision = 'none' | 'drop' | 'error' | 'ratelimit';

/** Decides the fault for one request: at most one of drop / 5xx / 429, one random draw. */
export function decideFault(f: FaultConfig, random: () => number): FaultDecision {
  if (f.dropRate === 0 && f.errorRate === 0 && f.rateLimitRate === 0) return 'none';
  const r = random();
  if (r < f.dropRate) return 'drop';
  if (r < f.dropRate + f.errorRate) return 'error';
  if (r < f.dropRate + f.errorRate + f.rateLimitRate) return 'ratelimit';
  return 'none';
}

/** The answer of IssuerQuota.take. `resetSec`: epoch seconds when the current window ends (X-Ratelimit-Reset). */
export type QuotaDecision =
  | { ok: true; limit: number; remaining: number; resetSec: number }
  | { ok: false; limit: number; remaining: 0; resetSec: number; retryAfterSec: number };

/**
 * Per-issuer POST counts in fixed one-minute windows aligned to the clock's minutes (window = floor(now / 60 s)),
 * the same windows as the emulator's X-Ratelimit-* headers. Counts of past windows are dropped.
 */
export class IssuerQuota {
  private window = Number.NaN;
  private readonly counts = new Map<string, number>();

  /** Counts one POST of `issuer` when it is within `limit` this minute; otherwise says how long to wait. */
  take(issuer: string, limit: number, now: number): QuotaDecision {
    const w = Math.floor(now / 60_000);
    if (w !== this.window) {
      this.window = w;
      this.counts.clear();
    }
    const end = (w + 1) * 60_000;
    const resetSec = end / 1000;
    const used = this.counts.get(issuer) ?? 0;
    if (used >= limit) return { ok: false, limit, remaining: 0, resetSec, retryAfterSec: Math.max(1, Math.ceil((end - now) / 1000)) };
    this.counts.set(issuer, used + 1);
    return { ok: true, limit, remaining: limit - used - 1, resetSec };
  }
}

/** mulberry32: small seeded PRNG for reproducible fault runs. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
