/** `fecr documents email CLAVE [--to ADDR…]`: mails an accepted document to its receptor again and says how it went. */
import type { Ctx } from '../../cli/context.js';
import { UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { withBackend } from '../backend.js';
import { checkClave, mailLine } from './shared.js';

export interface EmailFlags {
  to?: string[];
  json?: boolean;
}

export async function email(ctx: Ctx, claveArg: string, opts: EmailFlags): Promise<void> {
  const clave = checkClave(claveArg);
  const to = (opts.to ?? []).flatMap((a) => a.split(',')).map((a) => a.trim()).filter((a) => a !== '');
  const mail = await withBackend(ctx, (b) => b.emailDocument(clave, to));
  if (opts.json) printJson(ctx, mail);
  else writeLine(ctx.io.stdout, mailLine(mail)!);
  if (mail.estado === 'fallido') throw new UserError(`the mail of ${clave} failed: ${mail.ultimaRespuesta ?? 'no answer'}`);
}
