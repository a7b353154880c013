/**
 * The IO a command may use, injected so tests run commands in-process with their own streams,
 * environment and working directory (nothing global is faked).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { TEXT_ENCODINGS, textEncodingOf, type TextEncoding } from '../core/text-encoding.js';
import { UsageError, UserError } from './errors.js';

export interface IO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: Record<string, string | undefined>;
  cwd: string;
  /** stdout is a terminal (tables, colour) */
  stdoutIsTTY: boolean;
  /** stdin is a terminal (prompts allowed) */
  stdinIsTTY: boolean;
}

export function processIO(): IO {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stdinIsTTY: Boolean(process.stdin.isTTY),
  };
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}

/** Reads a file argument, or stdin for "-". Missing files are a one-line UserError. */
export async function readInput(io: IO, file: string): Promise<Buffer> {
  if (file === '-') return readAll(io.stdin);
  const full = path.resolve(io.cwd, file);
  try {
    // fs.promises loads on first use: node:fs/promises (streams, readline) would cost every start ≈ 3 ms.
    return await fs.promises.readFile(full);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(`${file}: no such file`);
    if (code === 'EISDIR') throw new UserError(`${file}: is a directory`);
    if (code === 'EACCES') throw new UserError(`${file}: permission denied`);
    throw new UserError(`${file}: cannot read (${code ?? 'error'})`);
  }
}

/** The help of `--encoding`, for every command that reads a text file. */
export const ENCODING_HELP = 'the text file\'s encoding: utf-8 (the default; a BOM is fine), windows-1252 or latin1 (what Excel on Windows writes)';

/** The value of `--encoding` (undefined: UTF-8); another value is a usage error. */
export function encodingFlag(value: string | undefined): TextEncoding | undefined {
  if (value === undefined) return undefined;
  const e = textEncodingOf(value);
  if (!e) throw new UsageError(`--encoding must be ${TEXT_ENCODINGS.slice(0, -1).join(', ')} or ${TEXT_ENCODINGS.at(-1)} (got "${value}")`);
  return e;
}

/**
 * Reads a text file argument (or "-") as UTF-8, or as `encoding` says (client/text-input.ts): a byte that is not in
 * it is a one-line UserError naming the file, the line and the byte. `encodingFlag` false: the command has no
 * `--encoding`, and the refusal does not offer it.
 */
export async function readText(io: IO, file: string, opts: { encoding?: TextEncoding | undefined; encodingFlag?: boolean } = {}): Promise<string> {
  const bytes = await readInput(io, file);
  // The decoders load with the command that reads a file, not with every start (test/build: `fecr --help`).
  const { decodeText, TextEncodingError } = await import('../client/text-input.js');
  try {
    return decodeText(bytes, file === '-' ? 'stdin' : file, opts);
  } catch (e) {
    if (e instanceof TextEncodingError) throw new UserError(e.message);
    throw e;
  }
}

/** Reads and parses a JSON file argument (or "-"); a byte not in its encoding names the file, a syntax error FILE:LINE:COLUMN. */
export async function readJson(io: IO, file: string, opts: { encoding?: TextEncoding | undefined; encodingFlag?: boolean } = { encodingFlag: false }): Promise<unknown> {
  const text = await readText(io, file, opts);
  const { parseJsonText, JsonSyntaxError } = await import('../client/json-text.js');
  try {
    return parseJsonText(text, file === '-' ? 'stdin' : file);
  } catch (e) {
    // `bad.json:3:17: Unexpected token '}'`
    if (e instanceof JsonSyntaxError) throw new UserError(e.message);
    throw e;
  }
}

export function resolvePath(io: IO, file: string): string {
  return path.resolve(io.cwd, file);
}

export function writeLine(stream: Writable, text: string): void {
  stream.write(text.endsWith('\n') ? text : text + '\n');
}
