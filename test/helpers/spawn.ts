// Spawns `fecr …` from the sources as a real child process and reads its first JSON line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { childEnv } from './hermetic-env.js';

const ENTRY = new URL('./fecr-dev.ts', import.meta.url).pathname;
/** tsx by absolute URL, so a child with another cwd still finds it. */
const TSX = import.meta.resolve('tsx');

export interface Spawned<T> {
  child: ChildProcess;
  ready: T;
  stderr: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/**
 * The child's environment is process.env without the developer's XDG_* and FECR_* variables (test/helpers/hermetic-env.ts)
 * plus opts.env; without a HOME in opts.env it gets a fresh temp one (never the developer's ~/.config/fecr).
 */
export async function spawnFecr<T = Record<string, string>>(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<Spawned<T>> {
  const home = opts.env?.HOME ?? mkdtempSync(join(tmpdir(), 'fecr-spawn-home-'));
  const child = spawn(process.execPath, ['--import', TSX, ENTRY, ...args], {
    cwd: opts.cwd,
    env: childEnv({ ...opts.env, HOME: home }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Listened for from the start: a child that prints its line and exits at once is still seen to exit.
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const ready = await new Promise<T>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (l) => {
      try {
        resolve(JSON.parse(l) as T);
      } catch {
        reject(new Error(`not JSON: ${l}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`fecr ${args.join(' ')} exited ${code}: ${err}`)));
  });
  return {
    child,
    ready,
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
