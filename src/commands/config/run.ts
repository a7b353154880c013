import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import { flagFor, modeOf, openProfiles, PROFILE_KEYS, type ProfileKey, type StoredProfile } from '../../client/profiles.js';
import { existingProfileName, profileName } from '../../client/select.js';

function checkKey(key: string): ProfileKey {
  if (!(PROFILE_KEYS as string[]).includes(key)) throw new UsageError(`unknown key "${key}" (keys: ${PROFILE_KEYS.join(', ')})`);
  return key as ProfileKey;
}

/** A key's value as the verbs see it: stored, else the default of the profile's mode. */
function effective(stored: StoredProfile, key: ProfileKey): string | undefined {
  if (key === 'mode') return modeOf(stored);
  if (stored[key] !== undefined) return stored[key];
  if (modeOf(stored) === 'local') {
    if (key === 'env') return 'local';
    if (key === 'account') return 'local';
  }
  return undefined;
}

export async function get(ctx: Ctx, key: string): Promise<void> {
  const k = checkKey(key);
  const name = await existingProfileName(ctx);
  const store = await openProfiles(ctx.io.env);
  const v = effective(store.stored(name), k);
  if (v === undefined) throw new UserError(`${k} is not set in profile "${name}" (set it with: fecr config set ${k} VALUE${flagFor(name)})`);
  writeLine(ctx.io.stdout, v);
}

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
  for (const [key, v] of await store.setMany(name, pairs, ctx.io.cwd)) info(ctx, `profile "${name}": ${key} = ${v}`);
}

export async function unset(ctx: Ctx, key: string): Promise<void> {
  const name = await existingProfileName(ctx);
  const store = await openProfiles(ctx.io.env);
  const was = await store.unset(name, key);
  info(ctx, was ? `profile "${name}": ${key} removed` : `profile "${name}": ${key} was not set`);
}

export async function list(ctx: Ctx, opts: { json?: boolean }): Promise<void> {
  const current = await existingProfileName(ctx);
  const store = await openProfiles(ctx.io.env);
  const all = store.all();
  if (!all[current]) all[current] = {};
  const names = Object.keys(all).sort((a, b) => (a === current ? -1 : b === current ? 1 : a.localeCompare(b)));
  const view = (p: StoredProfile) => {
    const out: Record<string, string> = { mode: modeOf(p) };
    for (const k of PROFILE_KEYS) {
      const v = effective(p, k);
      if (k !== 'mode' && v !== undefined) out[k] = v;
    }
    return out;
  };
  if (opts.json) return printJson(ctx, { current, file: store.file, profiles: Object.fromEntries(names.map((n) => [n, view(all[n]!)])) });
  const rows = names.flatMap((n) => Object.entries(view(all[n]!)).map(([k, v]) => [n, k, v]));
  writeLine(ctx.io.stdout, renderTable(ctx, ['profile', 'key', 'value'], rows));
  info(ctx, `profile in use: ${current} (${store.file})`);
}
