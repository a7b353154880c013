/** Running a use case against the local service of a data dir (no servers, no emulator). */
import type { Ctx } from '../cli/context.js';
import type { ServiceContext } from '../service/context.js';

export async function withLocalService<T>(ctx: Ctx, dataDirFlag: string | undefined, fn: (svc: ServiceContext) => Promise<T>): Promise<T> {
  const [{ openService, resolveDataDir }, { default: pino }] = await Promise.all([import('../service/runtime.js'), import('pino')]);
  const opened = await openService({
    dataDir: resolveDataDir(ctx.io.env, dataDirFlag),
    // Hosted mode: the admin commands work on the shared PostgreSQL database.
    ...(ctx.io.env.FECR_DATABASE_URL ? { database: ctx.io.env.FECR_DATABASE_URL } : {}),
    env: ctx.io.env,
    startLocalEmulator: false,
    logger: pino({ level: 'silent' }),
    warn: (m) => ctx.io.stderr.write(`warning: ${m}\n`),
  });
  try {
    return await fn(opened.ctx);
  } finally {
    await opened.close();
  }
}

/**
 * The data dir an operator verb (accounts, keys, tokens, webhooks list|replay) works on: `--data-dir`, else the
 * profile in use when it is local (its dataDir, else FECR_DATA_DIR or the platform data dir, as its verbs use).
 * Those verbs have no client-API equivalent, so a remote profile is refused in one line (exit 2) rather than
 * silently acting on this machine's data. An unknown profile name is a usage error, even with `--data-dir`.
 */
export async function operatorDataDir(ctx: Ctx, verb: string, dataDirFlag: string | undefined): Promise<string | undefined> {
  const [{ profileChoiceOf }, { openProfiles, modeOf, resolveProfile }] = await Promise.all([import('../client/select.js'), import('../client/profiles.js')]);
  const { name, from } = await profileChoiceOf(ctx);
  const store = await openProfiles(ctx.io.env);
  store.requireExisting(name, from);
  if (dataDirFlag) return dataDirFlag;
  const stored = store.stored(name);
  if (modeOf(stored) === 'remote') {
    const { UsageError } = await import('../cli/errors.js');
    throw new UsageError(`fecr ${verb} works on a service's data dir (a local profile or --data-dir); profile "${name}" is remote`);
  }
  const profile = resolveProfile(name, stored);
  if (profile.mode !== 'local' || !profile.dataDir) return undefined;
  const { default: path } = await import('node:path');
  return path.resolve(ctx.io.cwd, profile.dataDir);
}

/** `withLocalService` on the data dir of `operatorDataDir` (a remote profile refused). */
export async function withOperatorService<T>(ctx: Ctx, verb: string, dataDirFlag: string | undefined, fn: (svc: ServiceContext) => Promise<T>): Promise<T> {
  return withLocalService(ctx, await operatorDataDir(ctx, verb, dataDirFlag), fn);
}
