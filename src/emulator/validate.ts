/**
 * The emulator's validators. The checks themselves are in analyze.ts (well-formedness, signature, signer,
 * clave, totals: pure CPU work) plus the XSD validation here, batched into one `xmllint` run per schema for
 * the documents that arrive close together (BatchingXsd).
 *
 * - `createDefaultValidator()` runs the analysis on the calling thread.
 * - `createPooledValidator({ threads })` runs it on a pool of worker threads (piscina, validate-worker.ts)
 *   and keeps the XSD batching on the calling thread, so that one xmllint run still serves every worker.
 *   The verdicts are the same: both call `analyzeDocument` and merge the XSD errors the same way.
 */
import { createXsdValidator, type XsdResult, type XsdValidator } from '../adapters/xsd/index.js';
import { xercesError } from '../adapters/xsd/xerces/index.js';
import type { SchemaName } from '../core/xml/kinds.js';
import { CODIGOS, err } from './codes.js';
import {
  analyzeDocument,
  decodeUtf8,
  withXsdErrors,
  type AnalysisOptions,
  type DocumentAnalysis,
  type ValidationMeta,
  type ValidationResult,
  type XsdRequest,
} from './analyze.js';
import { defaultValidationThreads, EmulatorPool } from './pool.js';
import type { ValidationErrorItem } from './store.js';
import type { WorkerAnswer } from './validate-worker.js';

/** Documents per message to a worker thread, at most. */
const MAX_DOCS_PER_TASK = 16;

export { defaultValidationThreads, EmulatorPool } from './pool.js';

export { CODIGOS, TEXTOS, isAccepted } from './codes.js';
export { totalsErrors } from './figures.js';
export { analyzeDocument } from './analyze.js';
export type { ValidationMeta, ValidationResult, AnalysisOptions, DocumentAnalysis, XsdRequest } from './analyze.js';

/** The validator the emulator calls for each received document. */
export type ComprobanteValidator = (xml: Buffer, meta: ValidationMeta) => Promise<ValidationResult>;

export interface DefaultValidatorOptions extends AnalysisOptions {
  /** XSD validator (default: core createXsdValidator(), binary when available); false skips XSD. */
  xsd?: XsdValidator | false;
  /**
   * Collect documents arriving within this window into one xmllint run (default 10 ms; 0 = no batching).
   * Under load the window grows (see BatchingXsd).
   */
  xsdBatchWindowMs?: number;
}

/**
 * Groups XSD validations that arrive close together into one validator call (one xmllint process) per
 * schema. Each xmllint run pays a fixed cost (≈ 8 ms of CPU to load the v4.4 schemas) besides ≈ 0.25 ms
 * per document, so batches must not stay small under load:
 *
 * - a document arriving after a quiet spell waits `windowMs` (default 10 ms) for company;
 * - while documents keep coming (the previous batch of that schema was started less than `busyWindowMs`
 *   ago, or is still running) the window is `busyWindowMs` (default 300 ms: ≈ 90 documents per run at
 *   300 documents/s);
 * - a queue of `maxBatch` documents is sent at once.
 */
export class BatchingXsd {
  private readonly queues = new Map<SchemaName, { xml: string; resolve: (r: XsdResult) => void; reject: (e: unknown) => void }[]>();
  private readonly timers = new Map<SchemaName, NodeJS.Timeout>();
  private readonly lastFlush = new Map<SchemaName, number>();
  private readonly running = new Map<SchemaName, number>();
  private readonly busyWindowMs: number;
  /** Batches sent to the inner validator (for tests and benchmarks). */
  batches = 0;

  constructor(
    private readonly inner: XsdValidator,
    private readonly windowMs: number,
    private readonly maxBatch = 200,
    busyWindowMs?: number,
  ) {
    this.busyWindowMs = Math.max(windowMs, busyWindowMs ?? 300);
  }

  validate(xml: string, schema: SchemaName): Promise<XsdResult> {
    if (this.windowMs <= 0) return this.inner.validate(xml, schema).then((r) => r[0]!);
    return new Promise((resolve, reject) => {
      let q = this.queues.get(schema);
      if (!q) this.queues.set(schema, (q = []));
      q.push({ xml, resolve, reject });
      if (q.length >= this.maxBatch) this.flush(schema);
      else if (!this.timers.has(schema)) this.timers.set(schema, setTimeout(() => this.flush(schema), this.window(schema)));
    });
  }

  private window(schema: SchemaName): number {
    const busy = (this.running.get(schema) ?? 0) > 0 || performance.now() - (this.lastFlush.get(schema) ?? -Infinity) < this.busyWindowMs;
    return busy ? this.busyWindowMs : this.windowMs;
  }

  private flush(schema: SchemaName): void {
    const t = this.timers.get(schema);
    if (t) clearTimeout(t);
    this.timers.delete(schema);
    const q = this.queues.get(schema) ?? [];
    this.queues.delete(schema);
    if (q.length === 0) return;
    this.batches++;
    this.lastFlush.set(schema, performance.now());
    this.running.set(schema, (this.running.get(schema) ?? 0) + 1);
    const finished = () => {
      this.running.set(schema, (this.running.get(schema) ?? 1) - 1);
      this.lastFlush.set(schema, performance.now());
    };
    this.inner
      .validate(
        q.map((e) => e.xml),
        schema,
      )
      .then(
        (results) => {
          finished();
          q.forEach((e, i) => e.resolve(results[i] ?? { valid: false, errors: [{ message: 'no result from the XSD validator' }] }));
        },
        (e: unknown) => {
          finished();
          q.forEach((x) => x.reject(e));
        },
      );
  }
}

/** Runs the XSD step of an analysis and returns the complete result. */
async function completeWithXsd(analysis: DocumentAnalysis, xmlBytes: Uint8Array, xsd: BatchingXsd | undefined): Promise<ValidationResult> {
  const req = analysis.xsd;
  if (!req || !xsd) return withXsdErrors(analysis, []);
  return withXsdErrors(analysis, await xsdErrors(req, decodeUtf8(xmlBytes) ?? '', xsd));
}

async function xsdErrors(req: XsdRequest, text: string, xsd: BatchingXsd): Promise<ValidationErrorItem[]> {
  const out: ValidationErrorItem[] = [];
  try {
    let r = await xsd.validate(text, req.schema);
    if (!r.valid && req.fallback) {
      const alt = await xsd.validate(text, req.fallback);
      if (alt.valid) r = alt;
    }
    // Hacienda lists only the first schema error, in its validator's words (Java's Xerces), with the line and
    // column Xerces reports (NOTES §6.3). xmllint's first error is retold as Xerces' on this (error) path only.
    const first = r.errors[0];
    if (first) {
      const x = xercesError(text, req.schema, first);
      out.push(err(CODIGOS.ESQUEMA, x.message, x.fila, x.columna));
    }
  } catch (e) {
    out.push(err(CODIGOS.ERROR_INTERNO, `No se pudo validar el esquema XSD: ${e instanceof Error ? e.message : String(e)}`));
  }
  return out;
}

function analysisOptions(opts: AnalysisOptions): AnalysisOptions {
  const o: AnalysisOptions = {};
  if (opts.signature !== undefined) o.signature = opts.signature;
  if (opts.signer !== undefined) o.signer = opts.signer;
  if (opts.totals !== undefined) o.totals = opts.totals;
  if (opts.tolerance !== undefined) o.tolerance = opts.tolerance;
  if (opts.futureToleranceMs !== undefined) o.futureToleranceMs = opts.futureToleranceMs;
  return o;
}

interface LazyXsd {
  get(): BatchingXsd | undefined;
  /** Ends the XSD validator if this created it (a validator passed in options belongs to the caller). */
  close(): Promise<void>;
}

function lazyXsd(opts: DefaultValidatorOptions): LazyXsd {
  let xsd: BatchingXsd | undefined;
  let own: XsdValidator | undefined;
  return {
    get: () => {
      if (opts.xsd === false) return undefined;
      if (!xsd) {
        // Long-lived: xmllint is started from a small helper shell, not by forking this process (binary.ts).
        const inner = opts.xsd ?? (own = createXsdValidator({ persistentShell: true }));
        xsd = new BatchingXsd(inner, opts.xsdBatchWindowMs ?? 10);
      }
      return xsd;
    },
    close: async () => {
      await own?.close?.();
    },
  };
}

/** A validator that may hold resources (worker threads, a helper process): `close()` releases them. */
export type ClosableValidator = ComprobanteValidator & { close(): Promise<void> };

/** Builds the default validator from the core modules; the analysis runs on the calling thread. */
export function createDefaultValidator(opts: DefaultValidatorOptions = {}): ClosableValidator {
  const xsd = lazyXsd(opts);
  const aOpts = analysisOptions(opts);
  const validator = async (xmlBytes: Buffer, meta: ValidationMeta): Promise<ValidationResult> =>
    completeWithXsd(analyzeDocument(xmlBytes, meta, aOpts), xmlBytes, xsd.get());
  return Object.assign(validator, { close: () => xsd.close() });
}

// --- Worker pool ------------------------------------------------------------------------------------

export interface PooledValidatorOptions extends DefaultValidatorOptions {
  /** Worker threads of the validator's own pool (default `defaultValidationThreads()`); ignored with `pool`. */
  threads?: number;
  /** Use this pool (its owner closes it). */
  pool?: EmulatorPool;
  /** Called once if the pool cannot run a task (documents are then analysed on the calling thread). */
  onPoolError?: (e: unknown) => void;
  /**
   * Use the threads only from when this many documents are being validated at the same time (default 0:
   * always). Until then documents are analysed on the calling thread and the threads are not started: a
   * process that validates one document now and then (a CLI command with the embedded emulator) does not
   * pay for starting them.
   */
  threadsFrom?: number;
}

/** A validator that analyses on worker threads: `close()` ends its own pool (not a shared one) and xmllint helper. */
export interface PooledValidator extends ClosableValidator {
  readonly pool: EmulatorPool;
}

/**
 * The default validator with the analysis on worker threads (pool.ts) and the XSD batching on the calling
 * thread, so that one xmllint run serves every thread. If the pool fails (e.g. a worker cannot start),
 * documents are analysed on the calling thread from then on, with the same checks.
 */
export function createPooledValidator(opts: PooledValidatorOptions = {}): PooledValidator {
  const pool = opts.pool ?? new EmulatorPool(Math.max(1, Math.floor(opts.threads ?? defaultValidationThreads())), opts.onPoolError);
  const ownPool = opts.pool === undefined;
  const xsd = lazyXsd(opts);
  const aOpts = analysisOptions(opts);

  // At most two tasks per thread in flight (one running, one ready); documents that arrive meanwhile wait
  // here and go together in the next task. Idle, a document goes at once; under load, the cross-thread
  // messages and wake-ups are shared by up to MAX_DOCS_PER_TASK documents.
  interface Waiting {
    xml: Buffer;
    meta: ValidationMeta;
    resolve: (a: DocumentAnalysis) => void;
    reject: (e: unknown) => void;
  }
  const waiting: Waiting[] = [];
  const maxInFlight = pool.threads * 2;
  let inFlight = 0;
  const settle = (w: Waiting, answer: WorkerAnswer[number] | undefined) => {
    try {
      if (!answer) w.resolve(analyzeDocument(w.xml, w.meta, aOpts)); // the pool failed: same checks, here
      else if (answer.ok) w.resolve(answer.analysis);
      else w.reject(new Error(answer.message));
    } catch (e) {
      w.reject(e);
    }
  };
  const dispatch = () => {
    while (waiting.length > 0 && inFlight < maxInFlight) {
      const size = Math.min(MAX_DOCS_PER_TASK, Math.ceil(waiting.length / (maxInFlight - inFlight)));
      const batch = waiting.splice(0, size);
      inFlight++;
      pool
        .run({ docs: batch.map((w) => ({ xml: w.xml, meta: w.meta })), opts: aOpts })
        .then(
          (answers) => batch.forEach((w, i) => settle(w, answers?.[i])),
          (e: unknown) => batch.forEach((w) => w.reject(e)),
        )
        .finally(() => {
          inFlight--;
          dispatch();
        });
    }
  };
  const analyse = (xml: Buffer, meta: ValidationMeta): Promise<DocumentAnalysis> =>
    new Promise((resolve, reject) => {
      waiting.push({ xml, meta, resolve, reject });
      dispatch();
    });
  const threadsFrom = Math.max(0, opts.threadsFrom ?? 0);
  let useThreads = threadsFrom === 0;
  let active = 0;
  const validator = async (xmlBytes: Buffer, meta: ValidationMeta): Promise<ValidationResult> => {
    active++;
    try {
      if (!useThreads && active >= threadsFrom) {
        useThreads = true;
        pool.warm();
      }
      const analysis = useThreads ? await analyse(xmlBytes, meta) : analyzeDocument(xmlBytes, meta, aOpts);
      return await completeWithXsd(analysis, xmlBytes, xsd.get());
    } finally {
      active--;
    }
  };
  return Object.assign(validator, {
    pool,
    close: async () => {
      await xsd.close();
      if (ownPool) await pool.close();
    },
  });
}
