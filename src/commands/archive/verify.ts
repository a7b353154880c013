/** `fecr archive verify OUT.tar.gz`: exit 0 when the manifest, the files, the signatures, their signers and the XSDs agree; else 1, one line per file. */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';

export async function run(ctx: Ctx, file: string, f: { json?: boolean; trust?: string }): Promise<void> {
  const full = path.resolve(ctx.io.cwd, file);
  try {
    await fsp.access(full);
  } catch {
    throw new UserError(`cannot read ${safeText(file)}`);
  }
  const [{ verifyArchive }, { trustPaths, TrustSettingError }] = await Promise.all([import('../../service/archive-verify.js'), import('../../service/recibidos/trust.js')]);
  let r;
  try {
    r = await verifyArchive(full, { now: ctx.now(), ...(f.trust ? { trust: trustPaths(f.trust, ctx.io.cwd) } : {}) });
  } catch (e) {
    if (e instanceof TrustSettingError) throw new UserError(e.message);
    throw e;
  }
  if (!f.json) for (const w of r.warnings) writeLine(ctx.io.stderr, `warning: ${safeText(w.file)}: ${safeText(w.message)}`);
  if (f.json) printJson(ctx, r);
  else if (r.ok) {
    writeLine(ctx.io.stdout, `ok: ${r.files} files match the manifest; ${r.signatures} signatures verify; ${r.xsd} documents valid against their XSD; each signed by who must sign it`);
    // Which anchor vouched for Hacienda's answers: the local emulator's seal (fecr's test root) is no Hacienda's.
    for (const a of r.anchors) {
      const what = a.testRoot ? "the local emulator's answers (env local: of no fiscal validity)" : "Hacienda's answers";
      writeLine(ctx.io.stdout, `  ${a.files} ${what}: signed under the trust anchor ${safeText(a.name)} (${safeText(a.source)})`);
    }
  } else {
    const n = r.problems.length + r.moreProblems;
    writeLine(ctx.io.stderr, `error: ${safeText(file)}: ${n} ${n === 1 ? 'difference' : 'differences'}`);
    for (const p of r.problems) writeLine(ctx.io.stderr, `  ${safeText(p.file)}: ${safeText(p.message)}`);
    if (r.moreProblems) writeLine(ctx.io.stderr, `  … and ${r.moreProblems} more`);
  }
  if (!r.ok) throw new SilentExit(EXIT.error);
}
