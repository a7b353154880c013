/** `fecr recibidos list [--estado] [--desde] [--emisor] [--json|--csv]`. */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { printJson } from '../../cli/output.js';
import { checkTableFlags } from '../../cli/table.js';
import type { RecibidosQuery } from '../../client/recibidos.js';
import { printList, withBuyer, type ListFlags } from './shared.js';

const ESTADOS = ['invalido', 'pendiente', 'aceptado', 'parcial', 'rechazado'];

export async function run(ctx: Ctx, f: ListFlags): Promise<void> {
  checkTableFlags(f);
  const estado = f.estado?.trim().toLowerCase();
  if (estado !== undefined && !ESTADOS.includes(estado)) throw new UsageError(`--estado must be one of ${ESTADOS.join(', ')}`);
  if (f.desde !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(f.desde.trim())) throw new UsageError(`--desde must be a date YYYY-MM-DD (got "${f.desde}")`);
  if (f.emisor !== undefined && !/^[A-Za-z0-9]{1,20}$/.test(f.emisor.trim())) throw new UsageError(`--emisor must be an identificación (got "${f.emisor}")`);
  const q: RecibidosQuery = {
    ...(estado ? { estado: estado as RecibidosQuery['estado'] } : {}),
    ...(f.desde ? { desde: f.desde.trim() } : {}),
    ...(f.emisor ? { emisor: f.emisor.trim() } : {}),
  };
  const rows = await withBuyer(ctx, (r) => r.list(q));
  if (f.json) printJson(ctx, rows);
  else printList(ctx, rows, { csv: f.csv });
}
