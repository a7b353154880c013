/** `fecr config get KEY`: a key of the profile in use (its default when unset). */
import type { Ctx } from '../../cli/context.js';
import { UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { flagFor, openProfiles } from '../../client/profiles.js';
import { existingProfileName } from '../../client/select.js';
import { checkKey, effective } from './shared.js';

export async function get(ctx: Ctx, key: string): Promise<void> {
  const k = checkKey(key);
  const name = await existingProfileName(ctx);
  const store = await openProfiles(ctx.io.env);
  const v = effective(store.stored(name), k);
  if (v === undefined) throw new UserError(`${k} is not set in profile "${name}" (set it with: fecr config set ${k} VALUE${flagFor(name)})`);
  writeLine(ctx.io.stdout, v);
}
