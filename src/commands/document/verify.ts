import type { Ctx } from '../../cli/context.js';
import { SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { readInput, writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';

const ENVS = ['local', 'sandbox', 'production'] as const;

export async function run(ctx: Ctx, file: string, opts: { json?: boolean; xsd: boolean; env?: string; trust?: string }): Promise<void> {
  const env = (opts.env ?? 'production').trim();
  if (!(ENVS as readonly string[]).includes(env)) throw new UsageError(`--env must be local, sandbox or production (got "${safeText(opts.env ?? '')}")`);
  const xml = (await readInput(ctx.io, file)).toString('utf8');
  const [{ verifyXades }, { addCheck }, { signedFacts, signerPartyCheck, SANDBOX_SEAL_CN }] = await Promise.all([
    import('../../core/sign/verify.js'),
    import('../../core/sign/verify-report.js'),
    import('../../core/sign/expected-signer.js'),
  ]);
  // Who must have signed it (issue 37.3): the Emisor, a FEC's Receptor, a MensajeReceptor's Receptor, or Hacienda's
  // seal chained to the seal's trust anchors of --env (fecr's test root, the local emulator's, only with --env local).
  const facts = signedFacts(xml);
  let trust;
  if (typeof facts !== 'string' && facts.type === 'MensajeHacienda') {
    const { loadSealTrustStore, trustPaths, TrustSettingError } = await import('../../service/recibidos/trust.js');
    try {
      trust = loadSealTrustStore(env as (typeof ENVS)[number], opts.trust ? trustPaths(opts.trust, ctx.io.cwd) : []);
    } catch (e) {
      if (e instanceof TrustSettingError) throw new UserError(e.message);
      throw e;
    }
  }
  const report = verifyXades(xml, ctx.now(), trust ? { trust } : {});
  // --env sandbox: the sandbox's seal (…(PRUEBAS), NOTES §3.4) is under CAs fecr does not ship, so its chain cannot be
  // judged: where that is all that fails, a note (what fecr does not know warns), as archive verify does.
  const unjudged = env === 'sandbox' && typeof facts !== 'string' && facts.type === 'MensajeHacienda' && SANDBOX_SEAL_CN.test(report.signer?.subject ?? '');
  if (unjudged && report.checks.every((c) => c.ok || c.name === 'certificate.chain')) {
    report.checks = report.checks.filter((c) => c.ok);
    report.notes.push("Hacienda's sandbox seal not chained: the sandbox's CAs are not shipped (--trust FILE|DIR adds them); a sandbox answer has no fiscal validity");
    addCheck(report, { name: 'signer.party', ok: true, detail: "Hacienda's sandbox seal (PRUEBAS), its chain not judged" });
  } else addCheck(report, typeof facts === 'string' ? { name: 'signer.party', ok: false, detail: facts } : signerPartyCheck(facts, report));
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
      anchor: report.anchor ? { name: report.anchor.name, source: report.anchor.source } : null,
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
    if (report.anchor) writeLine(ctx.io.stdout, `trust anchor: ${safeText(report.anchor.name)} (${safeText(report.anchor.source)})`);
    if (report.form) writeLine(ctx.io.stdout, `form: ${safeText(report.form)}`);
    writeLine(ctx.io.stderr, report.ok ? `signature valid${report.notes.length ? ` (${report.notes.length} note${report.notes.length > 1 ? 's' : ''})` : ''}` : 'verification failed');
  }
  if (!report.ok) throw new SilentExit(1);
}
