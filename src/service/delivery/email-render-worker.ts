/**
 * The mail thread's module (piscina; email-render-pool.ts): renders a receptor mail, or warms up for one.
 */
import { renderMail, warmMailRendering, type MailToRender, type RenderedMail } from './email-render.js';

export type RenderTask = { kind: 'render'; mail: MailToRender } | { kind: 'warm' };

/** A mail that cannot be rendered comes back as `{ error }`: a thrown error means the thread itself failed. */
export type RenderAnswer = { mail: RenderedMail } | { error: string } | null;

export default async function run(task: RenderTask): Promise<RenderAnswer> {
  try {
    if (task.kind === 'warm') {
      await warmMailRendering();
      return null;
    }
    return { mail: await renderMail(task.mail) };
  } catch (e) {
    // The mail's own fault (a row the PDF cannot show), or a warm-up's: the thread itself goes on.
    return { error: e instanceof Error ? e.message : String(e) };
  }
}
