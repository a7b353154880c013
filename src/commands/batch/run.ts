import { createWriteStream, existsSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { encodingFlag, resolvePath, writeLine } from '../../cli/io.js';
import { canRedraw, info, printJson, progressStyle, terminalColumns } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { renderTable } from '../../cli/table.js';
import type { BatchResult, BatchSummary } from '../../client/batch/runner.js';
import { withBackend } from '../backend.js';
import { CREDENTIALS_REFUSED } from '../../core/lifecycle.js';
import { erroresLines, heldLine, issuerOfClave } from '../documents/shared.js';
import { certificateWarnings, printCertificateWarnings } from '../emisor/cert-warning.js';
import { sendingBackend } from '../contingency/shared.js';

export interface BatchFlags {
  concurrency?: string;
  out?: string;
  resume?: boolean;
  restart?: boolean;
  dryRun?: boolean;
  encoding?: string;
  delimiter?: string;
  decimalComma?: boolean;
  wait?: boolean;
  timeout?: string;
  json?: boolean;
  /** Every document's clave situación (issue 30); else the body's, else the profile's `contingencia: auto`. */
  situacion?: string;
  /** Sign and send even the rows Hacienda is known to reject (validate's findings with Hacienda's code; issue 36). */
  force?: boolean;
}


/**
 * A batch allocates steadily for minutes (documents, XML, SQL rows) while keeping little alive: V8 would let the
 * heap grow up to 4× what survives each full collection. A fixed growth of 1.5× keeps the peak RSS of a
 * 10,000-row batch near 260 MB instead of 320 MB, for a few per cent more time in the collector
 * (docs/benchmarks.md). The flag is read at each collection, so setting it now takes effect.
 */
const BATCH_HEAP_GROWING_PERCENT = 50;

export async function run(ctx: Ctx, file: string, opts: BatchFlags): Promise<void> {
  setFlagsFromString(`--heap-growing-percent=${BATCH_HEAP_GROWING_PERCENT}`);
  const { readBatch, scanBatch, formatOf, ReaderError } = await import('../../client/batch/reader.js');
  const format = formatOf(file);
  if (!format) throw new UsageError(`${file}: the batch file must end in .csv, .json or .jsonl`);
  const concurrency = intFlag('--concurrency', opts.concurrency, 8, 1, 256);
  if (!opts.wait && opts.timeout !== undefined) throw new UsageError('--timeout needs --wait');
  if (opts.dryRun && (opts.resume || opts.wait || opts.restart || opts.force)) {
    throw new UsageError(`--dry-run sends nothing: it cannot be combined with ${opts.resume ? '--resume' : opts.restart ? '--restart' : opts.wait ? '--wait' : '--force'}`);
  }
  if (opts.resume && opts.restart) throw new UsageError('--resume continues the earlier run and --restart starts over: pass one of them');
  const readOpts = { ...(await readOptions(opts, format)), name: file };
  const timeoutMs = intFlag('--timeout', opts.timeout, 120, 1, 86_400) * 1000;
  const input = resolvePath(ctx.io, file);
  if (!existsSync(input)) throw new UserError(`${file}: no such file`);
  if (statSync(input).isDirectory()) throw new UserError(`${file}: is a directory`);
  const outName = opts.out ?? `${file}${opts.dryRun ? '.dry-run' : ''}.results.jsonl`;
  const outPath = resolvePath(ctx.io, outName);
  const journalPath = `${input}.journal`;

  // Nothing is written before the run is sure to start: an earlier run's journal and results are continued
  // (--resume), moved aside (--restart) or left as they are (a refusal), and the input is read through once
  // (its encoding, its CSV header and dialect) before the results file is opened.
  if (!opts.dryRun && !opts.resume) {
    const earlier = [journalPath, outPath].filter((f) => existsSync(f));
    if (earlier.length && !opts.restart) {
      const names = earlier.map((f) => (f === journalPath ? `${file}.journal` : outName));
      throw new UsageError(
        `${names.join(' and ')} ${names.length > 1 ? 'exist' : 'exists'} from an earlier run: pass --resume to continue it, or --restart to move ${names.length > 1 ? 'them' : 'it'} aside and start over`,
      );
    }
  }
  let total: number;
  try {
    total = await scanBatch(input, format, readOpts);
  } catch (e) {
    if (e instanceof ReaderError) throw new UserError(`${file}: ${e.message}`);
    throw e;
  }
  if (opts.restart) {
    const moved = moveAside([journalPath, outPath], ctx.now());
    if (moved.length) info(ctx, `moved the earlier run aside: ${moved.map((m) => path.relative(ctx.io.cwd, m) || m).join(', ')}`);
  }

  const out = createWriteStream(outPath, { flags: 'w' });
  const outError = new Promise<never>((_, reject) => out.on('error', (e) => reject(new UserError(`${opts.out ?? outPath}: cannot write (${(e as NodeJS.ErrnoException).code ?? e.message})`))));
  outError.catch(() => undefined);
  const failed = new FailedRows();
  const held = new Map<string, number>();
  // The issuers of the documents sent, and the warnings about their certificates' end (printed after the summary).
  const issuers = new Set<string>();
  let certWarnings: string[] = [];
  const onResult = (r: BatchResult) => {
    failed.add(r);
    if (r.clave) issuers.add(issuerOfClave(r.clave) ?? '');
    if (r.estado === CREDENTIALS_REFUSED && r.clave) {
      const issuer = issuerOfClave(r.clave) ?? '';
      held.set(issuer, (held.get(issuer) ?? 0) + 1);
    }
    out.write(JSON.stringify(r) + '\n');
  };
  const progress = progressLine(ctx);
  // The total of the progress line: the count of the first pass over the file.
  progress.setTotal(total);

  let stopper: (() => void) | undefined;
  let interrupted = false;
  const mailing = new AbortController();
  let mailsLeft: number | undefined;
  const onSigint = () => {
    interrupted = true;
    mailing.abort();
    if (stopper) stopper();
    info(ctx, '\ninterrupted: finishing the documents in flight…');
  };
  process.on('SIGINT', onSigint);

  let summary: BatchSummary;
  let fatal: Error | undefined;
  try {
    const items = readBatch(input, format, readOpts);
    if (opts.dryRun) {
      const { validateBatch } = await import('../../client/batch/dry-run.js');
      summary = await validateBatch(items, { onResult, onProgress: progress.update, isStopped: () => interrupted, now: ctx.now });
    } else {
      const [{ readJournal, JournalWriter }, { BatchRunner }] = await Promise.all([import('../../client/batch/journal.js'), import('../../client/batch/runner.js')]);
      const finished = opts.resume ? await readJournal(journalPath) : undefined;
      summary = await withBackend(ctx, async (sender) => {
        const backend = await sendingBackend(ctx, sender, opts.situacion);
        const journal = await JournalWriter.open(journalPath);
        const runner = new BatchRunner({
          backend,
          concurrency,
          journal,
          ...(finished ? { finished } : {}),
          onResult,
          onProgress: progress.update,
          ...(opts.force ? { force: true } : {}),
          // Waiting is cheap in local mode (one shared query watches every waiting document), and enough documents
          // must wait at once to cover the verdict's latency (the emulator batches XSD runs under load) without
          // holding up submissions. A hosted service is polled per document: fewer at once.
          ...(opts.wait ? { wait: { timeoutMs, concurrency: backend.mode === 'local' ? Math.max(128, concurrency * 16) : Math.max(16, concurrency * 4) } } : {}),
        });
        stopper = () => runner.stop();
        if (interrupted) runner.stop();
        try {
          const done = await runner.run(items);
          certWarnings = await certificateWarnings(ctx, backend, issuers);
          if (opts.wait && !interrupted && !runner.fatal) {
            progress.done();
            mailsLeft = await deliverQueuedMail(ctx, backend, mailing.signal);
          }
          return done;
        } finally {
          fatal = runner.fatal;
          await journal.close();
        }
      }, { bulk: true });
    }
    // Every item was read: the total is what was read, whatever the count said.
    if (!interrupted && !summary.interrupted) progress.setTotal(summary.total);
  } catch (e) {
    if (e instanceof ReaderError) throw new UserError(`${file}: ${e.message}`);
    throw e;
  } finally {
    process.off('SIGINT', onSigint);
    progress.done();
    await Promise.race([new Promise<void>((resolve) => out.end(resolve)), outError]);
  }
  if (interrupted) summary.interrupted = true;

  printSummary(ctx, summary, opts, opts.out ?? outPath, failed, mailsLeft);
  printCertificateWarnings(ctx, certWarnings);
  // Held because Hacienda refused an issuer's credentials: one line per issuer, with the fix.
  for (const [issuer, count] of held) info(ctx, `error: ${heldLine(issuer || undefined, { count })}`);
  if (fatal) throw new UserError((fatal as Error).message, EXIT.auth);
  if (summary.interrupted) {
    info(ctx, `interrupted: ${summary.total} document${summary.total === 1 ? '' : 's'} processed; run the same command with --resume to continue`);
    throw new SilentExit(EXIT.interrupted);
  }
  if (summary.invalid > 0 || summary.errors > 0) throw new SilentExit(EXIT.error);
  if (held.size > 0) throw new SilentExit(EXIT.auth);
  if (opts.wait && (summary.rechazado ?? 0) > 0) throw new SilentExit(EXIT.rejected);
  if (opts.wait && (summary.pending ?? 0) > 0) throw new SilentExit(EXIT.pending);
}

/** --encoding, --delimiter and --decimal-comma as the reader takes them (the last two for a CSV only). */
async function readOptions(opts: BatchFlags, format: string): Promise<import('../../client/batch/reader.js').BatchReadOptions> {
  const { delimiterOf } = await import('../../client/batch/csv-dialect.js');
  if (format !== 'csv' && (opts.delimiter !== undefined || opts.decimalComma)) throw new UsageError(`${opts.delimiter !== undefined ? '--delimiter' : '--decimal-comma'} is for a CSV file`);
  let delimiter;
  if (opts.delimiter !== undefined) {
    delimiter = delimiterOf(opts.delimiter);
    if (!delimiter) throw new UsageError('--delimiter must be ",", ";" or tab');
  }
  return { encoding: encodingFlag(opts.encoding), ...(delimiter ? { delimiter } : {}), ...(opts.decimalComma ? { decimalComma: true } : {}) };
}

/**
 * --restart: the earlier run's files renamed with a timestamp suffix (`FILE.journal.20260302T151617Z`, then `-2`, `-3`
 * if that name is taken), never overwritten. Returns the new names.
 */
function moveAside(files: string[], now: Date): string[] {
  const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
  const moved: string[] = [];
  for (const f of files) {
    if (!existsSync(f)) continue;
    let to = `${f}.${stamp}`;
    for (let n = 2; existsSync(to); n++) to = `${f}.${stamp}-${n}`;
    renameSync(f, to);
    moved.push(to);
  }
  return moved;
}

function intFlag(flag: string, value: string | undefined, dflt: number, min: number, max: number): number {
  if (value === undefined) return dflt;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}`);
  return n;
}

/**
 * After the verdicts, the mails to the receptors that they queued (local mode: nothing runs between two commands;
 * a hosted service mails on its own). A batch takes every verdict first and mails afterwards, so that the mails'
 * PDFs do not slow the documents down. Ctrl-C leaves the rest queued for the next command (or `fecr serve`).
 * Returns how many are left (undefined: none was queued).
 */
async function deliverQueuedMail(ctx: Ctx, backend: import('../../client/backend.js').Backend, signal: AbortSignal): Promise<number | undefined> {
  let queued: number | undefined;
  let told = Date.now();
  const left = await backend.deliverQueuedMail({
    signal,
    onProgress: (n) => {
      if (queued === undefined) {
        queued = n;
        if (n > 0) info(ctx, `mails to receptors: sending ${n}…`);
      } else if (n > 0 && Date.now() - told >= PROGRESS_LINE_GAP_MS) {
        info(ctx, `mails to receptors: ${queued - n} of ${queued} sent`);
        told = Date.now();
      }
    },
  });
  if (queued === undefined) return undefined;
  if (left > 0) info(ctx, `mails to receptors: ${left} still queued; the next fecr command (or fecr serve) sends them`);
  return left;
}

function printSummary(ctx: Ctx, s: BatchSummary, opts: BatchFlags, out: string, failed: FailedRows, mailsLeft?: number): void {
  if (opts.json) {
    printJson(ctx, { ...s, ...(mailsLeft !== undefined ? { mailsLeft } : {}), results: out, failed: failed.first });
    return;
  }
  const header = opts.dryRun ? ['total', 'valid', 'invalid', 'errors'] : ['total', 'sent', 'invalid', 'errors'];
  const row = [s.total, s.sent, s.invalid, s.errors].map(String);
  if (!opts.dryRun && s.skipped > 0) {
    header.push('resumed');
    row.push(String(s.skipped));
  }
  if (opts.wait) {
    header.push('aceptado', 'rechazado', 'pending');
    row.push(String(s.aceptado ?? 0), String(s.rechazado ?? 0), String(s.pending ?? 0));
  }
  writeLine(ctx.io.stdout, renderTable(ctx, header, [row]));
  if (failed.count > 0) {
    info(ctx, `failed: ${failed.count} of ${s.total} document${s.total === 1 ? '' : 's'}`);
    // A row's error quotes its input (a CSV or JSON line from outside): through the sanitiser.
    for (const f of failed.first) {
      info(ctx, `  row ${f.row}${f.numeroReferencia !== undefined ? ` (numeroReferencia ${safeText(String(f.numeroReferencia))})` : ''}: ${safeText(f.error)}`);
      // Hacienda's reasons, one line each (`rechazado: -408 …`, `aviso: -37 …`).
      if (f.estado && f.errores) for (const line of erroresLines({ estado: f.estado, errores: f.errores, detalleMensaje: null })) info(ctx, `    ${line}`);
    }
    if (failed.count > failed.first.length) info(ctx, `  … and ${failed.count - failed.first.length} more in ${out}`);
  }
  info(ctx, `results: ${out}`);
}

/** A failed document as the summary lists it: its row and its first finding (or Hacienda's verdict). */
export interface FailedRow {
  row: number;
  numeroReferencia?: string | number;
  state: BatchResult['state'];
  estado?: BatchResult['estado'];
  clave?: string;
  error: string;
  /** Hacienda's list, for a document it rejected. */
  errores?: BatchResult['errores'];
}

/** How many failed rows the summary lists (all of them are in the results file). */
const FAILED_LISTED = 20;

/**
 * The failed documents of a batch: invalid, error, and (with --wait) rejected by Hacienda. Keeps the count and
 * the FAILED_LISTED lowest rows (results arrive in completion order, not in row order).
 */
class FailedRows {
  count = 0;
  first: FailedRow[] = [];

  add(r: BatchResult): void {
    const f = failedRow(r);
    if (!f) return;
    this.count++;
    this.first.push(f);
    if (this.first.length > FAILED_LISTED) {
      this.first.sort((a, b) => a.row - b.row);
      this.first.pop();
    }
  }
}

function failedRow(r: BatchResult): FailedRow | undefined {
  const base = { row: r.row, ...(r.numeroReferencia !== undefined ? { numeroReferencia: r.numeroReferencia } : {}), state: r.state };
  if (r.state === 'invalido' || r.state === 'error') {
    // The first finding that names a field; a headline without a path ("Campos requeridos faltantes") only when alone.
    const first = r.errors?.find((e) => e.path !== '') ?? r.errors?.[0];
    return { ...base, error: first ? (first.path ? `${first.path}: ${first.message}` : first.message) : r.state };
  }
  if (r.state === 'enviado' && (r.estado === 'rechazado' || r.estado === 'error')) {
    const verdict = r.estado === 'rechazado' ? 'rechazado by Hacienda' : 'Hacienda answered "error"';
    return { ...base, estado: r.estado, ...(r.clave ? { clave: r.clave } : {}), error: `${verdict} (clave ${r.clave ?? '?'})`, ...(r.errores ? { errores: r.errores } : {}) };
  }
  return undefined;
}

/** In "lines" style, one progress line every 5 s at most (and the last one at the end). */
const PROGRESS_LINE_GAP_MS = 5000;

/**
 * Progress on stderr, as progressStyle (src/cli/output.ts) decides: "redraw", one line rewritten in place at most
 * 10 times a second (cut to the terminal's known width, so a narrow terminal does not wrap it); "lines", a plain
 * line every 5 s at most and the last figures at the end (a terminal that must not be redrawn: 0 columns, CI,
 * TERM=dumb); "none", nothing (stderr not a terminal). The line: `done/total done · sent · failed · rate/s · ETA`;
 * the total is "?" until setTotal (the batch counts its file beside the run), and the ETA is shown once the total
 * and a rate are known.
 */
export function progressLine(
  ctx: Ctx,
  opts: { now?: () => number } = {},
): { update: (s: BatchSummary) => void; setTotal: (n: number) => void; done: () => void; active: boolean } {
  const style = progressStyle(ctx, 'stderr');
  if (style === 'none') return { update: () => undefined, setTotal: () => undefined, done: () => undefined, active: false };
  const now = opts.now ?? Date.now;
  const stderr = ctx.io.stderr;
  const started = now();
  const gap = style === 'redraw' ? 100 : PROGRESS_LINE_GAP_MS;
  let last = -Infinity;
  let shown = false;
  let total: number | undefined;
  /** Documents done at the last draw (the runner passes the same summary object, updated in place). */
  let drawn = -1;
  const count = (s: BatchSummary) => s.sent + s.invalid + s.errors;
  const figures = (s: BatchSummary) => {
    const secs = (now() - started) / 1000;
    const done = count(s);
    const rate = secs > 0 ? done / secs : 0;
    const parts = [`${done}/${total ?? '?'} done`, `${s.sent} sent`, `${s.invalid + s.errors} failed`, `${Math.round(rate)}/s`];
    if (total !== undefined && done < total && rate > 0) parts.push(`ETA ${duration((total - done) / rate)}`);
    return parts.join(' · ');
  };
  const draw = (s: BatchSummary) => {
    drawn = count(s);
    if (style === 'lines') {
      writeLine(stderr, figures(s));
      return;
    }
    // The width is read at each draw (the terminal may be resized); none known any more: this frame is skipped.
    const columns = canRedraw(ctx, 'stderr') ? terminalColumns(ctx, 'stderr') : undefined;
    if (columns === undefined) return;
    stderr.write(`\r\x1b[K${[...figures(s)].slice(0, columns - 1).join('')}`);
    shown = true;
  };
  let lastSummary: BatchSummary | undefined;
  let finished = false;
  return {
    active: true,
    update: (s) => {
      lastSummary = s;
      const t = now();
      if (t - last < gap) return;
      last = t;
      draw(s);
    },
    setTotal: (n) => {
      total = n;
    },
    done: () => {
      if (finished) return;
      finished = true;
      if (lastSummary && (style === 'redraw' || count(lastSummary) !== drawn)) draw(lastSummary);
      if (shown) stderr.write('\n');
    },
  };
}

/** 45s, 3m05s, 2h46m: a time left, rounded up. */
function duration(seconds: number): string {
  const s = Math.ceil(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
}
