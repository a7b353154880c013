/**
 * `fecr recibidos watch --maildir DIR | --imap URL [--rules FILE] [--once] [--interval S] [--json]` (issue 30): reads
 * suppliers' mails, imports their XML comprobantes as `fecr recibidos import` does, answers them as the rules say,
 * and moves each mail out of the inbox once that is committed (service/mailbox/watch.ts says how it is exactly once).
 * Runs until SIGINT/SIGTERM (the mail in hand is finished first), a pass every --interval seconds; --once: one pass.
 * One line per mail on stdout (JSON with --json); notes as warnings on stderr; everything from a mail through the
 * sanitiser. A pass that fails (the service, Hacienda's or the mail server's connection down) is a warning and the
 * next pass tries again; with --once it is the error and exit 1.
 */
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { printFindings } from '../../cli/findings.js';
import { readJson, resolvePath, writeLine } from '../../cli/io.js';
import { safeJson, safeText } from '../../cli/safe-text.js';
import { BackendError } from '../../client/backend.js';
import type { RecibidosApi } from '../../client/recibidos.js';
import { receivedMaxBytes } from '../../client/recibidos-files.js';
import type { MailRules } from '../../service/mailbox/rules.js';
import type { AnswerOutcome, MailOutcome, MailSink, MailSource } from '../../service/mailbox/watch.js';
import { withBuyer } from './shared.js';

export interface WatchFlags {
  maildir?: string;
  imap?: string;
  rules?: string;
  once?: boolean;
  interval?: string;
  json?: boolean;
}

async function loadRules(ctx: Ctx, file: string | undefined): Promise<MailRules> {
  const { HOLD_ALL, MailRulesError, parseMailRules } = await import('../../service/mailbox/rules.js');
  if (!file) return HOLD_ALL;
  const json = await readJson(ctx.io, file);
  try {
    return parseMailRules(json);
  } catch (e) {
    if (!(e instanceof MailRulesError)) throw e;
    printFindings(ctx, `${file}: ${e.message}`, e.findings);
    throw new SilentExit(EXIT.usage);
  }
}

async function openSource(ctx: Ctx, f: WatchFlags): Promise<MailSource> {
  try {
    if (f.maildir !== undefined) {
      const { MaildirSource } = await import('../../client/mailbox-maildir.js');
      return await MaildirSource.open(resolvePath(ctx.io, f.maildir));
    }
    const { ImapSource, parseImapUrl } = await import('../../service/mailbox/imap.js');
    let target;
    try {
      target = parseImapUrl(f.imap!, ctx.io.env);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    return await ImapSource.open(target);
  } catch (e) {
    if (e instanceof UserError) throw e;
    throw new UserError(safeText(`the mailbox cannot be opened: ${e instanceof Error ? e.message : String(e)}`));
  }
}

/** The buyer's side as the watcher needs it: a refused answer sorted into "try again later" and "failed". */
function sinkOf(r: RecibidosApi): MailSink {
  return {
    import: (files) => r.import(files),
    async accept(clave, condicionImpuesto): Promise<AnswerOutcome> {
      try {
        await r.decide(clave, { decision: 'aceptar', ...(condicionImpuesto ? { condicionImpuesto } : {}) }, { waitMs: 0 });
        return { ok: true };
      } catch (e) {
        if (!(e instanceof BackendError)) throw e;
        // Hacienda has no record of the comprobante yet (decide.ts), or the service cannot be reached: later.
        const hacienda = e.findings.find((x) => x.path === 'hacienda');
        if (hacienda) return { retry: hacienda.message };
        if (e.code === 'unavailable') return { retry: e.message };
        return { failed: [e.message, ...e.findings.map((x) => `${x.path}: ${x.message}`)].join('; ') };
      }
    },
  };
}

const RULE_TEXT: Record<string, string> = { accepted: 'accepted by the rules', held: 'held', 'answered before': 'already answered', deferred: 'to accept once Hacienda has it', failed: 'the answer failed' };

function printMail(ctx: Ctx, m: MailOutcome, json: boolean): void {
  if (json) writeLine(ctx.io.stdout, safeJson(m));
  else if (m.outcome === 'set-aside') writeLine(ctx.io.stdout, safeText(`mail ${m.id}: set aside: ${m.reasons.join('; ')}`));
  else {
    for (const d of m.documents) {
      if (d.estado === 'invalido') continue;
      const what = `${d.clave} ${d.creado ? 'imported' : 'already imported'} from ${d.emisor ?? '?'}${d.rule ? `, ${RULE_TEXT[d.rule] ?? d.rule}` : ''}`;
      writeLine(ctx.io.stdout, safeText(`mail ${m.id}: ${what}${m.outcome === 'retry' ? ' (left in the inbox)' : ''}`));
    }
  }
  if (!json) for (const n of m.notes) writeLine(ctx.io.stderr, safeText(`warning: mail ${m.id}: ${n}`));
}

export async function run(ctx: Ctx, f: WatchFlags): Promise<void> {
  if ((f.maildir === undefined) === (f.imap === undefined)) throw new UsageError('give one mailbox: --maildir DIR or --imap URL');
  const interval = f.interval === undefined ? 60 : Number(f.interval);
  if (!Number.isFinite(interval) || interval < 1 || interval > 86_400) throw new UsageError(`--interval must be a number of seconds from 1 to 86400 (got "${f.interval}")`);
  let attachmentMaxBytes: number;
  try {
    attachmentMaxBytes = receivedMaxBytes(ctx.io.env);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const rules = await loadRules(ctx, f.rules);
  const { mailboxPass } = await import('../../service/mailbox/watch.js');
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  if (!f.once) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  const totals = { imported: 0, 'set-aside': 0, retry: 0 };
  let source: MailSource | undefined;
  try {
    await withBuyer(
      ctx,
      async (r) => {
        const sink = sinkOf(r);
        for (;;) {
          try {
            source ??= await openSource(ctx, f);
            const pass = await mailboxPass(source, sink, rules, {
              attachmentMaxBytes,
              signal: stop.signal,
              onMail: (m) => {
                totals[m.outcome]++;
                printMail(ctx, m, Boolean(f.json));
              },
            });
            if (f.once) return pass;
          } catch (e) {
            if (f.once || (e instanceof UserError && e.exitCode === EXIT.usage)) throw e;
            // The next pass opens the mailbox again.
            const { imapErrorText } = await import('../../service/mailbox/imap.js');
            writeLine(ctx.io.stderr, safeText(`warning: the pass failed: ${imapErrorText(e)}; trying again in ${interval} s`));
            await source?.close().catch(() => undefined);
            source = undefined;
          }
          if (stop.signal.aborted) return;
          await new Promise<void>((resolve) => {
            const wake = () => (clearTimeout(t), resolve());
            const t = setTimeout(() => (stop.signal.removeEventListener('abort', wake), resolve()), interval * 1000);
            stop.signal.addEventListener('abort', wake, { once: true });
          });
          if (stop.signal.aborted) return;
        }
      },
      { bulk: true },
    );
  } catch (e) {
    if (e instanceof UserError || e instanceof SilentExit) throw e;
    const { imapErrorText } = await import('../../service/mailbox/imap.js');
    throw new UserError(safeText(`the mailbox pass failed: ${imapErrorText(e)}`));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await source?.close().catch(() => undefined);
  }
  if (!f.json) writeLine(ctx.io.stderr, `${totals.imported + totals['set-aside'] + totals.retry} mails: ${totals.imported} imported, ${totals['set-aside']} set aside, ${totals.retry} left in the inbox for the next pass`);
}
