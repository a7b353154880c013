/** `fecr recibidos show CLAVE [--json|--csv]`. */
import type { Ctx } from '../../cli/context.js';
import { UserError } from '../../cli/errors.js';
import { printJson } from '../../cli/output.js';
import { checkTableFlags } from '../../cli/table.js';
import { checkClave } from '../documents/shared.js';
import { printDetail, withBuyer, type ShowFlags } from './shared.js';

export async function run(ctx: Ctx, claveArg: string, f: ShowFlags): Promise<void> {
  checkTableFlags(f);
  const clave = checkClave(claveArg);
  const d = await withBuyer(ctx, (r) => r.show(clave));
  if (!d) throw new UserError(`no received comprobante with clave ${clave} (import it with fecr recibidos import)`);
  if (f.json) printJson(ctx, d);
  else printDetail(ctx, d, { csv: f.csv });
}
