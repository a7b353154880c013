/**
 * The header that says why fecr set a mail aside (issue 30): `X-Fecr-Set-Aside: <reason>`, one per reason (at most
 * MAX_REASONS), prepended to the message. A reason quotes the supplier's words (a finding, a file name): it is made
 * one line of printable ASCII, or an RFC 2047 encoded word (UTF-8, base64) when it holds anything else, so it can
 * neither break the header block (no CR or LF gets through) nor be read as another header.
 */
export const SET_ASIDE_HEADER = 'X-Fecr-Set-Aside';
/** The source of a copy set aside in IMAP (`<uidvalidity>-<uid>`): a second pass finds it and does not copy again. */
export const SOURCE_HEADER = 'X-Fecr-Source';

const MAX_REASONS = 10;
const MAX_CHARS = 400;

/** One header value: printable ASCII as it is, anything else as encoded words of at most 75 characters, folded. */
export function headerValue(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  const cut = [...one].length > MAX_CHARS ? `${[...one].slice(0, MAX_CHARS - 3).join('')}...` : one;
  if (/^[\x20-\x7e]*$/.test(cut)) return cut;
  const words: string[] = [];
  let chunk = '';
  for (const ch of cut) {
    // 45 bytes of UTF-8 are 60 characters of base64: with =?UTF-8?B? and ?=, 72.
    if (Buffer.byteLength(chunk + ch) > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join('\r\n ');
}

/** The headers to prepend (CRLF-ended lines) for these reasons. */
export function setAsideHeaders(reasons: string[], extra: Record<string, string> = {}): string {
  const lines = Object.entries(extra).map(([k, v]) => `${k}: ${headerValue(v)}\r\n`);
  const shown = reasons.slice(0, MAX_REASONS);
  if (reasons.length > MAX_REASONS) shown.push(`and ${reasons.length - MAX_REASONS} more`);
  for (const r of shown) lines.push(`${SET_ASIDE_HEADER}: ${headerValue(r)}\r\n`);
  return lines.join('');
}

/** The mail with the headers before its own (a mail whose lines end in LF alone gets LF-ended headers). */
export function withHeaders(raw: Buffer, headers: string): Buffer {
  const crlf = raw.indexOf('\r\n') >= 0 || raw.indexOf('\n') < 0;
  return Buffer.concat([Buffer.from(crlf ? headers : headers.replace(/\r\n/g, '\n'), 'utf8'), raw]);
}
