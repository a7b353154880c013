/** `fecr contingency record`: register provisional (paper) comprobantes issued during an outage, from flags or a JSON file. */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { readJson, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { withBackend } from '../backend.js';
import { contingencyOf } from './shared.js';

export interface RecordFlags {
  file?: string;
  numero?: string;
  fecha?: string;
  emisor?: string;
  receptor?: string;
  total?: string;
  moneda?: string;
  kind?: string;
  json?: boolean;
}

export async function run(ctx: Ctx, f: RecordFlags): Promise<void> {
  const fields = { numero: f.numero, fechaEmision: f.fecha, emisor: f.emisor, receptor: f.receptor, totalComprobante: f.total, codigoMoneda: f.moneda, kind: f.kind };
  const given = Object.entries(fields).filter(([, v]) => v !== undefined);
  if (f.file !== undefined && given.length) throw new UsageError('give the provisional comprobante by --file or by flags, not both');
  let input: unknown;
  if (f.file !== undefined) input = await readJson(ctx.io, f.file);
  else {
    const missing = (['numero', 'fecha', 'emisor', 'total'] as const).filter((k) => f[k] === undefined);
    if (missing.length) throw new UsageError(`missing ${missing.map((k) => `--${k}`).join(', ')} (or --file FILE.json)`);
    input = Object.fromEntries(given);
  }
  const out = await withBackend(ctx, (b) => contingencyOf(b).record(input));
  if (f.json) return printJson(ctx, out.map((o) => ({ ...o.provisional, created: o.created })));
  for (const { provisional: p, created } of out) {
    writeLine(ctx.io.stdout, String(p.id));
    info(ctx, `provisional ${p.id}: ${p.kind} ${p.numero} of ${p.emisor}, ${p.fechaEmision}, ${p.totalComprobante} ${p.codigoMoneda}${created ? '' : ' (recorded before)'}`);
  }
}
