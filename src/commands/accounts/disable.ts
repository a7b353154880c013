/** `fecr accounts disable BASE`: its tokens stop working. */
import type { Ctx } from '../../cli/context.js';
import { info } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import { accountsModule, userErrors, type DataDirFlag } from './shared.js';

export async function disable(ctx: Ctx, base: string, opts: DataDirFlag): Promise<void> {
  const { disableAccount } = await accountsModule();
  await userErrors(() => withOperatorService(ctx, 'accounts disable', opts.dataDir, (svc) => disableAccount(svc, base)));
  info(ctx, `disabled ${base}`);
}
