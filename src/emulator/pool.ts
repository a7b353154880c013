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
import { workerModule } from '../adapters/worker-module.js';

type Piscina = import('piscina').Piscina;

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
  private pool: Promise<Piscina> | undefined;
  private broken = false;
  private closed = false;
  /** Documents the threads analysed, and the messages (tasks) that carried them. */
  completed = 0;
  tasks = 0;

  constructor(
    readonly threads: number,
    private readonly onError?: (e: unknown) => void,
    /** Another worker module (default validate-worker next to this file). */
    private readonly workerModule?: string,
  ) {}

  /** True while tasks go to the threads (not closed, not broken). */
  get usable(): boolean {
    return !this.broken && !this.closed;
  }

  /** Live worker threads (0 before the start and after `close()`). */
  get liveThreads(): number {
    return this.started?.threads.length ?? 0;
  }

  private started: Piscina | undefined;

  /** Starts the threads now rather than with the first task. */
  warm(): void {
    if (this.usable) this.start().catch(() => undefined);
  }

  private start(): Promise<Piscina> {
    return (this.pool ??= import('piscina').then(({ Piscina }) => {
      const { filename, execArgv } = this.workerModule ? { filename: this.workerModule, execArgv: undefined } : workerModule('validate-worker', import.meta.url);
      const p = new Piscina({
        filename,
        ...(execArgv ? { execArgv } : {}),
        minThreads: this.threads,
        maxThreads: this.threads,
        idleTimeout: 2 ** 31 - 1,
        // Each task is a few ms of CPU: one at a time per thread.
        concurrentTasksPerWorker: 1,
        recordTiming: false,
      });
      // A worker that fails with no task running (e.g. it cannot load its module) is reported here.
      p.on('error', (e: unknown) => this.fail(e));
      this.started = p;
      if (this.closed || this.broken) void p.destroy().catch(() => undefined);
      return p;
    }));
  }

  /** From the first failure on, the caller does the work itself; the threads are ended (no respawning). */
  private fail(e: unknown): void {
    if (this.broken || this.closed) return;
    this.broken = true;
    this.onError?.(e);
    void this.started?.destroy().catch(() => undefined);
  }

  /**
   * Runs a task on a thread. Resolves `undefined` when the pool is broken (the caller then does the work
   * itself) and rejects once the pool is closed; the task's own failures come back in its answer.
   */
  async run(task: WorkerTask): Promise<WorkerAnswer | undefined> {
    if (this.closed) throw new Error('the emulator is closing');
    if (this.broken) return undefined;
    try {
      const answer = (await (await this.start()).run(task)) as WorkerAnswer;
      this.completed += task.docs.length;
      this.tasks++;
      return answer;
    } catch (e) {
      if (this.closed) throw new Error('the emulator is closing');
      this.fail(e);
      return undefined;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const p = this.pool;
    if (!p) return;
    try {
      await (await p).destroy();
    } catch {
      // a pool that never started has nothing to end
    }
  }
}
