import { writeFile } from 'node:fs/promises';
import type { Ctx } from '../../cli/context.js';
import { SilentExit, UserError } from '../../cli/errors.js';
import { invalidHeadline, printFindings } from '../../cli/findings.js';
import { encodingFlag, readJson, resolvePath, writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { certificateFailure } from '../../cli/certificate.js';
import { readIssuer } from './issuer-input.js';

export async function run(ctx: Ctx, file: string, opts: { issuer: string; out?: string; json?: boolean; encoding?: string }): Promise<void> {
  const { completedInput } = await import('../../core/input/complete.js');
  const body = completedInput(await readJson(ctx.io, file, { encoding: encodingFlag(opts.encoding), encodingFlag: true }));
  const issuer = await readIssuer(ctx, opts.issuer);
  const { loadP12 } = await import('../../core/sign/p12.js');
  const now = ctx.now();
  let creds;
  try {
    creds = loadP12(Buffer.from(issuer.certificadoHacienda, 'base64'), issuer.pinCertificado, now);
  } catch (e) {
    const why = certificateFailure(e);
    if (why) throw new UserError(`${opts.issuer}: certificadoHacienda: ${why}`);
    throw e;
  }
  const { issueComprobante } = await import('../../core/comprobante.js');
  const { securityCodeFrom } = await import('../../core/clave.js');
  const result = issueComprobante(body, issuer, creds, {
    securityCode: securityCodeFrom(ctx.randomBytes),
    signingTime: now,
    newId: () => Buffer.from(ctx.randomBytes(16)).toString('hex'),
  });
  if (!result.ok) {
    printFindings(ctx, invalidHeadline('document', result.findings.length), result.findings);
    throw new SilentExit(1);
  }
  const { doc, xml } = result;
  if (opts.out) {
    try {
      await writeFile(resolvePath(ctx.io, opts.out), xml);
    } catch (e) {
      throw new UserError(`${opts.out}: cannot write (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  } else if (!opts.json) {
    ctx.io.stdout.write(xml + '\n');
  }
  if (opts.json) printJson(ctx, { clave: doc.clave, numeroConsecutivo: doc.numeroConsecutivo, file: opts.out ?? null });
  else writeLine(ctx.io.stderr, doc.clave);
}
