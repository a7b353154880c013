/**
 * THE sanitiser of what fecr prints (issue 25, point 8). Every string that comes from outside (a supplier's XML, a
 * file name, a server's or Hacienda's message, a certificate) goes through `safeText` before it reaches a terminal
 * or a pipe, so it can neither drive the terminal (ESC sequences: window title, colours, cursor moves, fake lines)
 * nor reorder what is shown (bidi overrides), nor split a row of a table.
 *
 * The form, readable and unambiguous (the text can be read back exactly, see `unescapeText`):
 *   TAB, LF, CR                           → `\t`, `\n`, `\r`
 *   other C0 (U+0000–U+001F), DEL, C1      → `\xHH`            (ESC → `\x1b`, BEL → `\x07`, CSI U+009B → `\x9b`)
 *   bidi overrides and isolates            → `\uHHHH`          (U+202A–U+202E, U+2066–U+2069: `\u202e`)
 *   a backslash that would read as one of these escapes (followed by `\`, `t`, `n`, `r`, `x`, `u` or an escaped
 *   character)                            → `\\`
 * Anything else is printed as it is: a backslash in `C:\Facturas` or `/^\d+$/` stays single.
 *
 * Spreadsheets: `spreadsheetCell` (tables piped as TSV, and `--csv`) also neutralises formulas, the OWASP way.
 */

const ESCAPED_CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069';
const ESCAPED = new RegExp(`[${ESCAPED_CLASS}]`);
const TO_ESCAPE = new RegExp(`\\\\(?=[\\\\tnrxu${ESCAPED_CLASS}])|[${ESCAPED_CLASS}]`, 'g');
const SHORT: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function escapeChar(c: string): string {
  if (c === '\\') return '\\\\';
  const short = SHORT[c];
  if (short) return short;
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `s` with control characters (C0, DEL, C1) and bidi overrides escaped: safe on a terminal, one line. */
export function safeText(s: string): string {
  return s.replace(TO_ESCAPE, escapeChar);
}

/** Whether `s` holds anything `safeText` would escape as a control or bidi character. */
export function hasUnsafeText(s: string): boolean {
  return ESCAPED.test(s);
}

/**
 * A block of text whose line breaks are meant (Hacienda's DetalleMensaje): each line (LF or CRLF ends one) through
 * `safeText`, joined with LF; a CR alone is escaped like any other control character.
 */
export function safeBlock(s: string): string {
  return s.split(/\r?\n/).map(safeText).join('\n');
}

/** The exact text `safeText` was given (for tests and anyone reading fecr's output back). */
export function unescapeText(s: string): string {
  return s.replace(/\\(\\|t|n|r|x[0-9a-f]{2}|u[0-9a-f]{4})/g, (_, e: string) => {
    if (e === '\\') return '\\';
    if (e.length === 1) return { t: '\t', n: '\n', r: '\r' }[e]!;
    return String.fromCharCode(parseInt(e.slice(1), 16));
  });
}

/** What JSON.stringify leaves raw though a terminal acts on it: DEL, C1, bidi overrides (C0 it escapes itself). */
const JSON_RAW = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `JSON.stringify`, with DEL, C1 and the bidi overrides written as `\uHHHH` escapes too: the same JSON value (they
 * only occur inside strings), so `--json` stays the raw data while nothing in it acts on a terminal.
 */
export function safeJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(JSON_RAW, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A plain decimal number, negative or not (`-1500.00000`): a spreadsheet reads it as that number, never a formula. */
const NUMBER = /^-?\d+(\.\d+)?$/;
/**
 * What a spreadsheet may take for a formula (OWASP, CSV injection): a cell that starts, after any spaces, with `=`,
 * `+`, `-`, `@` (or their full-width forms, which some spreadsheets read alike), or with a TAB or CR.
 */
const FORMULA = /^(?:[\t\r]| *[=+\-@\uff1d\uff0b\uff0d\uff20])/;

/**
 * A cell for a spreadsheet (TSV when a table is piped, `--csv`): `safeText`, then a cell a spreadsheet would run as a
 * formula gets a leading apostrophe (`'=HYPERLINK(…)`), which spreadsheets show as text. Left as they are: plain
 * numbers, negative ones too (money columns stay numbers: `-1500.00000`), and a lone `-` (fecr's "none").
 */
export function spreadsheetCell(s: string): string {
  const text = safeText(s);
  if (text === '-' || NUMBER.test(text)) return text;
  return FORMULA.test(text) ? `'${text}` : text;
}
