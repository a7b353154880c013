/** Reading the issuer record a document command needs; an invalid one is a headline and its findings. */
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit } from '../../cli/errors.js';
import { invalidHeadline, printFindings } from '../../cli/findings.js';
import { readJson } from '../../cli/io.js';
import type { IssuerRecord } from '../../core/input/schema.js';

/** The issuer record of `--issuer FILE`; an invalid one is `error: FILE: invalid issuer record: N findings` + findings. */
export async function readIssuer(ctx: Ctx, file: string): Promise<IssuerRecord> {
  const raw = await readJson(ctx.io, file);
  const { parseIssuer } = await import('../../core/document.js');
  const r = parseIssuer(raw);
  if (!r.ok) {
    printFindings(ctx, `${file === '-' ? 'stdin' : file}: ${invalidHeadline('issuer record', r.findings.length)}`, r.findings);
    throw new SilentExit(EXIT.error);
  }
  return r.issuer;
}
