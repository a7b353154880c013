/** `fecr contribuyente ID`: a taxpayer in Hacienda's registry. */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import { withBackend } from '../backend.js';
import type { LookupFlags } from './flags.js';

export async function contribuyente(ctx: Ctx, idArg: string, opts: LookupFlags): Promise<void> {
  const id = idArg.trim();
  if (!/^[\d\s-]+$/.test(id)) throw new UsageError(`ID must be an identificación made of digits (got "${idArg}")`);
  const t = await withBackend(ctx, (b) => b.taxpayer(id, { detalle: true }));
  if (!t) throw new UserError(`no taxpayer with identificación ${id} in Hacienda's registry`);
  if (opts.json) return printJson(ctx, t);
  // estado as the registry says it, with "moroso" (in arrears) and "omiso" (returns not filed) when they apply.
  const s = t.situacion;
  const estado = s ? [s.estado, ...(s.moroso === 'SI' ? ['moroso'] : []), ...(s.omiso === 'SI' ? ['omiso'] : [])].join(', ') : '-';
  const header = ['identificacion', 'tipoIdentificacion', 'nombre', 'regimen', 'estado'];
  writeLine(ctx.io.stdout, renderTable(ctx, header, [[t.identificacion, t.tipoIdentificacion, t.nombre, t.regimen?.descripcion ?? '-', estado]]));
  const actividades = t.actividades ?? [];
  writeLine(ctx.io.stdout, '');
  if (actividades.length === 0) return writeLine(ctx.io.stdout, 'no active economic activity');
  // The CIIU-4 code comprobantes carry since TRIBU-CR, and the former catalogue's code(s) it replaced.
  writeLine(ctx.io.stdout, renderTable(ctx, ['actividad', 'ciiu3', 'descripcion'], actividades.map((a) => [a.codigo, a.ciiu3?.join(' ') || '-', a.descripcion])));
}
