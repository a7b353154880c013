/**
 * The IO a command may use, injected so tests run commands in-process with their own streams,
 * environment and working directory (nothing global is faked).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { UserError } from './errors.js';

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

/** Reads and parses a JSON file argument (or "-"); a syntax error names the file. */
export async function readJson(io: IO, file: string): Promise<unknown> {
  const text = (await readInput(io, file)).toString('utf8').replace(/^\uFEFF/, '');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UserError(`${file === '-' ? 'stdin' : file}: invalid JSON (${(e as Error).message})`);
  }
}

export function resolvePath(io: IO, file: string): string {
  return path.resolve(io.cwd, file);
}

export function writeLine(stream: Writable, text: string): void {
  stream.write(text.endsWith('\n') ? text : text + '\n');
}
