/** `fecr cabys TEXT…`: the CABYS catalogue searched, with the IVA rate of each code. */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { withBackend } from '../backend.js';
import type { LookupFlags } from './flags.js';

export async function cabys(ctx: Ctx, words: string[], opts: LookupFlags): Promise<void> {
  checkTableFlags(opts);
  const text = words.join(' ').trim();
  if (text === '') throw new UsageError('give the words to search for, e.g. fecr cabys cafe molido');
  const rows = await withBackend(ctx, (b) => b.cabys(text, { impuesto: true }));
  if (rows.length === 0) throw new UserError(`no CABYS code matches "${text}"`);
  if (opts.json) return printJson(ctx, rows);
  // The IVA rate ("-": a service that does not give it).
  const iva = (r: { impuesto?: number }) => (r.impuesto === undefined ? '-' : `${r.impuesto} %`);
  writeLine(ctx.io.stdout, renderTable(ctx, ['codigo', 'descripcion', 'iva'], rows.map((r) => [r.codigo, r.descripcion, iva(r)]), { csv: opts.csv }));
}
