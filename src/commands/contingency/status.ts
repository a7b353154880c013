/**
 * `fecr contingency status`: what is still owed to Hacienda after an outage, oldest first, since when and how old:
 * provisional comprobantes not replaced by an accepted electronic document, every document signed that Hacienda has
 * not received yet (whatever the `contingencia` setting: an outage in situación 1 is owed too), and documents signed
 * in situación 2 or 3 that Hacienda has not accepted. A warning per item in the last quarter of the term (`contingenciaPlazoHoras`, default 48: not a
 * number of the decree in force, README) or past it. Exit 0 either way; nothing owed prints "nothing owed".
 */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { ageText, SITUACIONES, urgencyOf, type Situacion } from '../../core/contingency.js';
import { formatCr, parseIsoDateTime } from '../../core/dates.js';
import { withBackend } from '../backend.js';
import { contingencyOf, contingencySettings } from './shared.js';

export interface StatusFlags {
  json?: boolean;
  csv?: boolean;
}

export const NOTHING_OWED = 'nothing owed: Hacienda has received every document, every provisional comprobante is replaced and every contingency document accepted';

interface OwedRow {
  tipo: 'provisional' | 'documento';
  ref: string;
  kind: string;
  estado: string;
  desde: string;
  sinceMs: number;
  total: string;
}

export async function run(ctx: Ctx, f: StatusFlags): Promise<void> {
  checkTableFlags(f);
  const { plazoHoras } = await contingencySettings(ctx);
  const owed = await withBackend(ctx, (b) => contingencyOf(b).owed());
  const now = ctx.now().getTime();
  const rows: OwedRow[] = [
    ...owed.provisionales.map((p) => ({
      tipo: 'provisional' as const,
      ref: `${p.id} (${p.numero})`,
      kind: p.kind,
      estado: p.reemplazo ? `${p.reemplazo.estado ?? '?'} ${p.reemplazo.clave}` : 'not replaced',
      desde: p.fechaEmision,
      sinceMs: parseIsoDateTime(p.fechaEmision)?.getTime() ?? Date.parse(p.recordedAt),
      total: `${p.totalComprobante} ${p.codigoMoneda}`,
    })),
    ...owed.documentos.map((d) => ({
      tipo: 'documento' as const,
      ref: d.clave,
      kind: `${d.kind} (situación ${d.situacion} ${SITUACIONES[d.situacion as Situacion] ?? ''})`.replace(' )', ')'),
      // Owed because Hacienda has not received it (any situación), not because of its verdict.
      estado: d.estado === 'pendiente' ? 'pendiente (not received)' : d.estado,
      desde: formatCr(new Date(d.createdAt)),
      sinceMs: Date.parse(d.createdAt),
      total: `${d.totalComprobante} ${d.moneda}`,
    })),
  ].sort((a, b) => a.sinceMs - b.sinceMs);
  const judged = rows.map((r) => ({ ...r, ...urgencyOf(r.sinceMs, now, plazoHoras), edadHoras: Math.round(((now - r.sinceMs) / 3_600_000) * 10) / 10 }));
  if (f.json) {
    const urgencias = judged.map((r) => ({ ref: r.ref, urgency: r.urgency, horasRestantes: r.horasRestantes, edadHoras: r.edadHoras }));
    printJson(ctx, { plazoHoras, provisionales: owed.provisionales, documentos: owed.documentos, urgencias });
  } else if (judged.length === 0) writeLine(ctx.io.stdout, NOTHING_OWED);
  else {
    const header = ['tipo', 'ref', 'kind', 'estado', 'desde', 'age', 'horasRestantes', 'total'];
    writeLine(ctx.io.stdout, renderTable(ctx, header, judged.map((r) => [r.tipo, r.ref, r.kind, r.estado, r.desde, ageText(now - r.sinceMs), String(r.horasRestantes), r.total]), { csv: f.csv }));
  }
  for (const r of judged) {
    if (r.urgency === 'ok') continue;
    const when = r.urgency === 'passed' ? `passed ${-r.horasRestantes} h ago` : `${r.horasRestantes} h left`;
    writeLine(ctx.io.stderr, safeText(`warning: ${r.tipo} ${r.ref} owed since ${r.desde}: ${when} of the ${plazoHoras} h term (contingenciaPlazoHoras; the decree in force gives no number we could find)`));
  }
}
