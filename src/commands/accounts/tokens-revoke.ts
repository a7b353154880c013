/** `fecr tokens revoke JTI`: an access token stops working. */
import type { Ctx } from '../../cli/context.js';
import { info } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import type { DataDirFlag } from './shared.js';

export async function revoke(ctx: Ctx, jti: string, opts: DataDirFlag): Promise<void> {
  const { revokeToken } = await import('../../service/tokens.js');
  await withOperatorService(ctx, 'tokens revoke', opts.dataDir, (svc) => revokeToken(svc, jti));
  info(ctx, `revoked ${jti}`);
}
