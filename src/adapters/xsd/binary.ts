/**
 * XSD validation with the `xmllint` binary (libxml2-utils): the documents of a call are written
 * to a temporary folder and validated by ONE `xmllint --noout --nonet --schema <xsd> <files…>`
 * process (in chunks of `batchSize` files), whose output is mapped back to each document.
 *
 * With `persistentShell`, the xmllint processes are started by one long-lived `/bin/sh` instead of by
 * Node: fork() copies the page tables of the process that spawns, so in a Node process with a few
 * hundred MB resident every `spawn` blocks the event loop for 10-30 ms. A small shell forks in well
 * under a millisecond. (For a server that validates all day: the emulator.)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { SchemaName } from '../../core/xml/kinds.js';
import { batchFileName, parseXmllintOutput } from './output.js';
import { SCHEMAS, schemaPath } from '../../core/xsd/schemas.js';
import type { XsdResult, XsdValidator } from '../../core/xsd/types.js';

export interface BinaryValidatorOptions {
  /** Executable name or path; default "xmllint". */
  binary?: string;
  /** Maximum documents per xmllint process; default 1000. */
  batchSize?: number;
  /** Start xmllint from one long-lived /bin/sh rather than from this process (default false; not on Windows). */
  persistentShell?: boolean;
  /** Folder for the batch files (default: /dev/shm on Linux when writable, else the OS temporary folder). */
  tempDir?: string;
}

let memoryTmp: string | null | undefined;

/**
 * Where batch files go: /dev/shm (tmpfs) on Linux when usable. Creating, writing and deleting a 14 KB file
 * there costs ≈ 0.04 ms of CPU, against ≈ 0.25 ms on a journaling disk file system; the files live for
 * the duration of one xmllint run.
 */
function defaultTempDir(): string {
  if (memoryTmp === undefined) {
    memoryTmp = null;
    if (process.platform === 'linux') {
      try {
        if (statSync('/dev/shm').isDirectory()) {
          accessSync('/dev/shm', constants.W_OK);
          memoryTmp = '/dev/shm';
        }
      } catch {
        // not available: the OS temporary folder
      }
    }
  }
  return memoryTmp ?? tmpdir();
}

const found = new Map<string, boolean>();

/** True when the xmllint binary can be run (checked once per process). */
export function hasXmllintBinary(binary = 'xmllint'): boolean {
  let ok = found.get(binary);
  if (ok === undefined) {
    const r = spawnSync(binary, ['--version'], { stdio: 'ignore', timeout: 10_000 });
    ok = r.error === undefined && r.status === 0;
    found.set(binary, ok);
  }
  return ok;
}

interface RunResult {
  code: number | null;
  stderr: string;
}

/**
 * Runs xmllint in its own process group (`detached`): a Ctrl-C at the terminal signals fecr's whole foreground
 * group, and an xmllint killed half-way would turn a valid document into a failed validation. fecr's own SIGINT
 * handling finishes the work in flight, xmllint runs included. A run killed by a signal anyway is retried once
 * (`XmllintBinaryValidator.exec`).
 */
function run(binary: string, args: string[], cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    const chunks: Buffer[] = [];
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr: Buffer.concat(chunks).toString('utf8') }));
  });
}

/**
 * The shell's loop: a job is the working folder on one line, then the command and its arguments one per
 * line, then an empty line. The command's stderr goes to a file in the folder; the exit status comes back
 * on stdout, one line per job, in order.
 */
const SHELL_LOOP = `
while IFS= read -r dir; do
  set --
  while IFS= read -r arg && [ -n "$arg" ]; do set -- "$@" "$arg"; done
  (cd "$dir" && exec "$@" <&- >/dev/null 2>"$dir/.xmllint-stderr")
  echo "$?"
done
`;
const STDERR_FILE = '.xmllint-stderr';

/**
 * One /bin/sh that runs commands for us (see SHELL_LOOP); it does not keep the Node process alive when idle.
 * Like a directly spawned xmllint, it runs in its own process group, so a terminal Ctrl-C reaches neither it
 * nor its xmllint runs; it ends when its stdin closes (`close()`, or this process exiting).
 */
class ShellRunner {
  private shell: { child: ChildProcess; waiting: Job[] } | undefined;

  static usable(binary: string, args: string[], cwd: string): boolean {
    return process.platform !== 'win32' && [binary, ...args, cwd].every((a) => a !== '' && !/[\r\n]/.test(a));
  }

  run(binary: string, args: string[], cwd: string): Promise<RunResult> {
    const shell = this.start();
    return new Promise((resolve, reject) => {
      shell.waiting.push({ dir: cwd, resolve, reject });
      hold(shell.child, true);
      shell.child.stdin!.write([cwd, binary, ...args, ''].join('\n') + '\n');
    });
  }

  close(): void {
    const shell = this.shell;
    this.shell = undefined;
    if (!shell) return;
    shell.child.stdin?.end();
    fail(shell.waiting, new Error('the xmllint shell was closed'));
  }

  private start(): { child: ChildProcess; waiting: Job[] } {
    if (this.shell) return this.shell;
    const child = spawn('/bin/sh', ['-c', SHELL_LOOP], { stdio: ['pipe', 'pipe', 'ignore'], detached: true });
    const shell = { child, waiting: [] as Job[] };
    this.shell = shell;
    const lost = (e: unknown) => {
      if (this.shell === shell) this.shell = undefined;
      fail(shell.waiting, e);
    };
    child.on('error', lost);
    child.on('exit', (code) => lost(new Error(`the xmllint shell exited (${code})`)));
    child.stdin!.on('error', lost);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const job = shell.waiting.shift();
      if (shell.waiting.length === 0) hold(child, false);
      if (!job) return;
      const code = Number(line);
      try {
        job.resolve({ code: Number.isInteger(code) ? code : null, stderr: readFileSync(join(job.dir, STDERR_FILE), 'utf8') });
      } catch (e) {
        job.reject(e);
      }
    });
    child.unref();
    hold(child, false);
    return shell;
  }
}

interface Job {
  dir: string;
  resolve: (r: RunResult) => void;
  reject: (e: unknown) => void;
}

function fail(jobs: Job[], e: unknown): void {
  for (const job of jobs.splice(0)) job.reject(e);
}

/** Keeps the event loop alive only while a job is waiting for the shell's answer. */
function hold(child: ChildProcess, on: boolean): void {
  for (const s of [child.stdin, child.stdout] as ({ ref?: () => void; unref?: () => void } | null)[]) {
    if (on) s?.ref?.();
    else s?.unref?.();
  }
}

export class XmllintBinaryValidator implements XsdValidator {
  readonly backend = 'binary' as const;
  private readonly binary: string;
  private readonly batchSize: number;
  private readonly shell: ShellRunner | undefined;
  private readonly tempDir: string | undefined;

  constructor(options: BinaryValidatorOptions = {}) {
    this.binary = options.binary ?? 'xmllint';
    this.batchSize = Math.max(1, options.batchSize ?? 1000);
    if (options.persistentShell) this.shell = new ShellRunner();
    this.tempDir = options.tempDir;
  }

  /** Ends the persistent shell, if any (validating again starts a new one). */
  async close(): Promise<void> {
    this.shell?.close();
  }

  /** One xmllint run; a run killed by a signal (no exit code, or the shell's 128 + signal) is retried once. */
  private async exec(args: string[], cwd: string): Promise<RunResult> {
    const viaShell = this.shell !== undefined && ShellRunner.usable(this.binary, args, cwd);
    const once = () => (viaShell ? this.shell!.run(this.binary, args, cwd) : run(this.binary, args, cwd));
    const killed = (r: RunResult) => r.code === null || (viaShell && r.code > 128);
    const first = await once();
    return killed(first) ? once() : first;
  }

  async validate(xml: string | string[], kind: SchemaName): Promise<XsdResult[]> {
    const docs = typeof xml === 'string' ? [xml] : xml;
    if (docs.length === 0) return [];
    const schema = SCHEMAS[kind];
    if (!schema) throw new Error(`unknown schema ${String(kind)}`);
    // Synchronous file operations: small files into the page cache take microseconds each, far less than a
    // round trip through libuv's thread pool per open, write and close.
    let base = this.tempDir ?? defaultTempDir();
    let dir = mkdtempSync(join(base, 'fecr-xsd-'));
    try {
      const results: XsdResult[] = [];
      for (let start = 0; start < docs.length; start += this.batchSize) {
        const chunk = docs.slice(start, start + this.batchSize);
        const names = chunk.map((_, i) => batchFileName(i));
        try {
          chunk.forEach((d, i) => writeFileSync(join(dir, names[i]!), d, 'utf8'));
        } catch (e) {
          // A small /dev/shm (e.g. 64 MB in a container) can fill up: the OS temporary folder then.
          if (this.tempDir !== undefined || base === tmpdir() || (e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
          rmSync(dir, { recursive: true, force: true });
          base = tmpdir();
          dir = mkdtempSync(join(base, 'fecr-xsd-'));
          chunk.forEach((d, i) => writeFileSync(join(dir, names[i]!), d, 'utf8'));
        }
        const { code, stderr } = await this.exec(['--noout', '--nonet', '--schema', schemaPath(kind), ...names], dir);
        const parsed = parseXmllintOutput(stderr, chunk.length, schema.namespace);
        if (!parsed.complete || (code !== 0 && code !== 1 && code !== 3 && code !== 4)) {
          throw new Error(`xmllint (exit ${code}) could not validate against ${schema.file}: ${parsed.other.join('\n') || stderr}`);
        }
        // The next chunk overwrites the same names; the folder goes at the end.
        results.push(...parsed.results);
      }
      return results;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
