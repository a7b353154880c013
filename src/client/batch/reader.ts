/**
 * Batch input, streamed so memory stays flat whatever the file size: `.jsonl` (one body per line), `.json` (a
 * top-level array of bodies, split element by element), `.csv` (one row per line item, docs/batch-csv.md).
 * Every unit becomes an item: a body to submit, or the findings of a malformed line/element/row, never a throw
 * (a file that cannot be read at all, or a CSV header that is not the layout, is a ReaderError before any item).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { echo } from '../../core/echo.js';
import type { Finding } from '../../core/model.js';

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

export function formatOf(file: string): BatchFormat | undefined {
  const m = /\.(csv|jsonl|ndjson|json)$/i.exec(file);
  if (!m) return undefined;
  const ext = m[1]!.toLowerCase();
  return ext === 'ndjson' ? 'jsonl' : (ext as BatchFormat);
}

export function readBatch(file: string, format: BatchFormat): AsyncGenerator<BatchItem> {
  if (format === 'jsonl') return readJsonl(file);
  if (format === 'json') return readJsonArray(file);
  return readCsv(file);
}

/**
 * How many items (documents, and malformed lines, elements or rows) readBatch will yield for `file`, counted by a
 * pass that neither parses the JSON bodies nor builds the CSV documents; undefined when the file cannot be read as
 * a batch (readBatch then says why). For the progress line's total: a document costs a signature and a request,
 * counting it a few microseconds.
 */
export async function countBatch(file: string, format: BatchFormat): Promise<number | undefined> {
  let n = 0;
  try {
    if (format === 'jsonl') {
      for await (const _ of jsonlLines(file)) n++;
    } else if (format === 'json') {
      const { splitJsonArray } = await import('./json-array.js');
      const input = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 });
      try {
        for await (const _ of splitJsonArray(input)) n++;
      } finally {
        input.destroy();
      }
    } else {
      for await (const _ of readCsv(file, false)) n++;
    }
  } catch {
    return undefined;
  }
  return n;
}

function numeroOf(body: unknown): string | number | undefined {
  const n = (body as { numeroReferencia?: unknown } | null)?.numeroReferencia;
  return typeof n === 'string' ? echo(n) : typeof n === 'number' ? n : undefined;
}

function itemOfJson(row: number, text: string, where: string): BatchItem {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    return { row, errors: [{ path: where, message: `invalid JSON: ${echo((e as Error).message, 200)}` }] };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { row, errors: [{ path: where, message: 'must be a JSON object (one document body)' }] };
  }
  const n = numeroOf(body);
  return n === undefined ? { row, body } : { row, body, numeroReferencia: n };
}

async function* readJsonl(file: string): AsyncGenerator<BatchItem> {
  for await (const { line, text } of jsonlLines(file)) yield itemOfJson(line, text, `line ${line}`);
}

/** The non-blank lines of a JSONL file, trimmed (a BOM removed), with their line numbers. */
async function* jsonlLines(file: string): AsyncGenerator<{ line: number; text: string }> {
  const input = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      const t = line === 1 ? text.replace(/^\uFEFF/, '').trim() : text.trim();
      if (t === '') continue;
      yield { line, text: t };
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

async function* readJsonArray(file: string): AsyncGenerator<BatchItem> {
  const { splitJsonArray, NotAnArrayError } = await import('./json-array.js');
  const input = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  try {
    for await (const el of splitJsonArray(input)) {
      if ('error' in el) yield { row: el.index, errors: [{ path: `element ${el.index}`, message: el.error.replace(/^element \d+: /, '') }] };
      else yield itemOfJson(el.index, el.text, `element ${el.index}`);
    }
  } catch (e) {
    if (e instanceof NotAnArrayError) throw new ReaderError(e.message);
    throw e;
  } finally {
    input.destroy();
  }
}

/** `build` false: the same items, without their bodies (countBatch). */
async function* readCsv(file: string, build = true): AsyncGenerator<BatchItem> {
  const [{ parse }, csv] = await Promise.all([import('csv-parse'), import('./csv.js')]);
  const skipped: Array<{ line: number; message: string }> = [];
  const parser = parse({
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
  const input = createReadStream(file);
  input.on('error', (e) => parser.destroy(e));
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
        if (problem) throw new ReaderError(`${problem}`);
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
  }
}

/** The file line where a record starts: csv-parse counts to its end; its raw text may begin with skipped empty lines. */
function startLine(endLine: number, raw: string): number {
  const body = raw.replace(/\r?\n$|\r$/, '');
  const lead = (/^(?:\r?\n)*/.exec(body)?.[0] ?? '').split('\n').length - 1;
  const inner = body.split('\n').length - 1;
  return endLine - inner + lead;
}
