/**
 * `fecr accounts mail BASE [--smtp-url URL] [--from "Name <addr>"] [--reply-to ADDR] [--clear]`: the account's own SMTP
 * server and sender for the mails to its receptors (the password, from the URL, sealed in the data dir); without
 * flags, shows them (never the password). With none, the account's mails follow the service's defaults
 * (`fecr serve --smtp-url`, FECR_SMTP_URL), else go to the data dir's outbox.
 */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import { userErrors, type DataDirFlag } from './shared.js';

export interface MailFlags extends DataDirFlag {
  smtpUrl?: string;
  from?: string;
  replyTo?: string;
  clear?: boolean;
  json?: boolean;
}

export async function mail(ctx: Ctx, base: string, opts: MailFlags): Promise<void> {
  if (opts.clear && (opts.smtpUrl || opts.from || opts.replyTo)) throw new UsageError('--clear takes no other setting');
  if (!opts.smtpUrl && (opts.from || opts.replyTo)) throw new UsageError('--from and --reply-to go with --smtp-url');
  const m = await import('../../service/mail-settings.js');
  const view = await userErrors(() =>
    withOperatorService(ctx, 'accounts mail', opts.dataDir, async (svc) => {
      try {
        if (opts.clear) return (await m.clearAccountMail(svc, base)) ? null : undefined;
        if (opts.smtpUrl) return await m.setAccountMail(svc, base, { smtpUrl: opts.smtpUrl, ...(opts.from ? { from: opts.from } : {}), ...(opts.replyTo ? { replyTo: opts.replyTo } : {}) });
        return await m.accountMailView(svc, base);
      } catch (e) {
        if (e instanceof m.MailSettingsError) throw new UsageError(`--${e.field === 'smtpUrl' ? 'smtp-url' : e.field === 'replyTo' ? 'reply-to' : e.field}: ${e.message}`);
        throw e;
      }
    }),
  );
  if (opts.clear) {
    info(ctx, view === null ? `mail settings of ${base} removed: its mails follow the service's defaults` : `${base} had no mail settings of its own`);
    return;
  }
  if (opts.json) return printJson(ctx, view ?? null);
  if (!view) {
    if (opts.smtpUrl) throw new UserError('the settings were not saved');
    writeLine(ctx.io.stdout, `${base}: no SMTP server of its own (the service's default, else the outbox)`);
    return;
  }
  writeLine(ctx.io.stdout, `smtpUrl\t${view.smtpUrl}${view.hasPassword ? ' (password sealed)' : ''}`);
  writeLine(ctx.io.stdout, `from\t${view.from ?? "(the issuer's name and address)"}`);
  writeLine(ctx.io.stdout, `replyTo\t${view.replyTo ?? ''}`);
}
