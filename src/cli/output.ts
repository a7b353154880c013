/** One place that prints results and failures. Data goes to stdout, messages to stderr. */
import type { Ctx } from './context.js';
import { writeLine } from './io.js';
import { safeJson } from './safe-text.js';

/** `--json`: the raw data (control and bidi characters only as JSON escapes, see safeJson). */
export function printJson(ctx: Ctx, value: unknown): void {
  writeLine(ctx.io.stdout, safeJson(value, ctx.io.stdoutIsTTY ? 2 : undefined));
}

export function info(ctx: Ctx, message: string): void {
  writeLine(ctx.io.stderr, message);
}

type Env = Record<string, string | undefined>;
type Terminal = { isTTY?: boolean; columns?: number };

function isTerminal(ctx: Ctx, stream: 'stdout' | 'stderr'): boolean {
  return stream === 'stdout' ? ctx.io.stdoutIsTTY : Boolean((ctx.io.stderr as Terminal).isTTY);
}

/** NO_COLOR (any non-empty value) and TERM=dumb: no colour; else colour only on a terminal. */
export function useColor(ctx: Ctx, stream: 'stdout' | 'stderr'): boolean {
  if (ctx.io.env.NO_COLOR !== undefined && ctx.io.env.NO_COLOR !== '') return false;
  if (ctx.io.env.TERM === 'dumb') return false;
  return isTerminal(ctx, stream);
}

/** CI is set to anything but "", "false" or "0" (as CI services set it: "true", "1", the service's name). */
export function isCI(env: Env): boolean {
  const v = env.CI?.trim().toLowerCase();
  return v !== undefined && v !== '' && v !== 'false' && v !== '0';
}

/**
 * The width of `stream` when it is a terminal that reports one (a positive whole number of columns), else
 * undefined. A pseudo-terminal without a window size (`script` started without a terminal, some CI runners and
 * containers) reports 0 columns: that is "unknown", never a width to divide by.
 */
export function terminalColumns(ctx: Ctx, stream: 'stdout' | 'stderr'): number | undefined {
  if (!isTerminal(ctx, stream)) return undefined;
  const columns = (ctx.io[stream] as Terminal).columns;
  return typeof columns === 'number' && Number.isInteger(columns) && columns > 0 ? columns : undefined;
}

/**
 * THE decision "may this stream be redrawn in place?" (spinners, progress lines that rewrite themselves with
 * carriage returns and cursor movements): only a terminal with a known, positive width, outside CI, whose TERM is
 * not "dumb". Every animation of fecr asks this, and only this.
 */
export function canRedraw(ctx: Ctx, stream: 'stdout' | 'stderr'): boolean {
  if (isCI(ctx.io.env) || ctx.io.env.TERM === 'dumb') return false;
  return terminalColumns(ctx, stream) !== undefined;
}

/**
 * How progress is shown on `stream`: "redraw" in place (canRedraw), "lines" (a terminal that must not be redrawn:
 * plain lines at a bounded rate, never cut to an assumed width) or "none" (not a terminal: scripts and pipes get
 * no progress at all).
 */
export type ProgressStyle = 'redraw' | 'lines' | 'none';

export function progressStyle(ctx: Ctx, stream: 'stdout' | 'stderr'): ProgressStyle {
  if (canRedraw(ctx, stream)) return 'redraw';
  return isTerminal(ctx, stream) ? 'lines' : 'none';
}
