/** `fecr logout`: the session token revoked on the server and forgotten. */
import type { Ctx } from '../../cli/context.js';
import { UserError } from '../../cli/errors.js';
import { info } from '../../cli/output.js';
import { HttpClient, NetworkError } from '../../client/http-client.js';
import { deleteToken } from '../../client/secret-store.js';
import { openSession } from '../../client/select.js';
import { messageOf, remoteOrNote } from './shared.js';

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
    const http = new HttpClient({ timeoutMs: 30_000 });
    try {
      const res = await http.postJson(`${profile.authUrl}/logout`, {}, { token: session.token });
      if (res.status === 401) already = true;
      else if (res.status !== 200) failure = `${profile.authUrl}/logout answered ${res.status} (${messageOf(res)})`;
    } catch (e) {
      if (!(e instanceof NetworkError)) throw e;
      failure = e.message;
    } finally {
      await http.close();
    }
  }
  await deleteToken({ env: ctx.io.env, configDir: active.configDir }, name);
  if (failure) {
    const until = session.claims.exp ? ` until ${new Date(session.claims.exp * 1000).toISOString()}` : '';
    throw new UserError(`forgot the token of profile "${name}", but could not revoke it: ${failure}; it stays valid${until}`);
  }
  info(ctx, already ? `the session had already ended; forgot its token (profile "${name}")` : `logged out: token revoked and forgotten (profile "${name}")`);
  if (session.source === 'env') info(ctx, 'note: FECR_TOKEN is still set in the environment');
}
