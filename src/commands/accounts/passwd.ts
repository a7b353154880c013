/** `fecr accounts passwd BASE --password-stdin`: a new password. */
import type { Ctx } from '../../cli/context.js';
import { info } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import { accountsModule, passwordFromStdin, userErrors, type DataDirFlag } from './shared.js';

export async function passwd(ctx: Ctx, base: string, opts: DataDirFlag & { passwordStdin?: boolean }): Promise<void> {
  const password = await passwordFromStdin(ctx, opts.passwordStdin);
  const { setPassword } = await accountsModule();
  await userErrors(() => withOperatorService(ctx, 'accounts passwd', opts.dataDir, (svc) => setPassword(svc, base, password)));
  info(ctx, `password of ${base} changed`);
}
