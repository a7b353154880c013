/**
 * `fecr archive export` in local mode (issue 29): the profile's data dir opened in this process (no emulator, no
 * worker), the account's documents streamed into the archive by service/archive.ts. Remote mode streams it from the
 * hosted service (Backend.archive, client/archive-receive.ts).
 */
import path from 'node:path';
import type { ClientContext as Ctx } from './context.js';
import type { ArchiveExportOptions, ArchiveExportResult } from '../service/archive.js';
import { BackendError } from './backend.js';
import { activeProfile } from './select.js';

export async function exportLocalArchive(ctx: Ctx, out: NodeJS.WritableStream, opts: Omit<ArchiveExportOptions, 'renderPdf'>): Promise<ArchiveExportResult> {
  const active = await activeProfile(ctx);
  if (active.profile.mode !== 'local') throw new BackendError('invalid', `profile "${active.name}" is remote: its archive comes from the hosted service (Backend.archive)`);
  const profile = active.profile;
  const [{ openService, resolveDataDir }, { default: pino }, run, { exportArchive }, { ServiceError }] = await Promise.all([
    import('../service/runtime.js'),
    import('pino'),
    import('../service/local-run.js'),
    import('../service/archive.js'),
    import('../service/service-error.js'),
  ]);
  const dataDir = profile.dataDir ? path.resolve(ctx.io.cwd, profile.dataDir) : resolveDataDir(ctx.io.env);
  const opened = await openService({
    dataDir,
    env: ctx.io.env,
    environment: profile.env ?? 'local',
    startLocalEmulator: false,
    logger: pino({ level: ctx.io.env.FECR_LOG_LEVEL ?? 'silent' }, ctx.io.stderr),
    warn: (m) => ctx.io.stderr.write(`warning: ${m}\n`),
    now: () => ctx.now().getTime(),
    mail: false,
  });
  try {
    const base = profile.account ?? run.LOCAL_ACCOUNT;
    const id = await run.localAccountId(opened.ctx, base, ctx.randomBytes);
    if (id === null) throw new BackendError('not_found', `no account ${base} in ${dataDir} (create it with fecr accounts create ${base})`);
    const renderPdf = opts.pdf ? (await import('../service/pdf.js')).renderPdf : undefined;
    try {
      return await exportArchive(opened.ctx, id, out, { ...opts, ...(renderPdf ? { renderPdf: (row) => renderPdf(opened.ctx, row as never) } : {}) });
    } catch (e) {
      if (e instanceof ServiceError) throw new BackendError('invalid', e.message, e.details ?? []);
      throw e;
    }
  } finally {
    await opened.close();
  }
}
