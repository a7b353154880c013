/**
 * A receptor mail made ready to send: the PDF rendered from the stored row (pdf.ts), the message composed
 * (email-message.ts), and its MIME bytes built by nodemailer's stream transport: the bytes an SMTP server receives
 * and the outbox keeps, with CRLF line ends. CPU-bound (≈ 15–20 ms, most of it the PDF) and free of the store and the
 * network, so it can run on the mail thread (email-render-pool.ts) as well as on the worker's own. It imports pdfkit and
 * nodemailer: the worker's thread loads this module with its first mail (email-render-pool.ts), never before. Its
 * imports are static: a thread started from the sources (tests) resolves no dynamic import() of a .ts file.
 */
import nodemailer from 'nodemailer';
import type { DocumentRow } from '../../store/schema.js';
import { renderPdf, warmPdfRendering } from '../pdf.js';
import { composeMail, type ComposeInput } from './email-message.js';

/** Everything a mail is made of, as plain data (it crosses to the mail thread by structured clone). */
export interface MailToRender extends Omit<ComposeInput, 'doc' | 'pdf'> {
  row: DocumentRow;
}

export interface RenderedMail {
  /** The whole message (RFC 5322, CRLF). */
  raw: Uint8Array;
  /** SMTP's MAIL FROM and RCPT TO. */
  envelope: { from: string; to: string[] };
  /** Base name of the outbox file (without `.eml`). */
  outboxName: string;
}

type StreamTransport = { sendMail(message: object): Promise<{ message: Buffer }> };
let stream: StreamTransport | undefined;

/** nodemailer's stream transport: the message as one buffer, CRLF line ends (what an SMTP server receives). */
function streamTransport(): StreamTransport {
  return (stream ??= nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' }) as unknown as StreamTransport);
}

export async function renderMail(m: MailToRender): Promise<RenderedMail> {
  const { row, ...rest } = m;
  const pdf = await renderPdf(undefined, row);
  const mail = composeMail({ ...rest, doc: { ...row, response_xml: row.response_xml ?? '' }, pdf });
  const { outboxName: _, ...message } = mail;
  const info = await streamTransport().sendMail(message);
  return { raw: info.message, envelope: { from: mail.from.address, to: mail.to }, outboxName: mail.outboxName };
}

/**
 * Gets ready for a first mail: pdfkit, the fonts (parsed in the order a real PDF opens them: pdf.ts warmPdfRendering)
 * and nodemailer loaded and run once on throwaway data. What the mail thread does while a one-document command still
 * signs, sends and waits for the verdict.
 */
export async function warmMailRendering(): Promise<void> {
  await warmPdfRendering();
  // nodemailer's first message (its MIME code compiled): a throwaway one with a small attachment.
  await streamTransport().sendMail({
    from: 'a@fecr.invalid',
    to: 'b@fecr.invalid',
    subject: 'á',
    text: 'á',
    html: '<p>á</p>',
    attachments: [{ filename: 'a.pdf', content: Buffer.alloc(4096), contentType: 'application/pdf' }],
  });
}
