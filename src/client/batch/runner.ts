/**
 * The batch runner: takes items from the (streamed) reader, submits them to the Backend with bounded concurrency,
 * journals each document before and after its submission, and reports one result per document. Reading pauses
 * while `concurrency` submissions are in flight, so memory stays flat. `stop()` (Ctrl-C) stops taking new items;
 * the ones in flight finish. With `wait`, each sent document's verdict is awaited (a separate bounded pool) and
 * its result carries it.
 */
import type { Backend, DocumentEstado } from '../backend.js';
import type { ErrorHacienda } from '../../core/xml/detalle-mensaje.js';
import type { Finding } from '../../core/model.js';
import type { BatchItem } from './reader.js';
import { bodyHash, documentKey, isUnnumbered, submissionKeyOf, type Finished, type JournalWriter, type ResultState } from './journal.js';

export interface BatchResult {
  row: number;
  numeroReferencia?: string | number;
  clave?: string;
  state: ResultState;
  /**
   * With --wait: Hacienda's verdict (or the state reached at the timeout). Without: `credenciales_invalidas` when the
   * document is held because Hacienda refused its issuer's credentials (local mode).
   */
  estado?: DocumentEstado;
  /** With --wait: Hacienda's list (DocumentStatus.errores), when it lists something. */
  errores?: ErrorHacienda[];
  errors?: Finding[];
}

export interface BatchSummary {
  total: number;
  sent: number;
  invalid: number;
  errors: number;
  /** Of `sent`: finished by an earlier run (--resume), not submitted again. */
  skipped: number;
  /** With --wait. */
  aceptado?: number;
  rechazado?: number;
  pending?: number;
  interrupted: boolean;
}

export interface RunnerOptions {
  backend: Backend;
  concurrency: number;
  journal?: JournalWriter;
  /** --resume: documents finished by an earlier run. */
  finished?: Map<string, Finished>;
  onResult: (r: BatchResult) => void;
  onProgress?: (s: BatchSummary) => void;
  wait?: { timeoutMs: number; concurrency: number };
  /** `--force`: sign and send even the rows Hacienda is known to reject (SubmitOptions.force). */
  force?: boolean;
}

export class BatchRunner {
  readonly summary: BatchSummary = { total: 0, sent: 0, invalid: 0, errors: 0, skipped: 0, interrupted: false };
  private stopped = false;
  private wake: (() => void) | undefined;
  /** An authentication failure stops the batch: every other row would fail the same way. */
  fatal: Error | undefined;
  /**
   * The first call into the backend runs alone: the local backend starts its emulator and worker lazily on first
   * use, and concurrent first calls could start two workers (one of which is never stopped).
   */
  private warm: Promise<unknown> | undefined;

  private first<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.warm) {
      const p = fn();
      this.warm = p.catch(() => undefined);
      return p;
    }
    return this.warm.then(fn);
  }

  constructor(private readonly o: RunnerOptions) {
    if (o.wait) Object.assign(this.summary, { aceptado: 0, rechazado: 0, pending: 0 });
  }

  /** Stops taking new items (in-flight ones finish). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.summary.interrupted = true;
    this.wake?.();
  }

  async run(items: AsyncIterable<BatchItem>): Promise<BatchSummary> {
    const inflight = new Set<Promise<void>>();
    const waiting = new Set<Promise<void>>();
    const limit = Math.max(1, this.o.concurrency);
    const stopping = new Promise<void>((r) => (this.wake = r));
    for await (const item of items) {
      if (this.stopped) break;
      this.summary.total++;
      if (item.errors) {
        this.emit({ row: item.row, ...num(item), state: 'invalido', errors: item.errors });
        continue;
      }
      while (inflight.size >= limit && !this.stopped) await Promise.race([...inflight, stopping]);
      if (this.stopped) {
        this.summary.total--;
        break;
      }
      const p = this.one(item, waiting).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await Promise.all(inflight);
    await Promise.all(waiting);
    return this.summary;
  }

  /** The rows without numeroReferencia are submitted one after the other, in row order: their numbers follow the rows. */
  private turn: Promise<void> = Promise.resolve();

  private takeTurn(): { wait: Promise<void>; done: () => void } {
    const wait = this.turn;
    let done!: () => void;
    this.turn = new Promise<void>((r) => (done = r));
    return { wait, done };
  }

  private async one(item: BatchItem, waiting: Set<Promise<void>>): Promise<void> {
    // Taken before anything is awaited: the rows reach here in order.
    const turn = isUnnumbered(item.body) ? this.takeTurn() : undefined;
    try {
      await this.submitOne(item, waiting, turn);
    } finally {
      turn?.done();
    }
  }

  private async submitOne(item: BatchItem, waiting: Set<Promise<void>>, turn: { wait: Promise<void>; done: () => void } | undefined): Promise<void> {
    // A row without numeroReferencia (local mode numbers it) is journaled by its row, and submitted with a key of
    // its own (journal.ts submissionKeyOf): a resumed batch gets its document back instead of a new number.
    const unnumbered = isUnnumbered(item.body);
    const key = documentKey(item.body, item.row);
    const hash = bodyHash(item.body);
    let base: Omit<BatchResult, 'state'> = { row: item.row, ...num(item) };
    const earlier = this.o.finished?.get(key);
    if (earlier && earlier.bodyHash === hash) {
      this.summary.skipped++;
      const n = unnumbered && earlier.numeroReferencia !== undefined ? { numeroReferencia: earlier.numeroReferencia } : {};
      await this.sent({ ...base, ...n, clave: earlier.clave, state: 'enviado' }, waiting);
      return;
    }
    let result: BatchResult;
    try {
      await this.o.journal?.append({ row: item.row, key, bodyHash: hash });
      const submissionKey = unnumbered && this.o.journal ? submissionKeyOf(this.o.journal.file, item.row, hash) : undefined;
      await turn?.wait;
      const { clave, estado, assigned } = await this.first(() => this.o.backend.submit(item.body, { ...(submissionKey ? { submissionKey } : {}), ...(this.o.force ? { force: true } : {}) }));
      if (assigned !== undefined) base = { ...base, numeroReferencia: assigned };
      result = { ...base, clave, state: 'enviado', ...(estado ? { estado } : {}) };
    } catch (e) {
      result = { ...base, ...(await failure(e, item)) };
      if ((e as { code?: string; name?: string }).name === 'BackendError' && (e as { code?: string }).code === 'auth') {
        this.fatal ??= e as Error;
        this.stop();
      }
    }
    // The next row without numeroReferencia may go (this one has its number, or none).
    turn?.done();
    this.o.journal?.append({ row: item.row, key, state: result.state, ...(result.clave ? { clave: result.clave } : {}), ...(result.numeroReferencia !== undefined ? { numeroReferencia: result.numeroReferencia } : {}) }).catch(() => undefined);
    if (result.state === 'enviado') await this.sent(result, waiting);
    else this.emit(result);
  }

  /** A sent document: its result now, or (with --wait) once its verdict is known, in a bounded pool. */
  private async sent(result: BatchResult, waiting: Set<Promise<void>>): Promise<void> {
    const wait = this.o.wait;
    if (!wait) return this.emit(result);
    while (waiting.size >= wait.concurrency) await Promise.race(waiting);
    const p = (async () => {
      try {
        const s = await this.first(() => this.o.backend.waitForVerdict(result.clave!, { timeoutMs: wait.timeoutMs }));
        this.emit({ ...result, estado: s.estado, ...(s.errores?.length ? { errores: s.errores } : {}) });
      } catch (e) {
        this.emit({ ...result, errors: [{ path: 'clave', message: `could not get the verdict: ${(e as Error).message}` }] });
      }
    })().finally(() => waiting.delete(p));
    waiting.add(p);
  }

  private emit(r: BatchResult): void {
    const s = this.summary;
    if (r.state === 'enviado') {
      s.sent++;
      if (r.estado === 'aceptado') s.aceptado!++;
      else if (r.estado === 'rechazado' || r.estado === 'error') s.rechazado!++;
      else if (this.o.wait) s.pending!++;
    } else if (r.state === 'invalido') s.invalid++;
    else s.errors++;
    this.o.onResult(r);
    this.o.onProgress?.(s);
  }
}

function num(item: BatchItem): { numeroReferencia?: string | number } {
  return item.numeroReferencia === undefined ? {} : { numeroReferencia: item.numeroReferencia };
}

/** A submission failure as a result: refused input → invalido with its findings (pointed at CSV rows); else error. */
async function failure(e: unknown, item: BatchItem): Promise<Pick<BatchResult, 'state' | 'errors'>> {
  const { BackendError } = await import('../backend.js');
  const rows = item.csvRows;
  const mapRows = async (fs: Finding[]) => {
    if (!rows) return fs;
    const { findingForRows } = await import('./csv-findings.js');
    return fs.map((f) => findingForRows(f, rows));
  };
  if (e instanceof BackendError) {
    const errors = e.findings.length ? await mapRows(e.findings) : [{ path: '', message: e.message }];
    if (e.code === 'invalid') {
      if (e.findings.length && !errors.some((f) => f.message === e.message)) errors.unshift({ path: '', message: e.message });
      return { state: 'invalido', errors };
    }
    return { state: 'error', errors: [{ path: '', message: e.message }] };
  }
  return { state: 'error', errors: [{ path: '', message: `internal error: ${(e as Error)?.message ?? String(e)}` }] };
}
