/** `fecr recibidos list [--state] [--since] [--issuer] [--json|--csv]` (the flags of `fecr documents list`). */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { printJson } from '../../cli/output.js';
import { checkTableFlags } from '../../cli/table.js';
import type { RecibidosQuery } from '../../client/recibidos.js';
import { printList, withBuyer, type ListFlags } from './shared.js';

const ESTADOS = ['invalido', 'pendiente', 'aceptado', 'parcial', 'rechazado'];

/** A flag's value under its name or its first name (a hidden alias); both given and different: a usage error. */
function flag(f: ListFlags, name: 'state' | 'since' | 'issuer', alias: 'estado' | 'desde' | 'emisor'): { value: string; as: string } | undefined {
  const [v, a] = [f[name], f[alias]];
  if (v !== undefined && a !== undefined && v.trim() !== a.trim()) throw new UsageError(`--${name} and --${alias} (its former name) say different things: give one`);
  if (v !== undefined) return { value: v, as: `--${name}` };
  return a !== undefined ? { value: a, as: `--${alias}` } : undefined;
}

export async function run(ctx: Ctx, f: ListFlags): Promise<void> {
  checkTableFlags(f);
  const state = flag(f, 'state', 'estado');
  const since = flag(f, 'since', 'desde');
  const issuer = flag(f, 'issuer', 'emisor');
  const estado = state?.value.trim().toLowerCase();
  if (state && !ESTADOS.includes(estado!)) throw new UsageError(`${state.as} must be one of ${ESTADOS.join(', ')}`);
  if (since && !/^\d{4}-\d{2}-\d{2}$/.test(since.value.trim())) throw new UsageError(`${since.as} must be a date YYYY-MM-DD (got "${since.value}")`);
  if (issuer && !/^[A-Za-z0-9]{1,20}$/.test(issuer.value.trim())) throw new UsageError(`${issuer.as} must be an identificación (got "${issuer.value}")`);
  const q: RecibidosQuery = {
    ...(estado ? { estado: estado as RecibidosQuery['estado'] } : {}),
    ...(since ? { desde: since.value.trim() } : {}),
    ...(issuer ? { emisor: issuer.value.trim() } : {}),
  };
  if (f.due) {
    if (state && estado !== 'pendiente') throw new UsageError(`--due lists the documents not answered yet (pendiente): leave ${state.as} out`);
    const { dueRows, dueTerm, dueWarnings, printDue } = await import('./due.js');
    const term = await dueTerm(ctx);
    const rows = dueRows(await withBuyer(ctx, (r) => r.list({ ...q, estado: 'pendiente' })), ctx.now(), term);
    if (f.json) printJson(ctx, rows);
    else printDue(ctx, rows, { csv: f.csv });
    dueWarnings(ctx, rows, term);
    return;
  }
  const rows = await withBuyer(ctx, (r) => r.list(q));
  if (f.json) printJson(ctx, rows);
  else printList(ctx, rows, { csv: f.csv });
}
