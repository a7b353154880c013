/**
 * The emulator on a worker thread of its own, for a process that is itself a client of it (local mode of the
 * CLI): the emulator's HTTP side, its state and the analysis of each document then run beside the caller's
 * event loop instead of on it. One thread does it all (no validation pool inside): a CLI process has two V8
 * heaps, not three.
 *
 *   const emu = await startEmulatorThread({ dataFile, processingDelayMs: 50 });
 *   // resolveEndpoints('local', { baseUrl: emu.url }) … await emu.whenIdle() … await emu.close();
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ThreadReply, ThreadRequest, ThreadStart } from './thread-worker.js';
import { workerModule } from '../adapters/worker-module.js';
import type { FaultPatch } from './faults.js';

export interface EmulatorThreadOptions {
  /** SQLite file of the emulator's state (default: in memory). */
  dataFile?: string;
  /** Time from reception to verdict, ms (default 200). */
  processingDelayMs?: number;
  /** Initial faults (a fault file's, plain data) and the seed of the random ones. */
  faults?: FaultPatch;
  seed?: number;
  /** Told the keys of the documents decided since the last call (a few per call; see thread-worker.ts). */
  onDecided?: (keys: string[]) => void;
}

export interface EmulatorThread {
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** Resolves when every document received so far has its verdict. */
  whenIdle(): Promise<void>;
  /** Received documents still without a verdict, asked now (it does not wait for them). */
  pending(): Promise<number>;
  /** Ends the emulator and its thread (documents being processed stay in the data file for the next start). */
  close(): Promise<void>;
}

/** Young-generation cap of the thread's heap: short-lived garbage is collected sooner (peak RSS of a batch). */
const YOUNG_GENERATION_MB = 8;

/** file: URL of tsx's ESM API (`tsx/esm/api`, import condition), for a thread started from the sources. */
function tsxEsmApi(): string {
  const dir = path.dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  return pathToFileURL(path.join(dir, 'dist/esm/api/index.mjs')).href;
}

export function startEmulatorThread(opts: EmulatorThreadOptions = {}): Promise<EmulatorThread> {
  const { filename } = workerModule('thread-worker', import.meta.url);
  const start: ThreadStart = {
    ...(opts.dataFile !== undefined ? { dataFile: opts.dataFile } : {}),
    ...(opts.processingDelayMs !== undefined ? { processingDelayMs: opts.processingDelayMs } : {}),
    ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(opts.onDecided ? { notifyDecided: true } : {}),
  };
  // From the sources (tsx, vitest) the thread must register tsx before it can load a .ts module (`--import tsx`
  // in a worker's execArgv does not reach a worker's own imports on Node 20): its entry is then a script that
  // registers tsx through its ESM API, then imports the module.
  const fromSource = filename.endsWith('.ts');
  const entry = fromSource
    ? `import(${JSON.stringify(tsxEsmApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(filename)}); })`
    : new URL(filename);
  const worker = new Worker(entry, {
    workerData: start,
    ...(fromSource ? { eval: true } : {}),
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    stdout: false,
    stderr: false,
  });
  let nextId = 1;
  const waiting = new Map<number, { resolve: (pending: number | undefined) => void; reject: (e: Error) => void }>();
  let failure: Error | undefined;
  let exited = false;
  const failAll = (e: Error) => {
    failure ??= e;
    for (const w of waiting.values()) w.reject(failure);
    waiting.clear();
  };

  return new Promise<EmulatorThread>((resolve, reject) => {
    let ready = false;
    worker.on('message', (m: ThreadReply) => {
      if (m.type === 'ready') {
        ready = true;
        resolve(handle(m.url));
      } else if (m.type === 'decided') {
        opts.onDecided?.(m.keys);
      } else if (m.type === 'failed') {
        const e = new Error(m.message);
        if (!ready) reject(e);
        failAll(e);
      } else {
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        w?.resolve(m.pending);
      }
    });
    worker.on('error', (e) => {
      if (!ready) reject(e);
      failAll(e);
    });
    worker.on('exit', (code) => {
      exited = true;
      const e = new Error(`the emulator thread ended (exit code ${code})`);
      if (!ready) reject(e);
      failAll(e);
    });
  });

  function request(req: Omit<ThreadRequest, 'id'>): Promise<number | undefined> {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise<number | undefined>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      worker.postMessage({ ...req, id } as ThreadRequest);
    });
  }

  function handle(url: string): EmulatorThread {
    let closing: Promise<void> | undefined;
    return {
      url,
      whenIdle: () => request({ type: 'whenIdle' }).then(() => undefined),
      pending: () => request({ type: 'pending' }).then((n) => n ?? 0),
      close: () =>
        (closing ??= (async () => {
          if (exited) return;
          // Let the emulator close its server and its data file; end the thread if it does not answer.
          const done = request({ type: 'close' }).catch(() => undefined);
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, 5_000)))]);
          clearTimeout(timer);
          await worker.terminate();
        })()),
    };
  }
}
