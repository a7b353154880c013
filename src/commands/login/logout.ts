/** `fecr logout`: the session token revoked on the server and forgotten. */
import type { Ctx } from '../../cli/context.js';
import { UserError } from '../../cli/errors.js';
import { info } from '../../cli/output.js';
import { logout as logoutFromAuthServer } from '../../client/auth.js';
import { deleteToken } from '../../client/secret-store.js';
import { openSession } from '../../client/select.js';
import { remoteOrNote } from './shared.js';

export async function logout(ctx: Ctx): Promise<void> {
  const active = await remoteOrNote(ctx);
  if (!active) return;
  const { name, profile } = active;
  const session = await openSession(ctx, active, { allowExpired: true, optional: true });
  if (!session) return info(ctx, `not logged in (profile "${name}")`);

  let failure: string | undefined;
  let already = false;
  if (session.secondsLeft !== null && session.secondsLeft <= 0) {
    already = true; // expired: nothing to revoke
  } else {
    const outcome = await logoutFromAuthServer(profile.authUrl, session.token);
    if (outcome.result === 'already') already = true;
    else if (outcome.result === 'failed') failure = outcome.reason;
  }
  await deleteToken({ env: ctx.io.env, configDir: active.configDir }, name);
  if (failure) {
    const until = session.claims.exp ? ` until ${new Date(session.claims.exp * 1000).toISOString()}` : '';
    throw new UserError(`forgot the token of profile "${name}", but could not revoke it: ${failure}; it stays valid${until}`);
  }
  info(ctx, already ? `the session had already ended; forgot its token (profile "${name}")` : `logged out: token revoked and forgotten (profile "${name}")`);
  if (session.source === 'env') info(ctx, 'note: FECR_TOKEN is still set in the environment');
}
