/** What `fecr login|logout|whoami` share: the remote profile in use (a local one has no session: a note) */
import type { Ctx } from '../../cli/context.js';
import { info } from '../../cli/output.js';
import { flagFor, type ActiveProfile, type RemoteProfile } from '../../client/profiles.js';
import { activeProfile } from '../../client/select.js';

export type RemoteActive = ActiveProfile & { profile: RemoteProfile };

/** Local profiles have no session: one note, exit 0. Returns the remote profile otherwise. */
export async function remoteOrNote(ctx: Ctx): Promise<RemoteActive | null> {
  const active = await activeProfile(ctx);
  if (active.profile.mode === 'remote') return active as RemoteActive;
  info(ctx, `profile "${active.name}" is local: there is nothing to log in to (a remote profile needs authUrl and baseUrl: fecr config set authUrl URL${flagFor(active.name)})`);
  return null;
}
