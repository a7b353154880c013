/** `fecr accounts enable BASE`: a disabled account works again. */
import type { Ctx } from '../../cli/context.js';
import { info } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import { accountsModule, userErrors, type DataDirFlag } from './shared.js';

export async function enable(ctx: Ctx, base: string, opts: DataDirFlag): Promise<void> {
  const { enableAccount } = await accountsModule();
  await userErrors(() => withOperatorService(ctx, 'accounts enable', opts.dataDir, (svc) => enableAccount(svc, base)));
  info(ctx, `enabled ${base}`);
}
