/**
 * `fecr accounts mailbox BASE [--imap URL] [--rules FILE] [--interval S] [--clear] [--json]` (issue 30): the hosted
 * account's suppliers' mailbox, read by the service's worker (one job per account, service/mailbox/account.ts) as
 * `fecr recibidos watch` reads one: each comprobante imported, answered as the rules say, the mail moved to
 * fecr-imported or set aside in fecr-set-aside with its reason. The password: FECR_IMAP_PASSWORD, else the URL's;
 * sealed in the store, never shown. Without flags, shows the setting.
 */
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UsageError } from '../../cli/errors.js';
import { printFindings } from '../../cli/findings.js';
import { readJson, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { withOperatorService } from '../local.js';
import { userErrors, type DataDirFlag } from './shared.js';

export interface MailboxFlags extends DataDirFlag {
  imap?: string;
  rules?: string;
  interval?: string;
  clear?: boolean;
  json?: boolean;
}

export async function mailbox(ctx: Ctx, base: string, opts: MailboxFlags): Promise<void> {
  if (opts.clear && (opts.imap || opts.rules || opts.interval)) throw new UsageError('--clear takes no other setting');
  if (!opts.imap && (opts.rules || opts.interval)) throw new UsageError('--rules and --interval go with --imap');
  const intervalS = opts.interval === undefined ? undefined : Number(opts.interval);
  if (intervalS !== undefined && (!Number.isInteger(intervalS) || intervalS < 10 || intervalS > 86_400)) throw new UsageError(`--interval must be a whole number of seconds from 10 to 86400 (got "${opts.interval}")`);
  const rules = opts.rules ? await readJson(ctx.io, opts.rules) : undefined;
  const m = await import('../../service/mailbox/account.js');
  const { MailRulesError } = await import('../../service/mailbox/rules.js');
  const { IMAP_PASSWORD_VAR } = await import('../../service/mailbox/imap.js');
  const password = ctx.io.env[IMAP_PASSWORD_VAR];
  const view = await userErrors(() =>
    withOperatorService(ctx, 'accounts mailbox', opts.dataDir, async (svc) => {
      if (opts.clear) return (await m.clearAccountMailbox(svc, base)) ? null : undefined;
      if (!opts.imap) return m.accountMailboxView(svc, base);
      try {
        return await m.setAccountMailbox(svc, base, { imapUrl: opts.imap, ...(password ? { password } : {}), ...(rules !== undefined ? { rules } : {}), ...(intervalS !== undefined ? { intervalS } : {}) });
      } catch (e) {
        if (e instanceof MailRulesError) {
          printFindings(ctx, `${opts.rules}: ${e.message}`, e.findings);
          throw new SilentExit(EXIT.usage);
        }
        if (e instanceof Error && e.message.startsWith('--imap')) throw new UsageError(e.message);
        throw e;
      }
    }),
  );
  if (opts.clear) return info(ctx, view === null ? `the mailbox of ${base} removed: the service no longer reads it` : `${base} had no mailbox`);
  if (opts.json) return printJson(ctx, view ?? null);
  if (!view) return writeLine(ctx.io.stdout, `${base}: no suppliers' mailbox`);
  writeLine(ctx.io.stdout, `imap\t${safeText(view.imapUrl)} (password sealed)`);
  writeLine(ctx.io.stdout, `interval\t${view.intervalS} s`);
  writeLine(ctx.io.stdout, `rules\t${safeText(JSON.stringify(view.rules))}`);
  if (opts.imap) info(ctx, `the service's worker reads it now and every ${view.intervalS} s (fecr serve)`);
}
