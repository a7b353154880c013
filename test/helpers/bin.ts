// The built binary as a user runs it: `node bin/fecr.js ARGS` (dist/ built by vitest's globalSetup,
// test/helpers/global-build.ts) as a child process of its own, awaited without blocking the test's event loop, with
// the environment the test gives (its own HOME) and none of the developer's XDG_* or FECR_* variables.
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { childEnv } from './hermetic-env.js';

export const BIN = new URL('../../bin/fecr.js', import.meta.url).pathname;

export interface BinRun {
  /** The exit code (null when a signal ended the child). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the child outlived `deadlineMs` and was killed (SIGKILL). */
  timedOut?: boolean;
}

/**
 * `node bin/fecr.js ARGS` in `cwd` with `env` (HOME among it), stdin closed or given. `deadlineMs`: a child still
 * running then is killed and the run says `timedOut` (a verb that never exits fails its test instead of hanging it).
 */
export function runBin(args: string[], opts: { cwd: string; env: Record<string, string>; stdin?: string; deadlineMs?: number }): Promise<BinRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: childEnv(opts.env), stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    let timedOut = false;
    const timer = opts.deadlineMs === undefined ? undefined : setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.deadlineMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ...(timedOut ? { timedOut } : {}) });
    });
    if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  });
}

/** A port nothing listens on (taken from the OS, then let go). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
