/**
 * Where receptor mails are rendered (email-render.ts: the PDF, the MIME message): on the worker's own thread
 * (`inlineMailRenderer`), or on a thread of their own (`MailRenderThread`, piscina), beside the event loop that
 * sends, polls and answers.
 *
 * The thread is what a one-document command (`fecr send --wait`) needs: it starts with the command and, on the other
 * core, loads pdfkit, nodemailer and the fonts (`warm`) while the command loads the service, signs, sends and waits
 * for the verdict; the mail then costs its rendering alone. A batch renders its mails after its
 * verdicts on as many threads as there are cores, the event loop only storing and writing them.
 *
 * If the thread cannot run a task (it fails to start or dies), rendering falls back to this thread for good: the
 * mail is the same, only slower.
 */
import { workerModule } from '../../adapters/worker-module.js';
import type { MailToRender, RenderedMail } from './email-render.js';
import type { RenderAnswer, RenderTask } from './email-render-worker.js';

type Piscina = import('piscina').Piscina;

const YOUNG_GENERATION_MB = 8;

export interface MailRenderer {
  render(mail: MailToRender): Promise<RenderedMail>;
  /** Gets ready for a first mail before there is one to render. */
  warm(): void;
  close(): Promise<void>;
}

/** pdfkit, its fonts and nodemailer load with the first mail: a worker that only sends and polls never pays for them. */
const renderMail = async (mail: MailToRender) => (await import('./email-render.js')).renderMail(mail);

export const inlineMailRenderer: MailRenderer = {
  render: renderMail,
  warm: () => undefined,
  close: async () => undefined,
};

export class MailRenderThread implements MailRenderer {
  private pool: Promise<Piscina> | undefined;
  private broken = false;
  private closed = false;

  constructor(
    /** Threads (default 1). */
    private readonly threads = 1,
    private readonly onError?: (e: unknown) => void,
    /** Another worker module (default email-render-worker next to this file). */
    private readonly workerFile?: string,
  ) {}

  warm(): void {
    if (this.broken || this.closed) return;
    const task: RenderTask = { kind: 'warm' };
    this.start()
      .then((p) => p.run(task))
      .catch((e: unknown) => this.fail(e));
  }

  async render(mail: MailToRender): Promise<RenderedMail> {
    if (this.closed) throw new Error('the mail renderer is closed');
    if (!this.broken) {
      let answer: RenderAnswer;
      try {
        answer = (await (await this.start()).run({ kind: 'render', mail } satisfies RenderTask)) as RenderAnswer;
      } catch (e) {
        if (this.closed) throw e;
        // The thread failed (not the mail): from now on, this thread renders.
        this.fail(e);
        return renderMail(mail);
      }
      if (answer && 'mail' in answer) return answer.mail;
      throw new Error(answer?.error ?? 'the mail thread answered nothing');
    }
    return renderMail(mail);
  }

  private start(): Promise<Piscina> {
    return (this.pool ??= import('piscina').then(({ Piscina }) => {
      const { filename, execArgv } = this.workerFile ? { filename: this.workerFile, execArgv: undefined } : workerModule('email-render-worker', import.meta.url);
      const p = new Piscina({
        filename,
        ...(execArgv ? { execArgv } : {}),
        minThreads: this.threads,
        maxThreads: this.threads,
        idleTimeout: 2 ** 31 - 1,
        concurrentTasksPerWorker: 1,
        recordTiming: false,
        // A mail's garbage is short-lived (the PDF's chunks, the MIME parts): a small young generation collects it
        // soon, which keeps a batch's peak RSS down (as the emulator's thread does).
        resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      });
      p.on('error', (e: unknown) => this.fail(e));
      if (this.closed) void p.destroy().catch(() => undefined);
      return p;
    }));
  }

  private fail(e: unknown): void {
    if (this.broken || this.closed) return;
    this.broken = true;
    this.onError?.(e);
    void this.pool?.then((p) => p.destroy()).catch(() => undefined);
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
