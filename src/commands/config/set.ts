/** `fecr config set KEY VALUE | KEY=VALUE…`: keys of the profile in use, creating it if needed. */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { info } from '../../cli/output.js';
import { maskedValue, openProfiles } from '../../client/profiles.js';
import { profileName } from '../../client/select.js';

/**
 * `set KEY VALUE` or `set KEY=VALUE [KEY=VALUE …]` (a value may contain "="; it is split at the first one). Every
 * pair is checked before anything is written. The only verb that creates a profile.
 */
export async function set(ctx: Ctx, args: string[]): Promise<void> {
  let pairs: [string, string][];
  if (args.length > 0 && args.every((a) => a.includes('='))) pairs = args.map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]);
  else if (args.length === 2 && !args[0]!.includes('=')) pairs = [[args[0]!, args[1]!]];
  else throw new UsageError('config set takes KEY VALUE, or KEY=VALUE pairs (fecr config set mode=remote authUrl=URL baseUrl=URL base=NAME --profile NAME)');
  const name = await profileName(ctx);
  const store = await openProfiles(ctx.io.env);
  for (const [key, v] of await store.setMany(name, pairs, ctx.io.cwd)) info(ctx, `profile "${name}": ${key} = ${maskedValue(key, v)}`);
}
