/**
 * Worker threads (piscina) that give up for good at their first failure: when a thread cannot start (its module
 * missing, say) or dies, `run` resolves `undefined` from then on, the threads are ended (no respawning), and the
 * caller does the work on its own thread: the same result, only slower. The emulator's document analysis
 * (emulator/pool.ts) and the receptor mails (service/delivery/email-render-pool.ts) run on such threads.
 *
 * The threads start with `warm()` or the first task and end with `close()`.
 */
type Piscina = import('piscina').Piscina;

export interface FallibleThreadsOptions {
  /** The threads' module (adapters/worker-module.ts workerModule, or a file URL) and the execArgv it needs. */
  module: { filename: string; execArgv?: string[] };
  threads: number;
  /** Cap of each thread's young generation (MB): short-lived garbage is collected sooner (peak RSS). */
  youngGenerationMb?: number;
  /** Told once, at the first failure. */
  onError?: (e: unknown) => void;
  /** The error `run` throws once closed. */
  closedMessage?: string;
}

export class FallibleThreads<Task, Answer> {
  private pool: Promise<Piscina> | undefined;
  private started: Piscina | undefined;
  private broken = false;
  private closed = false;

  constructor(private readonly o: FallibleThreadsOptions) {}

  /** True while tasks go to the threads (not closed, not broken). */
  get usable(): boolean {
    return !this.broken && !this.closed;
  }

  /** Live worker threads (0 before the start and after `close()`). */
  get liveThreads(): number {
    return this.started?.threads.length ?? 0;
  }

  /** Starts the threads now rather than with the first task. */
  warm(): void {
    if (this.usable) this.start().catch(() => undefined);
  }

  /**
   * Runs a task on a thread. Resolves `undefined` when the threads are broken (the caller then does the work itself)
   * and rejects once closed; a task's own failures should come back in its answer (a thrown one breaks the threads).
   */
  async run(task: Task): Promise<Answer | undefined> {
    if (this.closed) throw new Error(this.o.closedMessage ?? 'the threads are closed');
    if (this.broken) return undefined;
    try {
      return (await (await this.start()).run(task)) as Answer;
    } catch (e) {
      if (this.closed) throw new Error(this.o.closedMessage ?? 'the threads are closed');
      this.fail(e);
      return undefined;
    }
  }

  private start(): Promise<Piscina> {
    return (this.pool ??= import('piscina').then(({ Piscina }) => {
      const { filename, execArgv } = this.o.module;
      const p = new Piscina({
        filename,
        ...(execArgv ? { execArgv } : {}),
        minThreads: this.o.threads,
        maxThreads: this.o.threads,
        idleTimeout: 2 ** 31 - 1,
        // Each task is CPU-bound: one at a time per thread.
        concurrentTasksPerWorker: 1,
        recordTiming: false,
        ...(this.o.youngGenerationMb ? { resourceLimits: { maxYoungGenerationSizeMb: this.o.youngGenerationMb } } : {}),
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
    this.o.onError?.(e);
    void this.started?.destroy().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const p = this.pool;
    if (!p) return;
    try {
      await (await p).destroy();
    } catch {
      // threads that never started have nothing to end
    }
  }
}
