/**
 * Text input (a JSON body, a batch's CSV, JSON or JSONL), decoded in one place: UTF-8 with or without a BOM, or what
 * `--encoding` names. UTF-8 is decoded with `fatal`, so a byte that is not UTF-8 (a file saved as Latin-1 or
 * Windows-1252, what Excel on Windows writes) is refused with the file, the line and the byte, and never turns into
 * U+FFFD. `windows-1252` and `latin1` are WHATWG's decoder (`latin1` is one of its labels), built into Node's ICU.
 */

import type { TextEncoding } from '../core/text-encoding.js';

export { TEXT_ENCODINGS, textEncodingOf, type TextEncoding } from '../core/text-encoding.js';

export interface DecodeOptions {
  /** Default utf-8. */
  encoding?: TextEncoding | undefined;
  /** The command offers `--encoding` (the refusal then says to pass it); default true. */
  encodingFlag?: boolean;
}

/** A byte that is not UTF-8: `l1.csv: line 3: byte 0xED is not UTF-8; save the file as UTF-8 or pass --encoding windows-1252`. */
export class TextEncodingError extends Error {
  /** The message without the file's name: `line 3: byte 0xED is not UTF-8; …`. */
  readonly reason: string;

  constructor(
    readonly file: string,
    readonly line: number,
    readonly byte: number,
    encodingFlag = true,
  ) {
    const reason = `line ${line}: byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')} is not UTF-8; save the file as UTF-8${encodingFlag ? ' or pass --encoding windows-1252' : ''}`;
    super(`${file}: ${reason}`);
    this.name = 'TextEncodingError';
    this.reason = reason;
  }
}

/** Decodes a whole file's bytes (a BOM removed); `name` is how the refusal names it ("stdin" for "-"). */
export function decodeText(bytes: Uint8Array, name: string, opts: DecodeOptions = {}): string {
  const decoder = decoderFor(bytes, opts);
  try {
    return decoder.decode(bytes);
  } catch {
    throw notUtf8(bytes, 1, name, opts);
  }
}

type Decoder = Pick<TextDecoder, 'decode'>;

/**
 * A fatal decoder of `opts.encoding`; a UTF-8 BOM at the start wins over the name given (as WHATWG's decode does),
 * so a UTF-8 file read with `--encoding windows-1252` is still read as UTF-8, not as "Ã­" for "í".
 */
function decoderFor(start: Uint8Array, opts: DecodeOptions): Decoder {
  const bom = start[0] === 0xef && start[1] === 0xbb && start[2] === 0xbf;
  if (bom || (opts.encoding ?? 'utf-8') === 'utf-8') return new TextDecoder('utf-8', { fatal: true });
  const latin = new TextDecoder('windows-1252');
  return { decode: (bytes, o) => latin.decode(bytes, o).replace(/[\u0080-\u009F]/g, (c) => WINDOWS_1252_80_9F[c.charCodeAt(0) - 0x80]!) };
}

/**
 * WHATWG's index-windows-1252 for the bytes 0x80-0x9F (€ ‚ ƒ „ … † ‡ ˆ ‰ Š ‹ Œ Ž ' ' " " • – — ˜ ™ š › œ ž Ÿ; the five
 * bytes it leaves undefined stay as they are). Node 20.18.3 and later decode windows-1252 as ISO-8859-1 there
 * (nodejs/node#56542, #60888: 0x80 → U+0080, a control, not €), so the decoder's output is mapped through this
 * table; with a decoder that is right, nothing in that range is left to map.
 */
const WINDOWS_1252_80_9F = '\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178';

/**
 * Decodes a stream of byte chunks as it comes (a BOM removed), for the batch reader: a byte that is not UTF-8 throws
 * a TextEncodingError naming its line, counted from the start of the stream.
 */
export async function* decodeChunks(chunks: AsyncIterable<Uint8Array | string>, name: string, opts: DecodeOptions = {}): AsyncGenerator<string> {
  let decoder: Decoder | undefined;
  /** The previous chunk (a bad sequence may start in it) and the line it starts on. */
  let prev: Uint8Array = new Uint8Array(0);
  let linesBeforePrev = 1;
  for await (const raw of chunks) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    if (chunk.length === 0) continue;
    decoder ??= decoderFor(chunk, opts);
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      throw notUtf8(Buffer.concat([prev, chunk]), linesBeforePrev, name, opts);
    }
    linesBeforePrev += countLines(prev);
    prev = chunk;
    if (text) yield text;
  }
  let rest = '';
  try {
    rest = decoder?.decode() ?? '';
  } catch {
    throw notUtf8(prev, linesBeforePrev, name, opts);
  }
  if (rest) yield rest;
}

function countLines(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === 0x0a) n++;
  return n;
}

/** The refusal for `bytes` (which the fatal decoder refused), whose first byte is on line `line`. */
function notUtf8(bytes: Uint8Array, line: number, name: string, opts: DecodeOptions): TextEncodingError {
  const at = firstInvalidUtf8(bytes);
  return new TextEncodingError(name, line + countLines(bytes.subarray(0, at)), bytes[at] ?? 0, opts.encodingFlag ?? true);
}

/**
 * Where the first byte sequence that is not well-formed UTF-8 starts (RFC 3629's table: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or a sequence cut by the end; only to name the byte once TextDecoder refused.
 * Leading continuation bytes are skipped: `bytes` may start inside a sequence that an earlier chunk began.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < 3 && i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i++;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) n = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined) return i;
      if (k === 1 ? c < lo || c > hi : (c & 0xc0) !== 0x80) return i;
    }
    i += n + 1;
  }
  return bytes.length;
}
