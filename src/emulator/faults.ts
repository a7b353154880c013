/**
 * Fault injection for tests and chaos runs, set at start and through `/_emulator/faults`.
 * Random decisions use an injectable source (`random`), so runs are reproducible with a seed.
 */
import { z } from 'zod';
import { overText, readUserFileSync } from '../adapters/user-files.js';
import { findingsFromZod } from '../core/input/findings.js';
import { strictObject } from '../core/input/unknown-keys.js';
import type { Finding } from '../core/model.js';
import { rejectRuleSchema, type RejectRule } from './reject-rules.js';

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
  /** These claves are rejected whatever their content (-9090). */
  rejectClaves: string[];
  /** Rejections by predicate (numeroReferencia, emisor, kind, a line's Detalle): reject-rules.ts. */
  reject: RejectRule[];
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
  reject: [],
  forbiddenUsers: [],
  targets: ['idp', 'recepcion', 'fe'],
  methods: ['GET', 'POST'],
  indexDelayMs: 0,
  quotaPerMinute: 0,
};

const FRACTION = 'must be a number from 0 to 1';
const fraction = z.number().min(0, FRACTION).max(1, FRACTION);
const whole = (max: number) => {
  const m = `must be a whole number from 0 to ${max}`;
  return z.number({ error: m }).int(m).min(0, m).max(max, m);
};
const ms = (max: number, description: string) => whole(max).meta({ description });

/** The faults, field by field: one definition for the run-time patch (`/_emulator/faults`) and the fault file. */
const faultFields = {
  errorRate: fraction.meta({ description: 'Fraction of API requests answered 503 before any processing.' }),
  lostResponseRate: fraction.meta({ description: 'Fraction processed normally whose connection is cut before the answer is written.' }),
  rateLimitRate: fraction.meta({ description: 'Fraction answered 429 with Retry-After before any processing.' }),
  dropRate: fraction.meta({ description: 'Fraction whose connection is destroyed before any processing.' }),
  retryAfterSeconds: whole(3600).meta({ description: 'Retry-After seconds of the rateLimitRate 429s (default 1).' }),
  latencyMs: ms(600_000, 'Added delay before handling each API request, ms.'),
  responseDelayMs: ms(600_000, 'Added delay after processing, before the answer is written, ms.'),
  indexDelayMs: ms(3_600_000, 'For this long after a POST was accepted, GET /recepcion/{clave} answers 404 as for an unknown clave (as the real sandbox), ms.'),
  quotaPerMinute: whole(1_000_000).meta({ description: 'Per-issuer POST /recepcion quota per clock minute; over it, 429 with Retry-After (0 = off).' }),
  idpOutage: z.boolean().meta({ description: 'The IdP answers 503 to every request.' }),
  rejectClaves: z.array(z.string()).meta({ description: 'These claves are rejected (-9090) whatever their content.' }),
  reject: z.array(rejectRuleSchema).max(1000).meta({ description: 'Rejections by predicate, each rule applied to every received comprobante.' }),
  forbiddenUsers: z.array(z.string()).meta({ description: 'Reception answers 403 to these IdP usernames.' }),
  targets: z.array(z.enum(['idp', 'recepcion', 'fe'])).meta({ description: 'APIs the random faults apply to (default all).' }),
  methods: z.array(z.enum(['GET', 'POST'])).meta({ description: 'HTTP methods the random faults apply to (default both).' }),
};

export const faultPatchSchema = z
  .object({
    ...faultFields,
    /** true: start from no faults before applying the other fields. */
    reset: z.boolean(),
  })
  .partial()
  .strict();

const opt = <T extends z.ZodType>(t: T) => t.optional();

/**
 * The fault file (`fecr hacienda serve --faults FILE`, a local profile's `emulatorFaults`, `fecr test --faults`):
 * the faults of a run, and the seed of its random ones. schemas/faults.schema.json is made from this schema
 * (faultFileJsonSchema; checked by test/fault-file.test.ts).
 */
export const faultFileSchema = strictObject({
  $schema: z.string().optional().meta({ description: 'The JSON schema of this file, for editors (ignored).' }),
  seed: z.number().int().min(0).max(0xffff_ffff).optional().meta({ description: 'Seed of the random faults: the same seed, the same faults in the same order of requests.' }),
  errorRate: opt(faultFields.errorRate),
  lostResponseRate: opt(faultFields.lostResponseRate),
  rateLimitRate: opt(faultFields.rateLimitRate),
  dropRate: opt(faultFields.dropRate),
  retryAfterSeconds: opt(faultFields.retryAfterSeconds),
  latencyMs: opt(faultFields.latencyMs),
  responseDelayMs: opt(faultFields.responseDelayMs),
  indexDelayMs: opt(faultFields.indexDelayMs),
  quotaPerMinute: opt(faultFields.quotaPerMinute),
  idpOutage: opt(faultFields.idpOutage),
  rejectClaves: opt(faultFields.rejectClaves),
  reject: opt(faultFields.reject),
  forbiddenUsers: opt(faultFields.forbiddenUsers),
  targets: opt(faultFields.targets),
  methods: opt(faultFields.methods),
})
  .superRefine((f, ctx) => {
    if ((f.errorRate ?? 0) + (f.rateLimitRate ?? 0) + (f.dropRate ?? 0) > 1) ctx.addIssue({ code: 'custom', path: ['errorRate'], message: 'errorRate + rateLimitRate + dropRate must be at most 1' });
  })
  .meta({ title: 'fecr fault file', description: "Faults of fecr's Hacienda emulator (docs/faults.md)." });

/** A fault file read: the faults to start with, and the seed of the random ones. */
export interface FaultFile {
  faults: FaultPatch;
  seed?: number;
}

/** A fault file that cannot be used: its findings (`reject[1].codigo: …`), or none when it cannot be read. */
export class FaultFileError extends Error {
  constructor(
    readonly file: string,
    readonly findings: Finding[],
    message = `${file}: invalid fault file: ${findings.length} finding${findings.length === 1 ? '' : 's'}`,
  ) {
    super(message);
    this.name = 'FaultFileError';
  }
}

/**
 * The most a fault file may hold: `reject` has at most 1 000 rules (the schema above), each at most about 1.4 KB
 * (a 1 000-character mensaje, a 200-character detalleContains, a clave, pretty-printed): 1.4 MB for the fullest file.
 * 4 MiB leaves room for escapes and indentation. A bigger one (a link to /dev/zero, a log named by mistake) is
 * refused before it is read whole (issue 37).
 */
export const FAULT_FILE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Reads and parses a fault file (`shown`: its name in messages, default the path); throws FaultFileError. Read as a
 * user's file (adapters/user-files.ts): a regular file (a symlink to one), never a FIFO or a device, at most
 * FAULT_FILE_MAX_BYTES.
 */
export function readFaultFile(file: string, shown = file): FaultFile {
  const got = readUserFileSync(file, { maxBytes: FAULT_FILE_MAX_BYTES });
  if ('refused' in got) throw new FaultFileError(shown, [], `${shown}: cannot read the fault file (${got.refused})`);
  if (got.over) throw new FaultFileError(shown, [], `${shown}: cannot read the fault file (${overText(got.size, FAULT_FILE_MAX_BYTES, 'a fault file')})`);
  return parseFaultFile(got.bytes.toString('utf8'), shown);
}

/** Parses a fault file's text (JSON); throws FaultFileError with the findings. */
export function parseFaultFile(text: string, file: string): FaultFile {
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new FaultFileError(file, [{ path: '(file)', message: `not JSON: ${e instanceof Error ? e.message : String(e)}` }]);
  }
  const r = faultFileSchema.safeParse(json);
  if (!r.success) throw new FaultFileError(file, findingsFromZod(r.error).map((f) => (f.path === '(body)' ? { ...f, path: '(file)' } : f)));
  const { $schema: _schema, seed, ...faults } = r.data;
  return { faults, ...(seed !== undefined ? { seed } : {}) };
}

/** The JSON schema of the fault file (schemas/faults.schema.json), as its writer types it. */
export function faultFileJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(faultFileSchema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

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
