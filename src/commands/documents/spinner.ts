/**
 * The spinner of `--wait` / `--watch`, on stderr, as progressStyle (src/cli/output.ts) decides:
 *  - "redraw" (a terminal with a known, positive width, not CI, not TERM=dumb): ora, without colour under NO_COLOR;
 *  - "lines" (a terminal that must not be redrawn: 0 columns, CI, TERM=dumb): plain lines, one when the text
 *    changes (at most one a second) and a reminder every 10 s, never cut to a width;
 *  - "none" (stderr not a terminal): nothing at all.
 * ora is loaded only when a spinner is really drawn, so scripts (stderr not a terminal) and `fecr --help` never
 * pay for it.
 *
 * ora is given a thin view of the injected stderr that turns its cursor calls into escape sequences, so it draws
 * on whatever stream the command was given (a terminal, or a test's stream that says it is one).
 */
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { progressStyle, terminalColumns, useColor } from '../../cli/output.js';

export interface Spinner {
  text(t: string): void;
  stop(): void;
}

type OraModule = typeof import('ora');
type Ora = ReturnType<OraModule['default']>;

let loaded: OraModule | undefined;

/** ora, synchronously when this Node can require ES modules (20.19+), else undefined (then it is imported). */
function oraNow(): OraModule | undefined {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)('ora') as OraModule;
  } catch {
    loaded = undefined;
  }
  return loaded;
}

/**
 * What ora needs of a TTY stream, on top of any Writable: cursor movement as ANSI sequences, and always a positive
 * width (ora divides by it: a 0 made its clear loop endless): the terminal's current one, else the last it reported.
 */
function ttyView(stream: Writable, width: () => number): NodeJS.WriteStream {
  const s = stream as Writable & { rows?: number };
  const write = (chunk: string) => stream.write(chunk);
  return {
    isTTY: true,
    get columns() {
      return width();
    },
    get rows() {
      return s.rows;
    },
    write: (chunk: unknown, encoding?: unknown, cb?: unknown) => (stream.write as (...a: unknown[]) => boolean)(chunk, encoding, cb),
    cursorTo: (x: number) => write(x === 0 ? '\r' : `\x1b[${x + 1}G`),
    moveCursor: (dx: number, dy: number) => write(`${dy < 0 ? `\x1b[${-dy}A` : dy > 0 ? `\x1b[${dy}B` : ''}${dx < 0 ? `\x1b[${-dx}D` : dx > 0 ? `\x1b[${dx}C` : ''}`),
    clearLine: () => write('\x1b[2K'),
    once: (event: string, fn: () => void) => stream.once(event, fn),
    removeListener: (event: string, fn: () => void) => stream.removeListener(event, fn),
  } as unknown as NodeJS.WriteStream;
}

/** In "lines" style: at most one line a second when the text changes, and one every 10 s while it does not. */
const LINE_GAP_MS = 1000;
const LINE_REMINDER_MS = 10_000;

export function startSpinner(ctx: Ctx, initial: string): Spinner {
  const style = progressStyle(ctx, 'stderr');
  if (style === 'none') return { text() {}, stop() {} };
  if (style === 'lines') return lineSpinner(ctx, initial);
  const stderr = ctx.io.stderr;
  let known = terminalColumns(ctx, 'stderr') ?? 80;
  const width = () => (known = terminalColumns(ctx, 'stderr') ?? known);
  let text = initial;
  let stopped = false;
  let spinner: Ora | undefined;
  const started = Date.now();
  const label = () => {
    const secs = Math.floor((Date.now() - started) / 1000);
    return `${text}${secs > 0 ? ` (${secs} s)` : ''}`;
  };
  let ticker: NodeJS.Timeout | undefined;
  const begin = (mod: OraModule) => {
    if (stopped) return;
    spinner = mod
      .default({
        text: label(),
        stream: ttyView(stderr, width),
        isEnabled: true,
        color: useColor(ctx, 'stderr') ? 'cyan' : false,
        // The cursor stays visible and stdin untouched: a Ctrl-C leaves the terminal as it was.
        hideCursor: false,
        discardStdin: false,
      })
      .start();
    // The elapsed seconds move even when the text does not.
    ticker = setInterval(() => spinner && (spinner.text = label()), 1000);
    ticker.unref();
  };
  const now = oraNow();
  if (now) begin(now);
  else void import('ora').then(begin, () => undefined);
  return {
    text(t) {
      text = t;
      if (spinner) spinner.text = label();
    },
    stop() {
      stopped = true;
      clearInterval(ticker);
      spinner?.stop();
    },
  };
}

/** The spinner as plain lines (a terminal that must not be redrawn), at a bounded rate. */
function lineSpinner(ctx: Ctx, initial: string): Spinner {
  const started = Date.now();
  let text = initial;
  let printed = '';
  let printedAt = 0;
  const print = () => {
    const secs = Math.floor((Date.now() - started) / 1000);
    writeLine(ctx.io.stderr, `${text}${secs > 0 ? ` (${secs} s)` : ''}`);
    printed = text;
    printedAt = Date.now();
  };
  const due = () => Date.now() - printedAt >= (text === printed ? LINE_REMINDER_MS : LINE_GAP_MS);
  print();
  const ticker = setInterval(() => due() && print(), 250);
  ticker.unref();
  let stopped = false;
  return {
    text(t) {
      text = t;
      if (!stopped && due()) print();
    },
    stop() {
      stopped = true;
      clearInterval(ticker);
    },
  };
}
