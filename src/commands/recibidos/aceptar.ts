/** `fecr recibidos aceptar CLAVE`: see shared.ts decide(). */
import type { Ctx } from '../../cli/context.js';
import { decide, type DecideFlags } from './shared.js';

export function run(ctx: Ctx, clave: string, flags: DecideFlags): Promise<void> {
  return decide(ctx, 'aceptar', clave, flags);
}
