import type { Ctx } from '../../cli/context.js';
import { completedInput } from '../../core/input/complete.js';
import { EXIT, SilentExit, UsageError } from '../../cli/errors.js';
import { encodingFlag, readJson, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import type { Backend, DocumentStatus, SubmitOutcome } from '../../client/backend.js';
import { withBackend } from '../backend.js';
import { erroresLines, erroresOf, heldLine, issuerOfClave, pendingLine, printDetalle, timeoutMs, verdictExit } from '../documents/shared.js';
import { CREDENTIALS_REFUSED, FINAL_STATES } from '../../core/lifecycle.js';
import { startSpinner } from '../documents/spinner.js';
import { certificateWarnings, printCertificateWarnings } from '../emisor/cert-warning.js';
import { sendingBackend } from '../contingency/shared.js';
import { sendKeyOf } from '../../client/send-key.js';

export interface SendFlags {
  wait?: boolean;
  timeout?: string;
  strict?: boolean;
  json?: boolean;
  quiet?: boolean;
  /** More addresses for the receptor's mail (added to the body's correosAdicionales). */
  cc?: string[];
  encoding?: string;
  /** The clave's situación (issue 30); the profile's `contingencia: auto` applies when it is not given. */
  situacion?: string;
  /** `send`: issue another document on purpose, even for a body sent within 24 h (no idempotency key of the body). */
  new?: boolean;
  /** Sign and send even what Hacienda is known to reject (validate's findings with Hacienda's code; issue 36). */
  force?: boolean;
}

export async function run(ctx: Ctx, file: string, opts: SendFlags): Promise<void> {
  checkSendFlags(opts);
  // The figures the body leaves out are computed here, for either backend (core/input/complete.ts).
  const body = completedInput(withCc(await readJson(ctx.io, file, { encoding: encodingFlag(opts.encoding), encodingFlag: true }), opts.cc));
  // A body without numeroReferencia is keyed on its issuer and content (issue 36): sent again, the document it made.
  const key = opts.new ? undefined : sendKeyOf(body, opts.situacion);
  await submitAndReport(ctx, opts, (b) => b.submit(body, { ...(key ? { idempotencyKey: key } : {}), ...(opts.force ? { force: true } : {}) }));
}

/** The flags of `send` (and of the verbs that send as it does: documents annul, replace, payment) that go together. */
export function checkSendFlags(opts: SendFlags): void {
  if (!opts.wait && (opts.timeout !== undefined || opts.strict)) throw new UsageError(`${opts.strict ? '--strict' : '--timeout'} needs --wait`);
  if (opts.quiet && opts.json) throw new UsageError('--quiet prints the clave alone: it cannot be combined with --json');
  timeoutMs(opts.timeout);
}

/**
 * `fecr send` after the body is read: `submit` signs and queues one document through the backend; then its clave (and
 * with --wait the verdict) is printed and the exit code set, the same for every verb that sends a document.
 */
export async function submitAndReport(ctx: Ctx, opts: SendFlags, submit: (b: Backend) => Promise<SubmitOutcome>): Promise<void> {
  checkSendFlags(opts);
  const timeout = timeoutMs(opts.timeout);
  let mode: 'local' | 'remote' = 'local';
  // Local mode: why a document is not sent yet (the cause in words, hacienda/client/describe.ts), without --debug.
  let cause: string | null = null;
  let numbering: { numeroReferencia?: number; alreadySent?: boolean } = {};
  const final = await withBackend(ctx, async (backend) => {
    const b = await sendingBackend(ctx, backend, opts.situacion);
    mode = b.mode;
    const unsent = async (s: DocumentStatus) => ((cause = s.estado === 'pendiente' ? ((await b.unsentCause?.(s.clave)) ?? null) : null), s);
    const { clave, estado, alreadySent, assigned } = await submit(b);
    // From 30 days before the issuer's certificate ends: one warning line (core/sign/cert-expiry.ts).
    printCertificateWarnings(ctx, await certificateWarnings(ctx, b, [issuerOfClave(clave) ?? '']));
    // The same body sent before (same numeroReferencia, same canonical JSON): its clave, nothing new (exit 0).
    if (alreadySent && !opts.json) info(ctx, `already sent as ${clave}`);
    else if (assigned !== undefined && !opts.json && !opts.quiet) info(ctx, `numeroReferencia ${assigned} (the next free number)`);
    // Every --json carries the document's number: the one fecr took, else the body's (the clave's 32nd to 41st digits).
    const n = assigned ?? (/^\d{50}$/.test(clave) ? Number(clave.slice(31, 41)) : undefined);
    numbering = { ...(n !== undefined ? { numeroReferencia: n } : {}), ...(alreadySent ? { alreadySent: true } : {}) };
    if (!opts.wait) {
      // A document sent before exits as its state: a verdict already given against it is said (rechazado 3, error 1).
      const before = alreadySent && !estado ? await b.status(clave) : null;
      const decided = before && FINAL_STATES.includes(before.estado) && verdictExit(before) !== EXIT.ok ? before : null;
      if (opts.json) printJson(ctx, estado || decided ? { clave, estado: estado ?? decided!.estado, ...numbering } : { clave, ...numbering });
      else writeLine(ctx.io.stdout, clave);
      if (decided) await report(ctx, decided, { mode, table: () => {} });
      if (estado === CREDENTIALS_REFUSED) {
        info(ctx, `error: ${heldLine(issuerOfClave(clave), { clave })}`);
        throw new SilentExit(EXIT.auth);
      }
      cause = (await b.unsentCause?.(clave)) ?? null;
      if (cause) info(ctx, `warning: ${safeText(pendingLine({ clave, estado: 'pendiente' }, mode, cause))}`);
      return undefined;
    }
    // The clave first, so it is known even if the wait is interrupted.
    if (!opts.json) writeLine(ctx.io.stdout, clave);
    if (opts.quiet) return unsent(await b.waitForVerdict(clave, { timeoutMs: timeout }));
    const spinner = startSpinner(ctx, `waiting for Hacienda's verdict on ${clave}`);
    try {
      return unsent(await b.waitForVerdict(clave, { timeoutMs: timeout, onProgress: (s) => spinner.text(`waiting for Hacienda's verdict: ${s.estado}`) }));
    } finally {
      spinner.stop();
    }
    // With --wait the verdict, and then the receptor's mail, come in this command.
  }, { sending: opts.wait === true });
  if (final) await report(ctx, final, { json: opts.json, strict: opts.strict, mode, cause, numbering, ...(opts.quiet ? { table: () => {} } : {}) });
}

/** Prints a verdict (or the state reached) and ends with its exit code (--strict: errors under aceptado → 3). */
export async function report(
  ctx: Ctx,
  s: DocumentStatus,
  o: { json?: boolean; strict?: boolean; table?: (s: DocumentStatus) => void; mode?: 'local' | 'remote'; listed?: boolean; cause?: string | null; numbering?: { numeroReferencia?: number; alreadySent?: boolean } },
): Promise<void> {
  const strictErrors = o.strict && s.estado === 'aceptado' ? erroresOf(s).length : 0;
  // A send's --json carries what its --json without --wait does: numeroReferencia, and alreadySent.
  if (o.json) printJson(ctx, { ...s, ...o.numbering, ...(o.strict ? { strictErrors } : {}) });
  else if (o.table) o.table(s);
  else {
    writeLine(ctx.io.stdout, s.estado);
    printDetalle(ctx, s);
  }
  if (strictErrors > 0) {
    info(ctx, `error: ${s.clave} aceptado, but DetalleMensaje lists ${strictErrors} error${strictErrors === 1 ? '' : 's'} (--strict)`);
    throw new SilentExit(EXIT.rejected);
  }
  const code = verdictExit(s);
  if (code === EXIT.ok) return;
  if (s.estado === CREDENTIALS_REFUSED) info(ctx, `error: ${heldLine(issuerOfClave(s.clave), { clave: s.clave })}`);
  else if (s.estado === 'rechazado') {
    info(ctx, `error: Hacienda rejected ${s.clave}`);
    // Hacienda's reasons, one line each (unless the table on stdout just listed them).
    if (!o.listed) for (const line of erroresLines(s)) info(ctx, `  ${line}`);
  }
  // Hacienda's DetalleMensaje (and a remote service's clave and state) through the sanitiser.
  else if (s.estado === 'error') info(ctx, `error: ${safeText(`${s.clave}: ${firstLine(s.detalleMensaje) ?? 'Hacienda answered with an error'}`)}`);
  else info(ctx, `error: ${safeText(pendingLine(s, o.mode, o.cause))}`);
  throw new SilentExit(code);
}

/** `--cc a@x.cr --cc b@y.cr` (or comma-separated): appended to the body's correosAdicionales (checked there, with findings). */
function withCc(body: unknown, cc: string[] | undefined): unknown {
  const extra = (cc ?? []).flatMap((a) => a.split(',')).map((a) => a.trim()).filter((a) => a !== '');
  if (extra.length === 0 || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const b = body as Record<string, unknown>;
  const had = Array.isArray(b.correosAdicionales) ? b.correosAdicionales : [];
  return { ...b, correosAdicionales: [...had, ...extra] };
}

function firstLine(text: string | null): string | undefined {
  return text?.split(/\r?\n/).find((l) => l.trim() !== '')?.trim();
}
