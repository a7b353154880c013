/**
 * `fecr recibidos list --due` and the warnings of `list --due` and `import` (issue 29): received documents not answered
 * yet (estado pendiente), oldest first, with their age in days (Costa Rica dates, FechaEmision to today).
 *
 * The term: the current Reglamento de comprobantes electrónicos (Decreto 44739-H, art. 20) presumes acceptance when
 * the receptor does not answer "en el plazo que al respecto establezca la Administración Tributaria mediante
 * resolución general", and we found no such number in force. The one published before (DGT-R-48-2016 art. 10 as
 * amended by DGT-R-004-2019) was 8 business days counted from the first day of the month after the transaction,
 * never less than 10 calendar days after FechaEmision. So it is a setting, the profile key `recibidosPlazoDias`
 * (calendar days after FechaEmision, default 8: earlier than that former term for any date), with a warning
 * `recibidosAvisoDias` days before it (default 3).
 */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { safeText } from '../../cli/safe-text.js';
import { renderTable, type TableOptions } from '../../cli/table.js';
import type { RecibidoSummary } from '../../client/recibidos.js';
import { activeProfile } from '../../client/select.js';
import { formatCr } from '../../core/dates.js';

export const PLAZO_DIAS_DEFAULT = 8;
export const AVISO_DIAS_DEFAULT = 3;

export interface DueTerm {
  plazoDias: number;
  avisoDias: number;
}

export interface DueRow extends RecibidoSummary {
  /** Whole days from FechaEmision's date to today's (Costa Rica). */
  edadDias: number;
  /** Days left before the term (negative: passed that many days ago). */
  diasRestantes: number;
}

/** The profile's term (its keys, else the defaults). */
export async function dueTerm(ctx: Ctx): Promise<DueTerm> {
  const p = (await activeProfile(ctx)).profile;
  return {
    plazoDias: p.recibidosPlazoDias !== undefined ? Number(p.recibidosPlazoDias) : PLAZO_DIAS_DEFAULT,
    avisoDias: p.recibidosAvisoDias !== undefined ? Number(p.recibidosAvisoDias) : AVISO_DIAS_DEFAULT,
  };
}

const dayNumber = (isoDate: string): number => Math.round(Date.parse(`${isoDate.slice(0, 10)}T00:00:00Z`) / 86_400_000);

/** The documents not answered yet, oldest first, with their age and the days left. */
export function dueRows(rows: RecibidoSummary[], now: Date, term: DueTerm): DueRow[] {
  const today = dayNumber(formatCr(now));
  return rows
    .filter((r) => r.estado === 'pendiente' && r.fechaEmision)
    .map((r) => {
      const t = Date.parse(r.fechaEmision!);
      const edadDias = today - dayNumber(Number.isNaN(t) ? r.fechaEmision! : formatCr(new Date(t)));
      return { ...r, edadDias, diasRestantes: term.plazoDias - edadDias };
    })
    .sort((a, b) => b.edadDias - a.edadDias || (a.fechaEmision! < b.fechaEmision! ? -1 : 1));
}

/** One `warning:` line on stderr per document within `avisoDias` of the term or past it. */
export function dueWarnings(ctx: Ctx, rows: DueRow[], term: DueTerm): void {
  for (const r of rows) {
    if (r.diasRestantes > term.avisoDias) continue;
    const who = `${r.clave ?? '(no clave)'} from ${r.emisor.numero ?? ''} ${r.emisor.nombre ?? ''}`.trim();
    const when =
      r.diasRestantes > 0
        ? `${r.diasRestantes} ${r.diasRestantes === 1 ? 'day' : 'days'} left`
        : r.diasRestantes === 0
          ? 'its last day'
          : `passed ${-r.diasRestantes} ${r.diasRestantes === -1 ? 'day' : 'days'} ago`;
    writeLine(ctx.io.stderr, safeText(`warning: ${who} is ${r.edadDias} days old and not answered: ${when} of the ${term.plazoDias} days after which Hacienda is taken to presume acceptance (recibidosPlazoDias; answer with fecr recibidos aceptar|parcial|rechazar)`));
  }
}

/** The list as a table (through the sanitiser: the suppliers' words). */
export function printDue(ctx: Ctx, rows: DueRow[], opts: TableOptions = {}): void {
  const header = ['clave', 'tipo', 'emisor', 'fechaEmision', 'edadDias', 'diasRestantes', 'totalComprobante', 'totalImpuesto', 'hacienda'];
  const cells = rows.map((r) => [r.clave ?? '(no clave)', r.tipo ?? '', `${r.emisor.numero ?? ''} ${r.emisor.nombre ?? ''}`.trim(), r.fechaEmision ?? '', String(r.edadDias), String(r.diasRestantes), r.totalComprobante ?? '', r.totalImpuesto ?? '', r.haciendaEstado ?? '']);
  writeLine(ctx.io.stdout, renderTable(ctx, header, cells, opts));
}
