/** What the `fecr contingency` verbs, `fecr send` and `fecr batch` share (issue 30): the profile's settings, the API. */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { info } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import type { Backend } from '../../client/backend.js';
import type { ContingencyApi } from '../../client/contingency.js';
import { activeProfile } from '../../client/select.js';
import { situacionFlag, withSituacion } from '../../client/situacion.js';
import { PLAZO_HORAS_DEFAULT } from '../../core/contingency.js';

/** The backend's contingency side (a backend without one: an error, not a crash). */
export function contingencyOf(b: Backend): ContingencyApi {
  if (!b.contingency) throw new UserError('this backend has no contingency side (fecr contingency)');
  return b.contingency();
}

/** The profile's settings: `contingencia` (auto|off, default off) and `contingenciaPlazoHoras` (default 48, not sourced: README). */
export async function contingencySettings(ctx: Ctx): Promise<{ auto: boolean; plazoHoras: number }> {
  const p = (await activeProfile(ctx)).profile;
  const local = p.mode === 'local' ? p : undefined;
  return {
    auto: local?.contingencia === 'auto',
    plazoHoras: local?.contingenciaPlazoHoras !== undefined ? Number(local.contingenciaPlazoHoras) : PLAZO_HORAS_DEFAULT,
  };
}

/**
 * `fecr send` / `fecr batch`: the backend with `--situacion` and the profile's `contingencia: auto` applied
 * (client/situacion.ts). Each time auto signs in situación 3, one warning line (once per command).
 */
export async function sendingBackend(ctx: Ctx, b: Backend, flag: string | undefined): Promise<Backend> {
  const situacion = situacionFlag(flag);
  if (situacion === null) throw new UsageError(`--situacion must be 1 (normal), 2 (contingencia) or 3 (sin internet), not "${flag}"`);
  const auto = situacion === undefined && b.mode === 'local' && (await contingencySettings(ctx)).auto;
  let told = false;
  return withSituacion(b, {
    ...(situacion ? { situacion } : {}),
    auto,
    onUnreachable: (cause) => {
      if (told) return;
      told = true;
      info(ctx, safeText(`warning: Hacienda cannot be reached (${cause}): signed in situación 3 (sin internet, contingencia auto); queued until Hacienda answers`));
    },
  });
}
