/**
 * The mail thread's module (piscina; email-render-pool.ts): renders a receptor mail, or warms up for one.
 */
import type { DocumentRow } from '../../store/schema.js';
import { renderMail, warmMailRendering, type MailToRender, type RenderedMail } from './email-render.js';

export type RenderTask = { kind: 'render'; mail: MailToRender } | { kind: 'warm'; row?: DocumentRow };

/** A mail that cannot be rendered comes back as `{ error }`: a thrown error means the thread itself failed. */
export type RenderAnswer = { mail: RenderedMail } | { error: string } | null;

export default async function run(task: RenderTask): Promise<RenderAnswer> {
  try {
    if (task.kind === 'warm') {
      await warmMailRendering(task.row);
      return null;
    }
    return { mail: await renderMail(task.mail) };
  } catch (e) {
    // A warm-up that fails (a row the PDF cannot show) is no fault of the thread: the real mail will say it.
    return { error: e instanceof Error ? e.message : String(e) };
  }
}
