/**
 * `fecr report iva YYYY-MM [--issuer ID] [--json|--csv]` (issue 29): the month's IVA figures (service/report-iva.ts)
 * as a table, 2 decimals half-up (JSON keeps the 5), then the counts, the D-150 note and the documents left out.
 * Issue 36, a figure belongs to one taxpayer: with --issuer that issuer's report (JSON: the object); without it one
 * section per issuer of the profile, each a heading (`emisor CÉDULA NOMBRE`) and then exactly what --issuer prints
 * (JSON: an array of those objects, each with its `emisor`; CSV: one table, `emisor` its first column).
 */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import type { IvaReport } from '../../client/reports.js';
import { Decimal } from '../../core/money.js';
import { withBackend } from '../backend.js';
import { dueTerm } from '../recibidos/due.js';

export interface IvaFlags {
  issuer?: string;
  json?: boolean;
  csv?: boolean;
}

const two = (s: string) => new Decimal(s).toFixed(2, Decimal.ROUND_HALF_UP);

/** The table's rows: [seccion, concepto, codigoTarifaIVA, tarifa, base, impuesto, documentos]. */
export function ivaRows(r: IvaReport): string[][] {
  const v = r.ventas;
  const out: string[][] = [];
  const b = (sec: string, what: string, x: { base: string; impuesto: string; documentos: number }, code = '', tarifa = '') => out.push([sec, what, code, tarifa, two(x.base), two(x.impuesto), String(x.documentos)]);
  for (const l of v.gravado) b('ventas', 'gravado', l, l.codigoTarifaIVA, `${l.tarifa}%`);
  b('ventas', 'exento', v.exento, '10');
  b('ventas', 'no sujeto', v.noSujeto, '01/11');
  b('ventas', 'exonerado', v.exonerado);
  out.push(['ventas', 'exonerado: montoExoneracion', '', '', '', two(v.exonerado.montoExoneracion), '']);
  out.push(['ventas', 'exonerado: IVA neto', '', '', '', two(v.exonerado.impuestoNeto), '']);
  b('ventas', 'exportaciones (FEE)', v.exportaciones);
  out.push(['ventas', 'IVA débito', '', '', '', two(v.ivaDebito), String(v.documentos)]);
  b('ventas', 'pagos recibidos (REP, apart)', v.pagosRecibidos);
  for (const l of v.autoliquidado) b('FEC', 'IVA autoliquidado', l, l.codigoTarifaIVA, `${l.tarifa}%`);
  out.push(['FEC', 'IVA autoliquidado', '', '', '', two(v.ivaAutoliquidado), String(v.documentosFec)]);
  for (const l of r.compras.porTarifa) out.push(['compras', 'IVA acreditable', l.codigoTarifaIVA, `${l.tarifa}%`, two(l.base), two(l.ivaAcreditable), '']);
  out.push(['compras', 'IVA acreditable', '', '', two(r.compras.totales.base), two(r.compras.totales.ivaAcreditable), String(r.compras.documentos)]);
  out.push(['compras', 'gasto aplicable', '', '', '', two(r.compras.totales.gastoAplicable), String(r.compras.documentos)]);
  const d = r.diferencia;
  out.push(['diferencia', d.resultado === 'a_favor' ? 'saldo a favor' : d.resultado === 'por_pagar' ? 'IVA por pagar' : 'cero', '', '', '', two(d.saldo), '']);
  out.push(['D-150', 'mapping not sourced', '', '', '', '', '']);
  return out;
}

const HEADER = ['seccion', 'concepto', 'codigoTarifaIVA', 'tarifa', 'base', 'impuesto', 'documentos'];

/** A section's heading (issue 36): whose figures follow, by cédula and name. */
export function issuerHeading(e: { identificacion: string; nombre: string }): string {
  return safeText(`emisor ${e.identificacion}${e.nombre ? ` ${e.nombre}` : ''}`);
}

export async function run(ctx: Ctx, mes: string, f: IvaFlags): Promise<void> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(mes.trim())) throw new UsageError(`MES must be a month YYYY-MM (got "${mes}")`);
  if (f.issuer !== undefined && !/^\d{9,12}$/.test(f.issuer.trim())) throw new UsageError(`--issuer must be an identificación of 9 to 12 digits (got "${f.issuer}")`);
  checkTableFlags(f);
  const { plazoDias } = await dueTerm(ctx);
  // A figure belongs to one taxpayer (issue 36): the issuer named, or one report per issuer; never a sum across them.
  const r = await withBackend(ctx, async (b) => {
    if (!b.reports) throw new UserError('this backend has no reports (fecr report)');
    return f.issuer !== undefined ? b.reports().iva(mes.trim(), f.issuer.trim(), { plazoDias }) : b.reports().ivaEach(mes.trim(), { plazoDias });
  });
  if (f.json) return printJson(ctx, r);
  // With --csv stdout holds the CSV alone: the rest goes to stderr.
  const say = (line: string) => (f.csv ? info(ctx, line) : writeLine(ctx.io.stdout, line));
  if (!Array.isArray(r)) return printReport(ctx, r, f, plazoDias, say);
  if (r.length === 0) return say(`${mes.trim()}: no issuer in this profile, nothing to report (fecr emisor register)`);
  // Several sections in one CSV: one table, the issuer's cédula its first column.
  if (f.csv) writeLine(ctx.io.stdout, renderTable(ctx, ['emisor', ...HEADER], r.flatMap((x) => ivaRows(x).map((row) => [x.emisor.identificacion, ...row])), { csv: true }));
  for (const [i, x] of r.entries()) {
    if (i > 0) say('');
    say(issuerHeading(x.emisor));
    printReport(ctx, x, f, plazoDias, say, { table: !f.csv });
  }
}

/** One issuer's report: the table, then the difference, the notes, the documents left out and answered late. */
function printReport(ctx: Ctx, r: IvaReport, f: IvaFlags, plazoDias: number, say: (line: string) => void, opts: { table?: boolean } = {}): void {
  if (opts.table !== false) writeLine(ctx.io.stdout, renderTable(ctx, HEADER, ivaRows(r), { csv: f.csv }));
  say(`${r.mes}, in colones (each document at its TipoCambio); IVA débito ${two(r.diferencia.ivaDebito)} + autoliquidado ${two(r.diferencia.ivaAutoliquidado)} − acreditable ${two(r.diferencia.ivaAcreditable)} = ${two(r.diferencia.saldo)}`);
  say(`D-150: ${r.nota}`);
  say(`REP: ${r.ventas.pagosRecibidos.nota}`);
  const left = [
    ...r.excluidos.map((x) => `  venta ${x.clave} ${x.tipo} ${x.fechaEmision}: ${x.motivo}`),
    ...r.compras.excluidos.map((x) => `  compra ${x.clave ?? '(no clave)'} ${x.emisor.numero ?? ''} ${x.emisor.nombre ?? ''}, totalImpuesto ${x.totalImpuesto ?? '0'}: ${x.motivo}${x.plazoVencido ? ' (past the term: Hacienda may presume it accepted)' : ''}`),
  ];
  // Claves and suppliers' names are outside text: through the sanitiser.
  if (left.length === 0) say('left out: none');
  else {
    say('left out:');
    for (const l of left) say(safeText(l));
  }
  const late = r.compras.fueraDePlazo ?? [];
  if (late.length === 0) return;
  say(`answered late (more than the term of ${plazoDias} days: recibidosPlazoDias; counted only where Hacienda accepted the MensajeReceptor):`);
  for (const x of late) say(safeText(`  compra ${x.clave ?? '(no clave)'} ${x.emisor.numero ?? ''} ${x.emisor.nombre ?? ''}, ${x.fechaEmision?.slice(0, 10) ?? ''} answered ${x.respondidoEl} (${x.dias} days): ${x.situacionIva === 'acreditable' ? 'counted' : x.situacionIva}`));
}
