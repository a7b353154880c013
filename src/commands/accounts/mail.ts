/**
 * `fecr accounts mail BASE [--smtp-url URL] [--from "Name <addr>"] [--reply-to ADDR] [--clear] [--allow ADDR…]
 * [--disallow ADDR…]`: the account's own SMTP server and sender for the mails to its receptors (the password, from
 * the URL, sealed in the data dir), and its allow-list: the addresses, beside each document's own recipients, that
 * the account may have mailed through the client API (`POST /api/enviar/correo`); without flags, shows them (never the
 * password). Without a server of its own, the account's mails follow the service's defaults (`fecr serve --smtp-url`,
 * FECR_SMTP_URL), else go to the data dir's outbox.
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
  allow?: string[];
  disallow?: string[];
  json?: boolean;
}

const FLAG_OF: Record<string, string> = { smtpUrl: 'smtp-url', replyTo: 'reply-to' };

export async function mail(ctx: Ctx, base: string, opts: MailFlags): Promise<void> {
  if (opts.clear && (opts.smtpUrl || opts.from || opts.replyTo || opts.allow || opts.disallow)) throw new UsageError('--clear takes no other setting');
  if (!opts.smtpUrl && (opts.from || opts.replyTo)) throw new UsageError('--from and --reply-to go with --smtp-url');
  const m = await import('../../service/mail-settings.js');
  const shown = await userErrors(() =>
    withOperatorService(ctx, 'accounts mail', opts.dataDir, async (svc) => {
      try {
        if (opts.clear) return { view: (await m.clearAccountMail(svc, base)) ? null : undefined, allow: [] };
        // The allow-list first: a bad address there leaves everything as it was.
        const allow = opts.allow || opts.disallow ? await m.changeMailAllowList(svc, base, { allow: opts.allow ?? [], disallow: opts.disallow ?? [] }) : await m.mailAllowList(svc, base);
        if (opts.smtpUrl) return { view: await m.setAccountMail(svc, base, { smtpUrl: opts.smtpUrl, ...(opts.from ? { from: opts.from } : {}), ...(opts.replyTo ? { replyTo: opts.replyTo } : {}) }), allow };
        return { view: await m.accountMailView(svc, base), allow };
      } catch (e) {
        if (e instanceof m.MailSettingsError) throw new UsageError(`--${FLAG_OF[e.field] ?? e.field}: ${e.message}`);
        throw e;
      }
    }),
  );
  const { view, allow } = shown;
  if (opts.clear) {
    info(ctx, view === null ? `mail settings of ${base} removed: its mails follow the service's defaults` : `${base} had no mail settings of its own`);
    return;
  }
  if (opts.json) {
    // The settings (null: none of its own), with `allow` once the account has registered addresses.
    if (!view && allow.length === 0) return printJson(ctx, null);
    return printJson(ctx, { ...(view ?? { smtpUrl: null, hasPassword: false, from: null, replyTo: null }), allow });
  }
  if (!view) {
    if (opts.smtpUrl) throw new UserError('the settings were not saved');
    writeLine(ctx.io.stdout, `${base}: no SMTP server of its own (the service's default, else the outbox)`);
  } else {
    writeLine(ctx.io.stdout, `smtpUrl\t${view.smtpUrl}${view.hasPassword ? ' (password sealed)' : ''}`);
    writeLine(ctx.io.stdout, `from\t${view.from ?? "(the service's --mail-from)"}`);
    writeLine(ctx.io.stdout, `replyTo\t${view.replyTo ?? ''}`);
  }
  if (allow.length > 0 || opts.allow || opts.disallow) writeLine(ctx.io.stdout, `allow\t${allow.length > 0 ? allow.join(' ') : "(none: only each document's own recipients)"}`);
}
