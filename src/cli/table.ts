/** Tables: aligned columns on a terminal, tab-separated values when piped. */
import type { Ctx } from './context.js';

export function renderTable(ctx: Ctx, header: string[], rows: string[][]): string {
  if (!ctx.io.stdoutIsTTY) return [header, ...rows].map((r) => r.join('\t')).join('\n');
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
