// Runs the fecr CLI in-process with injected streams, cwd and environment.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { BackendFactory } from '../../src/cli/context.js';
import { main } from '../../src/cli/program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(
  args: string[],
  opts: { stdin?: string | Buffer; cwd?: string; env?: Record<string, string>; now?: () => Date; tty?: boolean; backend?: BackendFactory } = {},
): Promise<CliRun> {
  const stdin = new PassThrough();
  stdin.end(opts.stdin ?? '');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => err.push(c));
  const code = await main(args, {
    io: {
      stdin,
      stdout,
      stderr,
      env: opts.env ?? { HOME: opts.cwd ?? tmpdir() },
      cwd: opts.cwd ?? process.cwd(),
      stdoutIsTTY: opts.tty ?? false,
      stdinIsTTY: false,
    },
    now: opts.now,
    ...(opts.backend ? { backend: opts.backend } : {}),
  });
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

export function tempDir(prefix = 'fecr-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
