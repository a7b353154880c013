/** `fecr config list`: every profile and its keys. */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { modeOf, openProfiles, PROFILE_KEYS, type StoredProfile } from '../../client/profiles.js';
import { existingProfileName } from '../../client/select.js';
import { effective } from './shared.js';

export async function list(ctx: Ctx, opts: { json?: boolean; csv?: boolean }): Promise<void> {
  checkTableFlags(opts);
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
  writeLine(ctx.io.stdout, renderTable(ctx, ['profile', 'key', 'value'], rows, { csv: opts.csv }));
  info(ctx, `profile in use: ${current} (${store.file})`);
}
