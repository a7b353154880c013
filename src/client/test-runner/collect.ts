/**
 * The cases of `fecr test PATH…`: the bodies of the files named, and of the folders named (walked in name order,
 * hidden entries and node_modules left out), each with what it expects (./expectations.ts). A body file is what
 * `fecr send` or `fecr batch` reads: `.json` (one body, or an array of bodies), `.jsonl`/`.ndjson` (one body a line),
 * `.csv` (docs/batch-csv.md), read by the batch readers (../batch/reader.ts: decoded by ../text-input.ts, figures
 * left out completed by core/input/complete.ts). Beside it, `NAME.expect.json` is its expectation, not a body; so are
 * a batch's `*.results.jsonl` and `*.journal` left out of a folder.
 *
 * Everything is read before anything is sent: a file that cannot be read at all, a folder with no body, or an
 * expectation that is not one is a TestInputError with one finding a line, and nothing is sent.
 *
 * The files are the user's, read as adapters/user-files.ts reads them (issue 37): a body file and an expectation are
 * regular files (never a FIFO, a device, a folder: refused without blocking), under a cap each (TEST_BODY_MAX_BYTES,
 * EXPECT_MAX_BYTES); an expectation that is a symlink must resolve inside its body file's folder, and a folder's
 * symlinked entries are not walked.
 */
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { overText, readUserFile } from '../../adapters/user-files.js';
import type { Finding } from '../../core/model.js';
import type { BatchItem, BatchReadOptions } from '../batch/reader.js';
import type { CsvRowMap } from '../batch/csv-findings.js';
import { DEFAULT_EXPECTATION, parseExpectation, type Expectation } from './expectations.js';

export interface TestCase {
  /** 1, 2, …: the order of the files and of the documents in them. */
  seq: number;
  /** The file as the user would name it: relative to the working directory, with `/`. */
  file: string;
  /** The file's line where the document starts (a JSONL line, a CSV row; 1 for a JSON file). */
  line: number;
  /** The file with `:LINE` (a JSONL line, a CSV row) or `[n]` (a JSON array's element) when it holds several documents. */
  where: string;
  /** The case's name in the JUnit report: the expectation's `nombre`, else `where`. */
  name: string;
  body?: unknown;
  /** Why the document could not be read (the case is then `invalido`). */
  errors?: Finding[];
  csvRows?: CsvRowMap;
  expect: Expectation;
  /** Where the expectation came from: `NAME.expect.json`, `line 3 (expect)`, or null for the default. */
  expectFrom: string | null;
}

export class TestInputError extends Error {
  constructor(
    message: string,
    readonly findings: Finding[] = [],
  ) {
    super(message);
    this.name = 'TestInputError';
  }
}

/**
 * The largest body file `fecr test` takes: it reads every case before sending any and holds them all. A 1 000-line
 * invoice (the XSD's most lines) is about 0.5 MB as a JSON body, so 64 MiB is over a hundred of the largest documents
 * in one file, more than a test suite holds, while it bounds what one file costs in memory.
 */
export const TEST_BODY_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The largest `NAME.expect.json`: the schema's fullest expectation (100 findings of 500 characters, 200 codes, a
 * 200-character nombre; expectations.ts) is about 55 KB; 256 KiB leaves room for indentation and escapes.
 */
export const EXPECT_MAX_BYTES = 256 * 1024;

const BODY_FILE = /\.(json|jsonl|ndjson|csv)$/i;
const NOT_A_BODY = /(\.expect\.json|\.results\.jsonl|\.journal)$/i;

/** The body files of the paths, in order; a path that is neither a body file nor a folder is refused. */
export async function bodyFiles(paths: readonly string[], cwd: string): Promise<string[]> {
  const out: string[] = [];
  const problems: Finding[] = [];
  for (const p of paths) {
    const abs = path.resolve(cwd, p);
    const s = await stat(abs).catch(() => undefined);
    if (!s) problems.push({ path: p, message: 'no such file or folder' });
    else if (s.isDirectory()) {
      const found = await walk(abs);
      if (found.length === 0) problems.push({ path: p, message: 'holds no body file (.json, .jsonl or .csv)' });
      for (const f of found) {
        const why = await bodyFileRefusal(f);
        if (why) problems.push({ path: displayName(f, cwd), message: why });
        else out.push(f);
      }
    } else if (!BODY_FILE.test(abs) || NOT_A_BODY.test(abs)) problems.push({ path: p, message: 'is not a body file (.json, .jsonl or .csv)' });
    else {
      const why = await bodyFileRefusal(abs);
      if (why) problems.push({ path: p, message: why });
      else out.push(abs);
    }
  }
  if (problems.length) throw new TestInputError(problems.length === 1 ? `${problems[0]!.path}: ${problems[0]!.message}` : 'cannot read the paths given', problems.length === 1 ? [] : problems);
  return [...new Set(out)];
}

/**
 * Why a named body file cannot be read (undefined: it can): the batch readers open it by its path, so it is checked
 * first as adapters/user-files.ts checks (a regular file, opened non-blocking: a FIFO is refused, never waited on),
 * and its size against TEST_BODY_MAX_BYTES.
 */
async function bodyFileRefusal(abs: string): Promise<string | undefined> {
  // Reads nothing of it (maxBytes 0 reads at most 1 byte); its size comes from fstat.
  const got = await readUserFile(abs, { maxBytes: 0 });
  if ('refused' in got) return got.refused;
  if (got.size > TEST_BODY_MAX_BYTES) return overText(got.size, TEST_BODY_MAX_BYTES, 'a body file of fecr test');
  return undefined;
}

async function walk(dir: string): Promise<string[]> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: string[] = [];
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(full)));
    else if (e.isFile() && BODY_FILE.test(e.name) && !NOT_A_BODY.test(e.name)) out.push(full);
  }
  return out;
}

/** `NAME.expect.json` of a body file `NAME.json|.jsonl|.ndjson|.csv`. */
export function expectFileOf(file: string): string {
  return file.replace(BODY_FILE, '.expect.json');
}

/** Every case of the files, read through; `opts` are the batch reader's (encoding, CSV dialect). */
export async function collectCases(files: readonly string[], cwd: string, opts: Omit<BatchReadOptions, 'name'> = {}): Promise<TestCase[]> {
  const { readBatch, readJsonObject, formatOf, ReaderError } = await import('../batch/reader.js');
  const cases: TestCase[] = [];
  const problems: Finding[] = [];
  for (const abs of files) {
    const file = displayName(abs, cwd);
    const fileExpect = await readExpectFile(abs, file, problems);
    const items: BatchItem[] = [];
    try {
      const format = formatOf(abs)!;
      if (format === 'json' && (await startsWithObject(abs))) items.push(await readJsonObject(abs, { ...opts, name: file }));
      else for await (const item of readBatch(abs, format, { ...opts, name: file })) items.push(item);
    } catch (e) {
      if (!(e instanceof ReaderError)) throw e;
      problems.push({ path: file, message: e.message });
      continue;
    }
    const format = formatOf(abs)!;
    const several = items.length > 1 || format !== 'json';
    for (const item of items) {
      const own = lineExpectation(item, file, format, problems);
      const expect = own?.expect ?? fileExpect?.expect ?? DEFAULT_EXPECTATION;
      const where = format === 'json' && several ? `[${item.row}]` : several ? `:${item.row}` : '';
      cases.push({
        seq: cases.length + 1,
        file,
        line: format === 'json' ? 1 : item.row,
        where: `${file}${where}`,
        name: expect.nombre ?? `${file}${where}`,
        ...(item.body !== undefined ? { body: item.body } : {}),
        ...(item.errors ? { errors: item.errors } : {}),
        ...(item.csvRows ? { csvRows: item.csvRows } : {}),
        expect,
        expectFrom: own?.from ?? fileExpect?.from ?? null,
      });
    }
  }
  if (problems.length) throw new TestInputError(`cannot run the tests: ${problems.length} problem${problems.length > 1 ? 's' : ''} in the files`, problems);
  return cases;
}

/** The path relative to the working directory, `/`-separated (an annotation's `file=`); outside it, absolute. */
export function displayName(abs: string, cwd: string): string {
  const rel = path.relative(cwd, abs);
  return (rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? abs : rel).split(path.sep).join('/');
}

/** Whether a .json file holds one body (an object) rather than an array: its first character that is not a BOM or a space. */
async function startsWithObject(file: string): Promise<boolean> {
  const { open } = await import('node:fs/promises');
  const h = await open(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const { bytesRead } = await h.read(buf, 0, buf.length, 0);
    const head = buf.subarray(0, bytesRead).toString('latin1').replace(/^\xEF\xBB\xBF/, '').trimStart();
    return head.startsWith('{');
  } finally {
    await h.close();
  }
}

async function readExpectFile(abs: string, file: string, problems: Finding[]): Promise<{ expect: Expectation; from: string } | undefined> {
  const expectAbs = expectFileOf(abs);
  // Nothing at the path (lstat: a dangling symlink is something, and refused below): no expectation.
  if ((await lstat(expectAbs).catch(() => undefined)) === undefined) return undefined;
  const from = expectFileOf(file);
  const folder = await realpath(path.dirname(abs)).catch(() => path.dirname(abs));
  const got = await readUserFile(expectAbs, { maxBytes: EXPECT_MAX_BYTES, folder });
  if ('refused' in got || got.over) {
    problems.push({ path: from, message: 'refused' in got ? `${got.refused}: not read` : `${overText(got.size, EXPECT_MAX_BYTES, 'an expectation')}; not read` });
    return undefined;
  }
  const { parseJsonText, JsonSyntaxError } = await import('../json-text.js');
  const { decodeText, TextEncodingError } = await import('../text-input.js');
  let value: unknown;
  try {
    value = parseJsonText(decodeText(got.bytes, from, { encodingFlag: false }), from);
  } catch (e) {
    if (e instanceof JsonSyntaxError || e instanceof TextEncodingError) {
      problems.push({ path: from, message: e instanceof JsonSyntaxError ? `${e.line}:${e.column}: ${e.reason}` : e.reason });
      return undefined;
    }
    throw e;
  }
  const parsed = parseExpectation(value);
  if ('errors' in parsed) {
    for (const f of parsed.errors) problems.push({ path: `${from}${f.path ? ` ${f.path}` : ''}`, message: f.message });
    return undefined;
  }
  return { expect: parsed.expectation, from };
}

/** A JSONL line's or JSON element's own `expect` member, taken out of its body. */
function lineExpectation(item: BatchItem, file: string, format: string, problems: Finding[]): { expect: Expectation; from: string } | undefined {
  const body = item.body as Record<string, unknown> | undefined;
  if (format === 'csv' || !body || typeof body !== 'object' || !('expect' in body)) return undefined;
  const { expect: value, ...rest } = body;
  item.body = rest;
  const from = format === 'json' ? `element ${item.row} (expect)` : `line ${item.row} (expect)`;
  const parsed = parseExpectation(value);
  if ('errors' in parsed) {
    for (const f of parsed.errors) problems.push({ path: `${file}:${item.row} expect${f.path ? `.${f.path}` : ''}`, message: f.message });
    return undefined;
  }
  return { expect: parsed.expectation, from };
}
