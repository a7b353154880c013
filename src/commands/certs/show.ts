import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { readAll, readInput, writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { certificateFailure } from '../../cli/certificate.js';

export async function run(ctx: Ctx, file: string, opts: { pinStdin?: boolean; json?: boolean }): Promise<void> {
  if (!opts.pinStdin) throw new UsageError('pass the PIN on stdin with --pin-stdin (it is never taken as an argument)');
  if (file === '-') throw new UsageError('the .p12 must be a file when the PIN comes from stdin');
  const pin = (await readAll(ctx.io.stdin)).toString('utf8').split(/\r?\n/)[0] ?? '';
  const p12 = await readInput(ctx.io, file);
  const { describeP12 } = await import('../../core/sign/p12.js');
  let d;
  try {
    d = describeP12(p12, pin, ctx.now());
  } catch (e) {
    const why = certificateFailure(e);
    if (why) throw new UserError(`${file}: ${why}`);
    throw e;
  }
  const c = d.certificate;
  const out = {
    subject: c.subject,
    issuer: c.issuer,
    serialNumber: c.serialNumber,
    notBefore: c.notBefore.toISOString(),
    notAfter: c.notAfter.toISOString(),
    validity: d.validity,
    identificacion: c.identificacion ?? null,
    sha256: c.sha256Fingerprint,
    hasPrivateKey: d.hasPrivateKey,
  };
  if (opts.json) return printJson(ctx, out);
  // The subject and issuer are the certificate's words (a .p12 from outside): through the sanitiser.
  for (const [k, v] of Object.entries(out)) writeLine(ctx.io.stdout, `${k}\t${safeText(String(v))}`);
}
