/**
 * Batch input, streamed so memory stays flat whatever the file size: `.jsonl` (one body per line), `.json` (a
 * top-level array of bodies, split element by element), `.csv` (one row per line item, docs/batch-csv.md).
 * Every unit becomes an item: a body to submit, or the findings of a malformed line/element/row, never a throw
 * (a file that cannot be read at all, a byte that is not in the file's encoding, a CSV header that is not the layout
 * or amounts in a dialect not declared, is a ReaderError: `scanBatch` finds these in a first pass, before anything is
 * sent or written). The text is decoded by the client's one text reader (../text-input.ts). A JSON body's figures it
 * leaves out are computed (core/input/complete.ts); a CSV gives none.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { echo } from '../../core/echo.js';
import { completedInput } from '../../core/input/complete.js';
import type { Finding } from '../../core/model.js';
import { JsonSyntaxError, parseJsonText, type TextStart } from '../json-text.js';
import { decodeChunks, TextEncodingError, type TextEncoding } from '../text-input.js';
import type { CsvDelimiter } from './csv-dialect.js';

export type BatchFormat = 'csv' | 'json' | 'jsonl';

export interface BatchItem {
  /** CSV: file line of the document's first row; JSONL: file line; JSON: element number (from 1). */
  row: number;
  /** The document body, when it could be read. */
  body?: unknown;
  /** numeroReferencia as read, for the results (also for failed items when known). */
  numeroReferencia?: string | number;
  /** Why the item could not be read (it is then an invalid result). */
  errors?: Finding[];
  /** CSV: the file lines of the document's rows and references (to point the service's findings at rows). */
  csvRows?: import('./csv-findings.js').CsvRowMap;
}

export class ReaderError extends Error {}

/** How to read the file: its encoding (default UTF-8), and a CSV's separator (default: read from the header) and decimal mark. */
export interface BatchReadOptions {
  encoding?: TextEncoding | undefined;
  delimiter?: CsvDelimiter | undefined;
  decimalComma?: boolean | undefined;
  /** How the findings name the file (`docs.jsonl:3:17: …`); default the path read. */
  name?: string | undefined;
}

export function formatOf(file: string): BatchFormat | undefined {
  const m = /\.(csv|jsonl|ndjson|json)$/i.exec(file);
  if (!m) return undefined;
  const ext = m[1]!.toLowerCase();
  return ext === 'ndjson' ? 'jsonl' : (ext as BatchFormat);
}

export function readBatch(file: string, format: BatchFormat, opts: BatchReadOptions = {}): AsyncGenerator<BatchItem> {
  const items = format === 'jsonl' ? readJsonl(file, opts) : format === 'json' ? readJsonArray(file, opts) : readCsv(file, opts);
  return asReaderErrors(items);
}

/**
 * How many items (documents, and malformed lines, elements or rows) readBatch will yield for `file`, counted by a
 * pass that neither parses the JSON bodies nor builds the CSV documents, and that stops on what would stop readBatch
 * (a ReaderError: a byte not in the encoding, a header not the layout, undeclared decimal commas; or the file's own
 * error). Run before a batch opens its results and journal, so a file that cannot be read changes no file; its count
 * is the progress line's total (a document costs a signature and a request, counting it a few microseconds).
 */
export async function scanBatch(file: string, format: BatchFormat, opts: BatchReadOptions = {}): Promise<number> {
  let n = 0;
  if (format === 'jsonl') {
    for await (const _ of asReaderErrors(jsonlLines(file, opts))) n++;
  } else if (format === 'json') {
    const { splitJsonArray, NotAnArrayError } = await import('./json-array.js');
    const input = createReadStream(file, { highWaterMark: 256 * 1024 });
    try {
      for await (const _ of asReaderErrors(splitJsonArray(decodeChunks(input, file, opts)))) n++;
    } catch (e) {
      throw e instanceof NotAnArrayError ? new ReaderError(e.message) : e;
    } finally {
      input.destroy();
    }
  } else {
    for await (const _ of readCsv(file, opts, false)) n++;
  }
  return n;
}

/** scanBatch's count, or undefined when the file cannot be read as a batch (readBatch then says why). */
export async function countBatch(file: string, format: BatchFormat, opts: BatchReadOptions = {}): Promise<number | undefined> {
  try {
    return await scanBatch(file, format, opts);
  } catch {
    return undefined;
  }
}

/** A byte not in the file's encoding, as a ReaderError (`line 3: byte 0xED is not UTF-8; …`, the file named by the caller). */
async function* asReaderErrors<T>(items: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* items;
  } catch (e) {
    throw e instanceof TextEncodingError ? new ReaderError(e.reason) : e;
  }
}

/** The file's text, decoded as `opts` says, chunk by chunk. */
function textOf(file: string, opts: BatchReadOptions, highWaterMark = 64 * 1024): { text: AsyncGenerator<string>; close: () => void } {
  const input = createReadStream(file, { highWaterMark });
  return { text: decodeChunks(input, file, opts), close: () => input.destroy() };
}

function numeroOf(body: unknown): string | number | undefined {
  const n = (body as { numeroReferencia?: unknown } | null)?.numeroReferencia;
  return typeof n === 'string' ? echo(n) : typeof n === 'number' ? n : undefined;
}

/** One body's JSON text, which starts at `start` of the file: a syntax error is the finding `FILE:LINE:COLUMN: reason`. */
function itemOfJson(row: number, text: string, where: string, file: string, start: TextStart): BatchItem {
  let body: unknown;
  try {
    body = parseJsonText(text, file, start);
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    return { row, errors: [{ path: `${echo(file, 200)}:${e.line}:${e.column}`, message: echo(e.reason, 200) }] };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { row, errors: [{ path: where, message: 'must be a JSON object (one document body)' }] };
  }
  const n = numeroOf(body);
  // What the body leaves out of its figures is computed, as for `fecr send` (core/input/complete.ts).
  body = completedInput(body);
  return n === undefined ? { row, body } : { row, body, numeroReferencia: n };
}

/**
 * A `.json` file that holds one body (an object, as `fecr send` takes it) rather than an array: one item, read and
 * completed as a batch's element (`fecr test` takes both). A byte not in the encoding is a ReaderError.
 */
export async function readJsonObject(file: string, opts: BatchReadOptions = {}): Promise<BatchItem> {
  const { readFile } = await import('node:fs/promises');
  const { decodeText } = await import('../text-input.js');
  let text: string;
  try {
    text = decodeText(await readFile(file), opts.name ?? file, opts);
  } catch (e) {
    throw e instanceof TextEncodingError ? new ReaderError(e.reason) : e;
  }
  return itemOfJson(1, text, 'body', opts.name ?? file, { line: 1, column: 1 });
}

async function* readJsonl(file: string, opts: BatchReadOptions): AsyncGenerator<BatchItem> {
  for await (const { line, text } of jsonlLines(file, opts)) yield itemOfJson(line, text, `line ${line}`, opts.name ?? file, { line, column: 1 });
}

/** The non-blank lines of a JSONL file (LF or CRLF; a BOM removed by the decoder), as written (columns count from their start), with their line numbers. */
async function* jsonlLines(file: string, opts: BatchReadOptions): AsyncGenerator<{ line: number; text: string }> {
  const { text, close } = textOf(file, opts);
  let line = 0;
  let rest = '';
  try {
    for await (const chunk of text) {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const p of parts) {
        line++;
        if (p.trim() !== '') yield { line, text: p.replace(/\r$/, '') };
      }
    }
    line++;
    if (rest.trim() !== '') yield { line, text: rest.replace(/\r$/, '') };
  } finally {
    close();
  }
}

async function* readJsonArray(file: string, opts: BatchReadOptions): AsyncGenerator<BatchItem> {
  const { splitJsonArray, NotAnArrayError } = await import('./json-array.js');
  const { text, close } = textOf(file, opts, 256 * 1024);
  try {
    for await (const el of splitJsonArray(text)) {
      if ('error' in el) yield { row: el.index, errors: [{ path: `element ${el.index}`, message: el.error.replace(/^element \d+: /, '') }] };
      else yield itemOfJson(el.index, el.text, `element ${el.index}`, opts.name ?? file, el);
    }
  } catch (e) {
    if (e instanceof NotAnArrayError) throw new ReaderError(e.message);
    throw e;
  } finally {
    close();
  }
}

/** `build` false: the same items, without their bodies (scanBatch). */
async function* readCsv(file: string, opts: BatchReadOptions, build = true): AsyncGenerator<BatchItem> {
  const [{ parse }, csv, dialect] = await Promise.all([import('csv-parse'), import('./csv.js'), import('./csv-dialect.js')]);
  const skipped: Array<{ line: number; message: string }> = [];
  // The separator: told, or read from the header line (the text up to the first line break).
  const { text, close } = textOf(file, opts);
  const head: string[] = [];
  let first: IteratorResult<string> | undefined;
  try {
    while (!(first = await text.next()).done) {
      head.push(first.value);
      if (first.value.includes('\n')) break;
    }
  } catch (e) {
    close();
    throw e instanceof TextEncodingError ? new ReaderError(e.reason) : e;
  }
  const delimiter = opts.delimiter ?? dialect.detectDelimiter(head.join('').split('\n')[0]!.replace(/\r$/, ''), csv.KNOWN_COLUMNS);
  const decimalComma = opts.decimalComma ?? false;
  const parser = parse({
    delimiter,
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    relax_quotes: true,
    skip_records_with_error: true,
    info: true,
    raw: true,
    on_skip: (err) => {
      if (err) skipped.push({ line: (err as { lines?: number }).lines ?? 0, message: err.message });
      return undefined;
    },
  });
  const input = Readable.from(
    (async function* () {
      yield* head;
      yield* text;
    })(),
  );
  input.on('error', (e) => parser.destroy(e instanceof TextEncodingError ? new ReaderError(e.reason) : e));
  input.pipe(parser);

  let header: string[] | undefined;
  let group: import('./csv.js').CsvRow[] = [];
  let groupKey = '';
  const flush = (): BatchItem | undefined => {
    if (group.length === 0) return undefined;
    const rows = group;
    group = [];
    const first = rows[0]!;
    const numero = (first.cells.numeroReferencia ?? '').trim();
    const base: BatchItem = { row: first.line, ...(numero ? { numeroReferencia: /^\d{1,15}$/.test(numero) ? Number(numero) : echo(numero) } : {}) };
    if (!build) return base;
    const built = csv.documentFromRows(rows);
    return 'errors' in built ? { ...base, errors: built.errors } : { ...base, body: built.body, csvRows: built.rows };
  };
  const skippedItems = function* (): Generator<BatchItem> {
    while (skipped.length) {
      const s = skipped.shift()!;
      yield { row: s.line, errors: [{ path: `row ${s.line}`, message: `malformed CSV: ${echo(s.message.replace(/^Invalid (Record|Closing Quote)[^:]*: /, ''), 200)}` }] };
    }
  };
  try {
    for await (const rec of parser as AsyncIterable<{ record: string[]; info: { lines: number }; raw: string }>) {
      const cells = rec.record;
      const line = startLine(rec.info.lines, rec.raw);
      if (!header) {
        header = cells.map((c) => c.trim());
        const problem = csv.checkHeader(header);
        if (problem) throw new ReaderError(dialect.explainHeader(header, delimiter, csv.KNOWN_COLUMNS) ?? problem);
        continue;
      }
      yield* skippedItems();
      if (cells.length !== header.length) {
        const done = flush();
        if (done) yield done;
        yield { row: line, errors: [{ path: `row ${line}`, message: `has ${cells.length} columns but the header has ${header.length}` }] };
        continue;
      }
      const row = { line, cells: Object.fromEntries(header.map((h, i) => [h, cells[i] ?? ''])) };
      const undeclared = dialect.readAmounts(row.cells, line, { delimiter, decimalComma });
      if (undeclared) throw new ReaderError(undeclared);
      const key = csv.groupKey(row);
      if (group.length > 0 && key !== groupKey) {
        const done = flush();
        if (done) yield done;
      }
      groupKey = key;
      group.push(row);
    }
    const done = flush();
    if (done) yield done;
    yield* skippedItems();
    if (!header) throw new ReaderError('the CSV is empty (no header row)');
  } finally {
    input.unpipe(parser);
    input.destroy();
    parser.destroy();
    close();
  }
}

/** The file line where a record starts: csv-parse counts to its end; its raw text may begin with skipped empty lines. */
function startLine(endLine: number, raw: string): number {
  const body = raw.replace(/\r?\n$|\r$/, '');
  const lead = (/^(?:\r?\n)*/.exec(body)?.[0] ?? '').split('\n').length - 1;
  const inner = body.split('\n').length - 1;
  return endLine - inner + lead;
}
