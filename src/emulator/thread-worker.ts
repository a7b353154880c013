/** Worker-thread side of thread.ts: runs one emulator (validation on this thread) and answers the owner. */
import { parentPort, workerData } from 'node:worker_threads';
import { startEmulator, type RunningEmulator } from './index.js';
import type { FaultPatch } from './faults.js';

export interface ThreadStart {
  dataFile?: string;
  processingDelayMs?: number;
  faults?: FaultPatch;
  seed?: number;
  /** Tell the owner each verdict as it is stored (`decided` messages; see thread.ts). */
  notifyDecided?: boolean;
}

export type ThreadRequest = { id: number; type: 'whenIdle' } | { id: number; type: 'pending' } | { id: number; type: 'close' };

export type ThreadReply =
  | { type: 'ready'; url: string }
  | { type: 'failed'; message: string }
  | { type: 'done'; id: number; pending?: number }
  | { type: 'decided'; keys: string[] };

const port = parentPort!;
const start = workerData as ThreadStart;
let emulator: RunningEmulator | undefined;

/** The keys decided since the last message: one message per turn of this thread's loop, not one per document. */
let decided: string[] = [];
function onDecided(key: string): void {
  if (decided.length === 0) {
    setImmediate(() => {
      port.postMessage({ type: 'decided', keys: decided } satisfies ThreadReply);
      decided = [];
    });
  }
  decided.push(key);
}

try {
  emulator = await startEmulator({
    ...(start.dataFile !== undefined ? { dataFile: start.dataFile } : {}),
    ...(start.processingDelayMs !== undefined ? { processingDelayMs: start.processingDelayMs } : {}),
    ...(start.faults !== undefined ? { faults: start.faults } : {}),
    ...(start.seed !== undefined ? { seed: start.seed } : {}),
    validationThreads: 0,
    ...(start.notifyDecided ? { onDecided } : {}),
  });
  port.postMessage({ type: 'ready', url: emulator.url } satisfies ThreadReply);
} catch (e) {
  port.postMessage({ type: 'failed', message: e instanceof Error ? e.message : String(e) } satisfies ThreadReply);
  port.close();
}

port.on('message', (m: ThreadRequest) => {
  const emu = emulator!;
  if (m.type === 'pending') {
    port.postMessage({ type: 'done', id: m.id, pending: emu.state.pending } satisfies ThreadReply);
    return;
  }
  const work = m.type === 'whenIdle' ? emu.state.whenIdle() : emu.close();
  work.then(
    () => {
      port.postMessage({ type: 'done', id: m.id } satisfies ThreadReply);
      if (m.type === 'close') port.close();
    },
    (e: unknown) => port.postMessage({ type: 'failed', message: e instanceof Error ? e.message : String(e) } satisfies ThreadReply),
  );
});
