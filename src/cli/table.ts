/**
 * Tables: aligned columns on a terminal, tab-separated values when piped, RFC 4180 CSV with `--csv`. Every cell goes
 * through the one sanitiser (safe-text.ts): on a terminal `safeText` (no control character reaches it); piped and in
 * CSV `spreadsheetCell` (the same, and formulas neutralised with a leading apostrophe), so one row is one line.
 * JSON (`--json`) is the raw data: the verbs print it without this module.
 */
import { stringify } from 'csv-stringify/sync';
import type { Ctx } from './context.js';
import { UsageError } from './errors.js';
import { safeText, spreadsheetCell } from './safe-text.js';

export interface TableOptions {
  /** RFC 4180 CSV (CRLF between records, fields quoted when they need it), whatever stdout is. */
  csv?: boolean;
}

/** A verb's `--csv` and `--json` exclude each other. */
export function checkTableFlags(f: { csv?: boolean; json?: boolean }): void {
  if (f.csv && f.json) throw new UsageError('--csv and --json cannot be combined');
}

export function renderTable(ctx: Ctx, header: string[], rows: string[][], opts: TableOptions = {}): string {
  const all = [header, ...rows];
  if (opts.csv) return stringify(all.map((r) => r.map(spreadsheetCell)), { record_delimiter: '\r\n' });
  if (!ctx.io.stdoutIsTTY) return all.map((r) => r.map(spreadsheetCell).join('\t')).join('\n');
  const safe = all.map((r) => r.map(safeText));
  const widths = safe[0]!.map((h, i) => Math.max(h.length, ...safe.slice(1).map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(safe[0]!), line(widths.map((w) => '-'.repeat(w))), ...safe.slice(1).map(line)].join('\n');
}
