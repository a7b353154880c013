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
