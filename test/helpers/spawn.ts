// Spawns `fecr …` from the sources as a real child process and reads its first JSON line.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

const ENTRY = new URL('./fecr-dev.ts', import.meta.url).pathname;
/** tsx by absolute URL, so a child with another cwd still finds it. */
const TSX = import.meta.resolve('tsx');

export interface Spawned<T> {
  child: ChildProcess;
  ready: T;
  stderr: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export async function spawnFecr<T = Record<string, string>>(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<Spawned<T>> {
  const child = spawn(process.execPath, ['--import', TSX, ENTRY, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
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
