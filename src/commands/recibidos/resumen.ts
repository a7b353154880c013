/**
 * `fecr recibidos resumen YYYY-MM [--json|--csv]`: IVA acreditable and gasto aplicable by tarifa for a month, over the
 * documents whose MensajeReceptor Hacienda accepted; then the month's documents not counted, each with why (issue 26).
 */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { SITUACION_TEXT, withBuyer, type SummaryFlags } from './shared.js';

export async function run(ctx: Ctx, mes: string, f: SummaryFlags): Promise<void> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(mes.trim())) throw new UsageError(`MES must be a month YYYY-MM (got "${mes}")`);
  checkTableFlags(f);
  const s = await withBuyer(ctx, (r) => r.summary(mes.trim()));
  if (f.json) return printJson(ctx, s);
  const rows = s.porTarifa.map((l) => [l.codigoTarifaIVA, `${l.tarifa}%`, l.base, l.impuesto, l.ivaAcreditable, l.gastoAplicable]);
  rows.push(['total', '', s.totales.base, s.totales.impuesto, s.totales.ivaAcreditable, s.totales.gastoAplicable]);
  writeLine(ctx.io.stdout, renderTable(ctx, ['codigoTarifaIVA', 'tarifa', 'base', 'impuesto', 'ivaAcreditable', 'gastoAplicable'], rows, { csv: f.csv }));
  const excluidos = s.excluidos ?? [];
  const counts = `${s.mes}: ${s.documentos} counted (accepted fully or partly, and the MensajeReceptor accepted by Hacienda); ${excluidos.length} not counted (${s.pendientes} awaiting an answer, ${s.rechazados} rejected); ${s.invalidos} refused at import`;
  // With --csv stdout holds the CSV alone: the month's counts and the documents not counted go to stderr.
  const say = (line: string) => (f.csv ? info(ctx, line) : writeLine(ctx.io.stdout, line));
  say(counts);
  if (excluidos.length === 0) return;
  say('not counted:');
  // The clave and the supplier's name are outside text: through the sanitiser.
  for (const x of excluidos) {
    const mr = x.consecutivoReceptor ? `, MensajeReceptor ${x.consecutivoReceptor}` : '';
    say(safeText(`  ${x.clave ?? '(no clave)'} ${x.emisor.numero ?? ''} ${x.emisor.nombre ?? ''}, totalImpuesto ${x.totalImpuesto ?? '0'}${mr}: ${SITUACION_TEXT[x.motivo] ?? x.motivo}`));
  }
}
