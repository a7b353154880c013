/**
 * JSON text parsed in one place (a body for `fecr send|validate|xml`, a batch's JSONL line or JSON array element), so
 * a syntax error says where it is the way editors and compilers do: `bad.json:3:17: Unexpected token '}'`.
 *
 * JSON.parse does the parsing. Its message gives the offset for most errors ("… in JSON at position 27"), but not for
 * an unexpected token (V8 then quotes the text instead: `Unexpected token '}', "{…}" is not valid JSON`). There the
 * offset is found with JSON.parse too: the longest prefix of the text that is still the start of a JSON value (it
 * parses, or ends early) stops right before the offending character; a binary search over the prefix lengths finds it
 * in log2(n) parses. No JSON library in the tree reports a position for that message either.
 */

/** Where a text starts in its file (a JSONL line, an array element): 1-based line and column. */
export interface TextStart {
  line: number;
  column: number;
}

/** A JSON syntax error with its place: the message is `FILE:LINE:COLUMN: reason`. */
export class JsonSyntaxError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    /** JSON.parse's words without their position or quoted text: `Unexpected token '}'`. */
    readonly reason: string,
  ) {
    super(`${file}:${line}:${column}: ${reason}`);
    this.name = 'JsonSyntaxError';
  }
}

/** JSON.parse(text); a syntax error becomes a JsonSyntaxError naming `file` and the line and column in it. */
export function parseJsonText(text: string, file: string, start: TextStart = { line: 1, column: 1 }): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    const { line, column } = lineColumn(text, errorOffset(text, e.message), start);
    throw new JsonSyntaxError(file, line, column, reasonOf(e.message));
  }
}

/** JSON.parse's message without the offset and the quoted text. */
export function reasonOf(message: string): string {
  return message
    .replace(/ in JSON at position \d+(?: \(line \d+ column \d+\))?$/, '')
    .replace(/^(Unexpected token '[\s\S]{1,2}'), [\s\S]* is not valid JSON$/, '$1');
}

/** The offset (UTF-16 units) of the character JSON.parse stopped at, from its message or by bisecting prefixes. */
function errorOffset(text: string, message: string): number {
  const at = / at position (\d+)/.exec(message);
  if (at) return Math.min(Number(at[1]), text.length);
  if (/^Unexpected end of JSON input/.test(message)) return text.length;
  // The longest viable prefix: lo is viable, hi is not (the whole text is not).
  let lo = 0;
  let hi = text.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (viablePrefix(text.slice(0, mid))) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Whether `prefix` could start a JSON text: it parses, or fails only because it ends. */
function viablePrefix(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return true;
  } catch (e) {
    const m = (e as Error).message;
    if (/^Unexpected end of JSON input/.test(m)) return true;
    const at = / at position (\d+)/.exec(m);
    return at !== null && Number(at[1]) >= prefix.length;
  }
}

/** The 1-based line and column of `offset` in `text`, which starts at `start` of its file (LF, CRLF and CR lines). */
export function lineColumn(text: string, offset: number, start: TextStart = { line: 1, column: 1 }): TextStart {
  let line = start.line;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: line === start.line ? start.column + offset : offset - lineStart + 1 };
}
