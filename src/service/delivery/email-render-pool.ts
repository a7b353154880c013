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
import { FallibleThreads } from '../../adapters/thread-pool.js';
import { workerModule } from '../../adapters/worker-module.js';
import type { MailToRender, RenderedMail } from './email-render.js';
import type { RenderAnswer, RenderTask } from './email-render-worker.js';

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
  private readonly threads: FallibleThreads<RenderTask, RenderAnswer>;

  constructor(
    /** Threads (default 1). */
    threads = 1,
    onError?: (e: unknown) => void,
    /** Another worker module (default email-render-worker next to this file). */
    workerFile?: string,
  ) {
    this.threads = new FallibleThreads({
      module: workerFile ? { filename: workerFile } : workerModule('email-render-worker', import.meta.url),
      threads,
      // A mail's garbage is short-lived (the PDF's chunks, the MIME parts): a small young generation collects it
      // soon, which keeps a batch's peak RSS down (as the emulator's thread does).
      youngGenerationMb: YOUNG_GENERATION_MB,
      ...(onError ? { onError } : {}),
      closedMessage: 'the mail renderer is closed',
    });
  }

  warm(): void {
    if (this.threads.usable) void this.threads.run({ kind: 'warm' }).catch(() => undefined);
  }

  /** On a thread; on this one when the threads failed (`undefined` from them). A mail's own fault is its error. */
  async render(mail: MailToRender): Promise<RenderedMail> {
    const answer = await this.threads.run({ kind: 'render', mail });
    if (answer === undefined) return renderMail(mail);
    if (answer && 'mail' in answer) return answer.mail;
    throw new Error(answer?.error ?? 'the mail thread answered nothing');
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}
