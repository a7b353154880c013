import type { Ctx } from '../../cli/context.js';
import { SilentExit } from '../../cli/errors.js';
import { readInput, writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';

export async function run(ctx: Ctx, file: string, opts: { json?: boolean; xsd: boolean }): Promise<void> {
  const xml = (await readInput(ctx.io, file)).toString('utf8');
  const [{ verifyXades }, { addCheck }] = await Promise.all([import('../../core/sign/verify.js'), import('../../core/sign/verify-report.js')]);
  const report = verifyXades(xml, ctx.now());
  if (opts.xsd) {
    const { kindOfRoot, KINDS } = await import('../../core/xml/kinds.js');
    const root = /^\s*(?:<\?[^?]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*<([A-Za-z_][\w.-]*)/.exec(xml.replace(/^\uFEFF/, ''))?.[1] ?? '';
    const kind = kindOfRoot(root);
    const schema = kind ? KINDS[kind].schema : root === 'MensajeHacienda' ? 'MH' : root === 'MensajeReceptor' ? 'MR' : undefined;
    if (!schema) {
      addCheck(report, { name: 'xsd', ok: false, detail: 'the root element is not a known v4.4 document' });
    } else {
      const { createXsdValidator } = await import('../../adapters/xsd/index.js');
      const [r] = await createXsdValidator().validate(xml, schema);
      addCheck(report, {
        name: 'xsd',
        ok: Boolean(r?.valid),
        detail: r?.valid ? `valid against ${schema} v4.4` : (r?.errors ?? []).map((e) => e.message).join('; '),
      });
    }
  }
  if (opts.json) {
    printJson(ctx, {
      ok: report.ok,
      signer: report.signer && {
        subject: report.signer.subject,
        identificacion: report.signer.identificacion ?? null,
        serialNumber: report.signer.serialNumber,
        notBefore: report.signer.notBefore.toISOString(),
        notAfter: report.signer.notAfter.toISOString(),
      },
      signingTime: report.signingTime ?? null,
      form: report.form ?? null,
      policy: report.policy ? { identifier: report.policy.identifier, version: report.policy.version ?? null, current: report.policy.current } : null,
      checks: report.checks,
      notes: report.notes,
    });
  } else {
    // The details quote the document and its certificate (from outside): through the sanitiser.
    for (const c of report.checks) writeLine(ctx.io.stdout, `${c.ok ? 'ok  ' : 'FAIL'}  ${safeText(c.name)}: ${safeText(c.detail)}`);
    // Notes are not failures: with only notes the signature is valid and the exit code is 0.
    for (const n of report.notes) writeLine(ctx.io.stdout, `note  ${safeText(n)}`);
    if (report.signer) writeLine(ctx.io.stdout, `signer: ${safeText(report.signer.subject)}`);
    if (report.form) writeLine(ctx.io.stdout, `form: ${safeText(report.form)}`);
    writeLine(ctx.io.stderr, report.ok ? `signature valid${report.notes.length ? ` (${report.notes.length} note${report.notes.length > 1 ? 's' : ''})` : ''}` : 'verification failed');
  }
  if (!report.ok) throw new SilentExit(1);
}
