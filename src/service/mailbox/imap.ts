/**
 * An IMAP mailbox as a MailSource (issue 30), through imapflow: the waiting mails are those of the URL's mailbox
 * (default INBOX); a mail dealt with is MOVEd (server side) to `fecr-imported`, or set aside in `fecr-set-aside` as a
 * copy carrying its reasons (headers.ts) APPENDed before the original is deleted. The copy names its source
 * (`X-Fecr-Source: <uidvalidity>-<uid>`): a process killed between the two steps finds it on the next pass and only
 * deletes the original. Both folders are created when missing.
 *
 * URL: `imap://USER@HOST[:PORT][/MAILBOX]` (STARTTLS when the server offers it) or `imaps://…` (TLS, port 993). The
 * password: FECR_IMAP_PASSWORD, else the URL's (`imap://USER:PASSWORD@…`, which shows in the process list).
 */
import { ImapFlow } from 'imapflow';
import { setAsideHeaders, SOURCE_HEADER, withHeaders } from './headers.js';
import type { MailRead, MailRef, MailSource } from './watch.js';

export const IMAP_PASSWORD_VAR = 'FECR_IMAP_PASSWORD';
export const IMPORTED_FOLDER = 'fecr-imported';
export const SET_ASIDE_FOLDER = 'fecr-set-aside';

export interface ImapTarget {
  host: string;
  port: number;
  secure: boolean;
  user: string;
  pass: string;
  mailbox: string;
}

/** The URL's parts; throws an Error whose message says what is wrong (never echoing the password). */
export function parseImapUrl(url: string, env: Record<string, string | undefined>): ImapTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error('--imap must be a URL like imaps://USER@HOST/INBOX');
  }
  if (u.protocol !== 'imap:' && u.protocol !== 'imaps:') throw new Error(`--imap must be an imap:// or imaps:// URL, not ${u.protocol}//`);
  if (!u.hostname) throw new Error('--imap: the URL has no host');
  const user = decodeURIComponent(u.username);
  if (!user) throw new Error('--imap: the URL has no user (imaps://USER@HOST/INBOX)');
  const pass = env[IMAP_PASSWORD_VAR] ?? decodeURIComponent(u.password);
  if (!pass) throw new Error(`--imap: no password: set ${IMAP_PASSWORD_VAR}`);
  const secure = u.protocol === 'imaps:';
  const mailbox = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'INBOX';
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : secure ? 993 : 143, secure, user, pass, mailbox };
}

/** What went wrong with the IMAP server, in words (imapflow's errors say "Command failed" and keep the rest apart). */
export function imapErrorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const x = e as Error & { authenticationFailed?: boolean; responseText?: string; code?: string };
  if (x.authenticationFailed) return `the IMAP server refused the user or password${x.responseText ? ` (${x.responseText})` : ''}`;
  if (x.code === 'ECONNREFUSED' || x.code === 'ENOTFOUND' || x.code === 'ETIMEDOUT' || x.code === 'ECONNRESET') return `the IMAP server cannot be reached (${x.code})`;
  return x.responseText ? `${x.message}: ${x.responseText}` : x.message;
}

export class ImapSource implements MailSource {
  readonly label: string;
  private readonly client: ImapFlow;
  private sizes = new Map<string, number>();
  private uidValidity = '';

  private constructor(private readonly t: ImapTarget) {
    this.label = `imap${t.secure ? 's' : ''}://${t.user}@${t.host}:${t.port}/${t.mailbox}`;
    this.client = new ImapFlow({ host: t.host, port: t.port, secure: t.secure, auth: { user: t.user, pass: t.pass }, logger: false, disableAutoIdle: true });
    // A dropped connection is reported by the next command; an 'error' event must not crash the process.
    this.client.on('error', () => undefined);
  }

  /** Connects and creates the folders; throws an Error in words (imapErrorText). */
  static async open(t: ImapTarget): Promise<ImapSource> {
    const s = new ImapSource(t);
    try {
      await s.client.connect();
      for (const folder of [IMPORTED_FOLDER, SET_ASIDE_FOLDER]) await s.client.mailboxCreate(folder);
    } catch (e) {
      s.client.close();
      throw new Error(imapErrorText(e));
    }
    return s;
  }

  private async inbox(): Promise<void> {
    // A closed connection fails the pass (the watcher opens the mailbox again), never reads as an empty mailbox.
    if (!this.client.usable) throw new Error('the connection to the IMAP server was closed');
    if (this.client.mailbox && this.client.mailbox.path === this.t.mailbox) return;
    const box = await this.client.mailboxOpen(this.t.mailbox);
    this.uidValidity = String(box.uidValidity);
  }

  async pending(): Promise<MailRef[]> {
    await this.inbox();
    this.sizes.clear();
    const refs: MailRef[] = [];
    if (!this.client.mailbox || this.client.mailbox.exists === 0) return refs;
    for await (const m of this.client.fetch('1:*', { uid: true, size: true, flags: true })) {
      if (m.flags?.has('\\Deleted')) continue;
      this.sizes.set(String(m.uid), m.size ?? 0);
      refs.push({ id: String(m.uid) });
    }
    return refs.sort((a, b) => Number(a.id) - Number(b.id));
  }

  async read(ref: MailRef, maxBytes: number): Promise<MailRead> {
    const size = this.sizes.get(ref.id);
    if (size !== undefined && size > maxBytes) return { tooLarge: size };
    await this.inbox();
    const m = await this.client.fetchOne(ref.id, { uid: true, source: true }, { uid: true });
    if (!m || !m.source) return { unreadable: 'no longer in the mailbox' };
    if (m.source.length > maxBytes) return { tooLarge: m.source.length };
    return { bytes: m.source };
  }

  async imported(ref: MailRef): Promise<void> {
    await this.inbox();
    await this.client.messageMove(ref.id, IMPORTED_FOLDER, { uid: true });
  }

  async setAside(ref: MailRef, raw: Buffer | null, reasons: string[]): Promise<void> {
    await this.inbox();
    const source = `${this.uidValidity}-${ref.id}`;
    if (raw === null) {
      // Not read (too large): the original moves as it is, and a note beside it says why.
      const note = `${setAsideHeaders(reasons, { [SOURCE_HEADER]: source })}Subject: fecr set aside mail ${source}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${reasons.join('\r\n')}\r\n`;
      if (!(await this.copied(source))) await this.client.append(SET_ASIDE_FOLDER, Buffer.from(note, 'utf8'));
      await this.inbox();
      await this.client.messageMove(ref.id, SET_ASIDE_FOLDER, { uid: true });
      return;
    }
    if (!(await this.copied(source))) await this.client.append(SET_ASIDE_FOLDER, withHeaders(raw, setAsideHeaders(reasons, { [SOURCE_HEADER]: source })));
    await this.inbox();
    await this.client.messageDelete(ref.id, { uid: true });
  }

  /** Whether the set-aside folder already holds the copy (or note) of this mail. */
  private async copied(source: string): Promise<boolean> {
    await this.client.mailboxOpen(SET_ASIDE_FOLDER);
    const found = await this.client.search({ header: { [SOURCE_HEADER.toLowerCase()]: source } }, { uid: true });
    return Array.isArray(found) && found.length > 0;
  }

  async close(): Promise<void> {
    try {
      await this.client.logout();
    } catch {
      this.client.close();
    }
  }
}
