/** `fecr emisor show ID`: an issuer's record as registered, without its secrets. */
import type { Ctx } from '../../cli/context.js';
import { UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { BackendError } from '../../client/backend.js';
import { withBackend } from '../backend.js';
import { ambienteName, type EmisorFlags } from './shared.js';

export async function show(ctx: Ctx, idArg: string, opts: EmisorFlags): Promise<void> {
  checkTableFlags(opts);
  const id = idArg.trim();
  const [s] = await withBackend(ctx, async (b) => {
    try {
      return await b.listIssuers(id);
    } catch (e) {
      // A hosted fecr from before /api/consultar/emisores: the spec's lookup (six fields) still answers.
      if (!(e instanceof BackendError && e.code === 'not_found')) throw e;
      const summary = await b.getIssuer(id);
      return summary ? [summary] : [];
    }
  });
  if (!s) throw new UserError(`no issuer ${id} is registered (fecr emisor list shows the account's issuers)`);
  if (opts.json) return printJson(ctx, s);
  writeLine(ctx.io.stdout, renderTable(ctx, ['field', 'value'], fieldRows(s as unknown as Record<string, unknown>), { csv: opts.csv }));
}

/** `ubicacion.canton`-style rows of a record, in its key order. */
function fieldRows(record: Record<string, unknown>, prefix = ''): string[][] {
  return Object.entries(record).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? fieldRows(v as Record<string, unknown>, `${prefix}${k}.`)
      : [[`${prefix}${k}`, k === 'ambiente' && typeof v === 'number' ? ambienteName(v) : String(v)]],
  );
}
