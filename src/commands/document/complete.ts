/**
 * `fecr complete BODY.json|-`: the body with every figure it leaves out computed (core/input/complete.ts: subTotal,
 * montoTotal, impuesto[].monto, impuestoNeto, montoTotalLinea, the resumen's totals, …), printed as JSON with a
 * 2-space indent: what `fecr validate`, `fecr send` and `fecr batch` compute from the same body, written out, e.g.
 * for the client API (which wants every figure unless asked to complete, ?completar=1). A figure that cannot be
 * computed (an input to fix) is not guessed: the document's findings instead, exit 1.
 */
import type { Ctx } from '../../cli/context.js';
import { SilentExit } from '../../cli/errors.js';
import { invalidHeadline, printFindings } from '../../cli/findings.js';
import { encodingFlag, readJson, writeLine } from '../../cli/io.js';
import { safeJson } from '../../cli/safe-text.js';

export async function run(ctx: Ctx, file: string, opts: { encoding?: string }): Promise<void> {
  const read = await readJson(ctx.io, file, { encoding: encodingFlag(opts.encoding), encodingFlag: true });
  const { completeBody, completedInput } = await import('../../core/input/complete.js');
  const { body, incomplete } = completeBody(read);
  if (incomplete.length === 0 && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    writeLine(ctx.io.stdout, safeJson(body, 2));
    return;
  }
  // What keeps a figure from being computed is a finding of the document: all of them, as fecr validate gives them.
  const [{ parseDocument }, { placeholderIssuer }] = await Promise.all([import('../../core/document.js'), import('../../core/placeholder-issuer.js')]);
  const findings: { path: string; message: string }[] = [...parseDocument(completedInput(read), placeholderIssuer(read)).findings];
  const what = incomplete.length ? `cannot compute the figures of ${incomplete.join(', ')}` : 'cannot complete the body';
  if (findings.length === 0) findings.push({ path: incomplete[0] ?? '', message: 'its figures cannot be computed from what it gives' });
  printFindings(ctx, `${what}: ${invalidHeadline('document', findings.length)}`, findings);
  throw new SilentExit(1);
}
