/**
 * The wire of the receptor mails: nodemailer and nothing home-made. The message arrives rendered (email-render.ts:
 * nodemailer's MIME, CRLF). An SMTP server gets it through a pooled nodemailer transport per server (a few
 * connections kept open, STARTTLS or TLS, AUTH); the outbox keeps it as `<clave>-<n>.eml` (a temporary name, then
 * renamed: a reader never sees half a file).
 *
 * An attempt's outcome: sent (the server's 250 reply), temporary (a 4xx reply, a connection refused, reset or timed
 * out: retried with backoff) or permanent (a 5xx reply: recorded, never retried).
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type { SmtpServer } from '../mail-defaults.js';
import type { MailRoute } from '../mail-settings.js';
import type { RenderedMail } from './email-render.js';

export type SendOutcome =
  | { result: 'sent'; reply: string; rejected: string[] }
  | { result: 'temporary'; reply: string }
  | { result: 'permanent'; reply: string };

export interface TransportTimeouts {
  /** TCP connect (default 10 s), greeting (default 10 s), idle socket (default 60 s). */
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
  /** Connections kept per SMTP server (default 4). */
  maxConnections?: number;
}

/** A failed attempt, classified: a reply code decides (4xx temporary, 5xx permanent); without one, network trouble is temporary. */
export function classifyFailure(e: unknown): Exclude<SendOutcome, { result: 'sent' }> {
  const err = (e ?? {}) as { responseCode?: unknown; response?: unknown; code?: unknown; message?: unknown; errno?: unknown };
  const code = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  const response = typeof err.response === 'string' ? err.response.trim() : undefined;
  const message = typeof err.message === 'string' ? err.message : String(e);
  if (code !== undefined) {
    const reply = response ?? `${code} ${message}`;
    return code >= 500 ? { result: 'permanent', reply } : { result: 'temporary', reply };
  }
  const c = typeof err.code === 'string' ? err.code : undefined;
  const text = c ? `${c}: ${message}` : message;
  // No reply code: a message nodemailer refuses to send (no recipients, a bad message, AUTH refused without a code)
  // is final; anything else is the network's (ECONNECTION, ESOCKET, ETIMEDOUT, EDNS, ETLS: refused, reset, timed out) or unknown,
  // and is tried again while the retry window lasts.
  if (c === 'EENVELOPE' || c === 'EMESSAGE' || c === 'EAUTH') return { result: 'permanent', reply: text };
  return { result: 'temporary', reply: text };
}

type Nodemailer = Pick<typeof import('nodemailer'), 'createTransport'>;

/** The transports of one worker: one pooled SMTP transport per server, the stream transport for the outbox. */
export class MailTransports {
  private nodemailer: Promise<Nodemailer> | undefined;
  private readonly smtp = new Map<string, Promise<Transporter>>();

  constructor(private readonly o: TransportTimeouts = {}) {}

  private lib(): Promise<Nodemailer> {
    return (this.nodemailer ??= import('nodemailer'));
  }

  private smtpTransport(s: SmtpServer): Promise<Transporter> {
    const key = JSON.stringify([s.host, s.port, s.security, s.user ?? '', s.password ?? '', s.ca ?? '']);
    let t = this.smtp.get(key);
    if (!t) {
      t = this.lib().then((nm) =>
        nm.createTransport({
          pool: true,
          maxConnections: this.o.maxConnections ?? 4,
          maxMessages: 500,
          host: s.host,
          port: s.port,
          secure: s.security === 'tls',
          requireTLS: s.security === 'starttls',
          ...(s.user ? { auth: { user: s.user, pass: s.password ?? '' } } : {}),
          ...(s.ca ? { tls: { ca: s.ca } } : {}),
          connectionTimeout: this.o.connectionTimeoutMs ?? 10_000,
          greetingTimeout: this.o.greetingTimeoutMs ?? 10_000,
          socketTimeout: this.o.socketTimeoutMs ?? 60_000,
          name: 'fecr',
        }),
      );
      this.smtp.set(key, t);
    }
    return t;
  }

  /** One attempt to deliver a rendered mail by `route`; never throws for the server's or the network's faults. */
  async send(route: MailRoute, mail: RenderedMail): Promise<SendOutcome> {
    if (route.kind === 'outbox') {
      await mkdir(route.dir, { recursive: true });
      const file = path.join(route.dir, `${mail.outboxName}.eml`);
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, mail.raw);
      await rename(tmp, file);
      return { result: 'sent', reply: `outbox: ${file}`, rejected: [] };
    }
    try {
      const t = await this.smtpTransport(route.server);
      // The message as rendered (email-render.ts), byte for byte; the envelope says whom it goes to.
      const info = (await t.sendMail({ envelope: mail.envelope, raw: Buffer.from(mail.raw.buffer, mail.raw.byteOffset, mail.raw.byteLength) })) as { response?: string; rejected?: unknown[] };
      const rejected = (info.rejected ?? []).map(String);
      return { result: 'sent', reply: (info.response ?? '250').trim(), rejected };
    } catch (e) {
      return classifyFailure(e);
    }
  }

  async close(): Promise<void> {
    const all = [...this.smtp.values()];
    this.smtp.clear();
    await Promise.allSettled(all.map(async (p) => (await p).close()));
  }
}
