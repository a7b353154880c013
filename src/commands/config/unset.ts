/** `fecr config unset KEY`: a key removed from the profile in use. */
import type { Ctx } from '../../cli/context.js';
import { info } from '../../cli/output.js';
import { openProfiles } from '../../client/profiles.js';
import { existingProfileName } from '../../client/select.js';

export async function unset(ctx: Ctx, key: string): Promise<void> {
  const name = await existingProfileName(ctx);
  const store = await openProfiles(ctx.io.env);
  const was = await store.unset(name, key);
  info(ctx, was ? `profile "${name}": ${key} removed` : `profile "${name}": ${key} was not set`);
}
