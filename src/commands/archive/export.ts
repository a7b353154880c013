/** `fecr archive export --since DATE --until DATE OUT.tar.gz [--issuer ID] [--no-pdf]` (client/archive.ts). */
import { createWriteStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { SilentExit, UsageError, UserError, EXIT } from '../../cli/errors.js';
import { printFindings } from '../../cli/findings.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { activeProfile } from '../../client/select.js';
import { withBackend } from '../backend.js';

export interface ExportFlags {
  since: string;
  until: string;
  issuer?: string;
  pdf: boolean;
  json?: boolean;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export async function run(ctx: Ctx, out: string, f: ExportFlags): Promise<void> {
  for (const [flag, v] of [['--since', f.since], ['--until', f.until]] as const) {
    if (!DATE.test(v.trim()) || Number.isNaN(Date.parse(v.trim()))) throw new UsageError(`${flag} must be a date YYYY-MM-DD (got "${v}")`);
  }
  if (f.until.trim() < f.since.trim()) throw new UsageError(`--until (${f.until.trim()}) is before --since (${f.since.trim()})`);
  if (f.issuer !== undefined && !/^[A-Za-z0-9]{1,20}$/.test(f.issuer.trim())) throw new UsageError(`--issuer must be an identificación (got "${f.issuer}")`);
  const [{ exportLocalArchive }, { BackendError }] = await Promise.all([import('../../client/archive.js'), import('../../client/backend.js')]);
  const toStdout = out === '-';
  const file = toStdout ? '' : path.resolve(ctx.io.cwd, out);
  const partial = `${file}.partial`;
  const stream = toStdout ? (ctx.io.stdout as NodeJS.WritableStream) : createWriteStream(partial, { mode: 0o600 });
  try {
    const opts = {
      since: f.since.trim(),
      until: f.until.trim(),
      ...(f.issuer !== undefined ? { emisor: f.issuer.trim() } : {}),
      pdf: f.pdf !== false,
      ...(toStdout ? { endOutput: false } : {}),
    };
    const remote = (await activeProfile(ctx)).profile.mode !== 'local';
    const r = remote
      ? await withBackend(ctx, async (b) => {
          if (!b.archive) throw new UserError('this backend has no archive (fecr archive export)');
          return b.archive(stream, opts);
        })
      : await exportLocalArchive(ctx, stream, opts);
    if (!toStdout) await fsp.rename(partial, file);
    if (f.json && !toStdout) return printJson(ctx, { file, ...r });
    const line = `archived ${r.documents.ventas} sales and ${r.documents.compras} received documents: ${r.files} files, ${r.bytes} bytes${toStdout ? '' : ` in ${safeText(file)}`}`;
    writeLine(toStdout ? ctx.io.stderr : ctx.io.stdout, line);
  } catch (e) {
    if (!toStdout) await fsp.rm(partial, { force: true });
    if (e instanceof BackendError) {
      if (e.findings.length === 0) throw new UserError(e.message);
      printFindings(ctx, 'cannot export the archive', e.findings);
      throw new SilentExit(EXIT.error);
    }
    throw e;
  }
}
