/** One place that prints results and failures. Data goes to stdout, messages to stderr. */
import type { Ctx } from './context.js';
import { writeLine } from './io.js';

export function printJson(ctx: Ctx, value: unknown): void {
  writeLine(ctx.io.stdout, JSON.stringify(value, null, ctx.io.stdoutIsTTY ? 2 : undefined));
}

export function info(ctx: Ctx, message: string): void {
  writeLine(ctx.io.stderr, message);
}

export function useColor(ctx: Ctx, stream: 'stdout' | 'stderr'): boolean {
  if (ctx.io.env.NO_COLOR !== undefined && ctx.io.env.NO_COLOR !== '') return false;
  return stream === 'stdout' ? ctx.io.stdoutIsTTY : Boolean((ctx.io.stderr as { isTTY?: boolean }).isTTY);
}
