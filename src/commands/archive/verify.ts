/** `fecr archive verify OUT.tar.gz`: exit 0 when the manifest, the files, the signatures and the XSDs agree; else 1, one line per file. */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';

export async function run(ctx: Ctx, file: string, f: { json?: boolean }): Promise<void> {
  const full = path.resolve(ctx.io.cwd, file);
  try {
    await fsp.access(full);
  } catch {
    throw new UserError(`cannot read ${safeText(file)}`);
  }
  const { verifyArchive } = await import('../../service/archive-verify.js');
  const r = await verifyArchive(full, { now: ctx.now() });
  if (f.json) printJson(ctx, r);
  else if (r.ok) writeLine(ctx.io.stdout, `ok: ${r.files} files match the manifest; ${r.signatures} signatures verify; ${r.xsd} documents valid against their XSD`);
  else {
    writeLine(ctx.io.stderr, `error: ${safeText(file)}: ${r.problems.length} ${r.problems.length === 1 ? 'difference' : 'differences'}`);
    for (const p of r.problems) writeLine(ctx.io.stderr, `  ${safeText(p.file)}: ${safeText(p.message)}`);
  }
  if (!r.ok) throw new SilentExit(EXIT.error);
}
