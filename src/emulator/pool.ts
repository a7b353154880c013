/**
 * The emulator's worker threads (piscina): they take the CPU-bound part of processing a received document
 * off the event loop, the analysis of the document (analyze.ts, validate-worker.ts).
 *
 * The threads start with `warm()` or the first task and end with `close()`. If the pool cannot run a task
 * (a worker fails to start or dies), `run` resolves `undefined` from then on and the caller does the work on
 * its own thread: the result is the same, only slower.
 */
import { availableParallelism } from 'node:os';
import type { WorkerAnswer, WorkerTask } from './validate-worker.js';
import { FallibleThreads } from '../adapters/thread-pool.js';
import { workerModule } from '../adapters/worker-module.js';

/**
 * One core is left to the event loop (HTTP, the MensajeHacienda signature, XSD batching): cores - 1 threads,
 * at least 1 and at most 2. On a 2-core machine one thread used ≈ 17 % less CPU per verdict than two (each
 * thread's V8 compiles the same hot code again, and two threads plus the event loop contend for two
 * cores) for the same rate (docs/benchmarks.md, emulator throughput).
 */
export function defaultValidationThreads(): number {
  return Math.max(1, Math.min(2, availableParallelism() - 1));
}

export class EmulatorPool {
  private readonly pool: FallibleThreads<WorkerTask, WorkerAnswer>;
  /** Documents the threads analysed, and the messages (tasks) that carried them. */
  completed = 0;
  tasks = 0;

  constructor(
    readonly threads: number,
    onError?: (e: unknown) => void,
    /** Another worker module (default validate-worker next to this file). */
    workerFile?: string,
  ) {
    this.pool = new FallibleThreads({
      module: workerFile ? { filename: workerFile } : workerModule('validate-worker', import.meta.url),
      threads,
      ...(onError ? { onError } : {}),
      closedMessage: 'the emulator is closing',
    });
  }

  /** True while tasks go to the threads (not closed, not broken). */
  get usable(): boolean {
    return this.pool.usable;
  }

  /** Live worker threads (0 before the start and after `close()`). */
  get liveThreads(): number {
    return this.pool.liveThreads;
  }

  /** Starts the threads now rather than with the first task. */
  warm(): void {
    this.pool.warm();
  }

  /**
   * Runs a task on a thread. Resolves `undefined` when the pool is broken (the caller then does the work
   * itself) and rejects once the pool is closed; the task's own failures come back in its answer.
   */
  async run(task: WorkerTask): Promise<WorkerAnswer | undefined> {
    const answer = await this.pool.run(task);
    if (answer) {
      this.completed += task.docs.length;
      this.tasks++;
    }
    return answer;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
