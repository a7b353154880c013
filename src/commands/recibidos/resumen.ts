/** `fecr recibidos resumen YYYY-MM [--json|--csv]`: IVA acreditable and gasto aplicable by tarifa for a month. */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { withBuyer, type SummaryFlags } from './shared.js';

export async function run(ctx: Ctx, mes: string, f: SummaryFlags): Promise<void> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(mes.trim())) throw new UsageError(`MES must be a month YYYY-MM (got "${mes}")`);
  checkTableFlags(f);
  const s = await withBuyer(ctx, (r) => r.summary(mes.trim()));
  if (f.json) return printJson(ctx, s);
  const rows = s.porTarifa.map((l) => [l.codigoTarifaIVA, `${l.tarifa}%`, l.base, l.impuesto, l.ivaAcreditable, l.gastoAplicable]);
  rows.push(['total', '', s.totales.base, s.totales.impuesto, s.totales.ivaAcreditable, s.totales.gastoAplicable]);
  writeLine(ctx.io.stdout, renderTable(ctx, ['codigoTarifaIVA', 'tarifa', 'base', 'impuesto', 'ivaAcreditable', 'gastoAplicable'], rows, { csv: f.csv }));
  const counts = `${s.mes}: ${s.documentos} accepted (fully or partly); ${s.pendientes} awaiting an answer, ${s.rechazados} rejected, ${s.invalidos} refused at import (not counted)`;
  // With --csv stdout holds the CSV alone: the month's counts go to stderr.
  if (f.csv) info(ctx, counts);
  else writeLine(ctx.io.stdout, counts);
}
