/** `fecr keys rotate`: a new token signing key of the auth server. */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { info } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import type { DataDirFlag } from './shared.js';

export async function rotate(ctx: Ctx, opts: DataDirFlag): Promise<void> {
  const { rotateKey } = await import('../../service/keys.js');
  const r = await withOperatorService(ctx, 'keys rotate', opts.dataDir, (svc) => rotateKey(svc));
  writeLine(ctx.io.stdout, r.kid);
  info(ctx, `new signing key ${r.kid}; retired: ${r.retired.join(', ') || 'none'}`);
}
