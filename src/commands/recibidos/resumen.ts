/**
 * `fecr recibidos resumen YYYY-MM [--issuer ID] [--json|--csv]`: IVA acreditable and gasto aplicable by tarifa for a
 * month, over the documents whose MensajeReceptor Hacienda accepted; then the month's documents not counted, each with
 * why (issue 26). Issue 36, a figure belongs to one taxpayer: with --issuer that buyer's summary (JSON: the object,
 * with its `emisor`); without it one section per issuer of the profile, each a heading (`emisor CÉDULA NOMBRE`) and
 * then exactly what --issuer prints (JSON: an array of those objects; CSV: one table, `emisor` its first column).
 */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import type { IssuerMonthlySummary } from '../../client/recibidos.js';
import { issuerHeading } from '../report/iva.js';
import { SITUACION_TEXT, withBuyer, type SummaryFlags } from './shared.js';

const HEADER = ['codigoTarifaIVA', 'tarifa', 'base', 'impuesto', 'ivaAcreditable', 'gastoAplicable'];

function rowsOf(s: IssuerMonthlySummary): string[][] {
  const rows = s.porTarifa.map((l) => [l.codigoTarifaIVA, `${l.tarifa}%`, l.base, l.impuesto, l.ivaAcreditable, l.gastoAplicable]);
  rows.push(['total', '', s.totales.base, s.totales.impuesto, s.totales.ivaAcreditable, s.totales.gastoAplicable]);
  return rows;
}

export async function run(ctx: Ctx, mes: string, f: SummaryFlags): Promise<void> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(mes.trim())) throw new UsageError(`MES must be a month YYYY-MM (got "${mes}")`);
  if (f.issuer !== undefined && !/^\d{9,12}$/.test(f.issuer.trim())) throw new UsageError(`--issuer must be an identificación of 9 to 12 digits (got "${f.issuer}")`);
  checkTableFlags(f);
  const s = await withBuyer<IssuerMonthlySummary | IssuerMonthlySummary[]>(ctx, (r) => (f.issuer !== undefined ? r.summary(mes.trim(), f.issuer.trim()) : r.summaries(mes.trim())));
  if (f.json) return printJson(ctx, s);
  // With --csv stdout holds the CSV alone: the month's counts and the documents not counted go to stderr.
  const say = (line: string) => (f.csv ? info(ctx, line) : writeLine(ctx.io.stdout, line));
  if (!Array.isArray(s)) return printSummary(ctx, s, f, say);
  if (s.length === 0) return say(`${mes.trim()}: no issuer in this profile, nothing to sum (fecr emisor register)`);
  if (f.csv) writeLine(ctx.io.stdout, renderTable(ctx, ['emisor', ...HEADER], s.flatMap((x) => rowsOf(x).map((row) => [x.emisor.identificacion, ...row])), { csv: true }));
  for (const [i, x] of s.entries()) {
    if (i > 0) say('');
    say(issuerHeading(x.emisor));
    printSummary(ctx, x, f, say, { table: !f.csv });
  }
}

function printSummary(ctx: Ctx, s: IssuerMonthlySummary, f: SummaryFlags, say: (line: string) => void, opts: { table?: boolean } = {}): void {
  if (opts.table !== false) writeLine(ctx.io.stdout, renderTable(ctx, HEADER, rowsOf(s), { csv: f.csv }));
  const excluidos = s.excluidos ?? [];
  say(`${s.mes}: ${s.documentos} counted (accepted fully or partly, and the MensajeReceptor accepted by Hacienda); ${excluidos.length} not counted (${s.pendientes} awaiting an answer, ${s.rechazados} rejected); ${s.invalidos} refused at import`);
  if (excluidos.length === 0) return;
  say('not counted:');
  // The clave and the supplier's name are outside text: through the sanitiser.
  for (const x of excluidos) {
    const mr = x.consecutivoReceptor ? `, MensajeReceptor ${x.consecutivoReceptor}` : '';
    say(safeText(`  ${x.clave ?? '(no clave)'} ${x.emisor.numero ?? ''} ${x.emisor.nombre ?? ''}, totalImpuesto ${x.totalImpuesto ?? '0'}${mr}: ${SITUACION_TEXT[x.motivo] ?? x.motivo}`));
  }
}
