/**
 * `fecr contingency send`: once Hacienda answers again, send what the outage left queued now, not at the queue's next
 * retry: every document signed that Hacienda has not received yet, whatever its situación (the `contingencia` setting
 * only decides that digit), every one signed in situación 2 or 3 (and every provisional comprobante's replacement) not
 * decided yet, each followed to Hacienda's verdict or --timeout. The queue sends each once (a GET before any second POST:
 * docs/faults.md). Then prints what is still owed, as `fecr contingency status` does. Exit 0 when nothing pending is
 * left, 8 when some are still undecided, 3 when Hacienda rejected one.
 */
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import type { DocumentStatus } from '../../client/backend.js';
import { FINAL_STATES, HELD_STATES } from '../../core/lifecycle.js';
import { withBackend } from '../backend.js';
import { heldLine, issuerOfClave, timeoutMs } from '../documents/shared.js';
import { safeText } from '../../cli/safe-text.js';
import { contingencyOf } from './shared.js';

export interface SendFlags {
  timeout?: string;
  json?: boolean;
}

/** Documents followed at once (each waits on one shared watch in local mode). */
const AT_ONCE = 32;

/** How long the first look at Hacienda may take before anything is followed (local mode: one GET each at reception and the IdP). */
const PROBE_MS = 5_000;

export async function run(ctx: Ctx, f: SendFlags): Promise<void> {
  const timeout = timeoutMs(f.timeout);
  const done = await withBackend(ctx, async (b) => {
    const api = contingencyOf(b);
    const owed = await api.owed();
    // Held for the issuer's refused credentials: not sent until they change (service/issuers.ts releases them), said
    // here rather than skipped in silence (issue 36).
    const held = owed.documentos.filter((d) => (HELD_STATES as readonly string[]).includes(d.estado));
    for (const issuer of new Set(held.map((d) => issuerOfClave(d.clave)))) {
      info(ctx, `warning: ${heldLine(issuer, { count: held.filter((d) => issuerOfClave(d.clave) === issuer).length })}`);
    }
    const undecided = (estado: string | null) => estado !== null && !(FINAL_STATES as readonly string[]).includes(estado) && !(HELD_STATES as readonly string[]).includes(estado);
    const claves = [
      ...owed.documentos.filter((d) => undecided(d.estado)).map((d) => d.clave),
      ...owed.provisionales.flatMap((p) => (p.reemplazo && undecided(p.reemplazo.estado) ? [p.reemplazo.clave] : [])),
    ];
    // Local mode: Hacienda still down → say so at once, rather than wait out --timeout on every document (issue 36).
    if (claves.length > 0 && api.reachable) {
      const r = await api.reachable(PROBE_MS);
      if (!r.ok) {
        info(ctx, safeText(`error: Hacienda still cannot be reached (${r.cause}): ${claves.length} document${claves.length === 1 ? ' stays' : 's stay'} owed, none sent; run fecr contingency send again once it answers (fecr doctor checks it)`));
        throw new SilentExit(EXIT.pending);
      }
    }
    const out: DocumentStatus[] = [];
    for (let i = 0; i < claves.length; i += AT_ONCE) {
      out.push(...(await Promise.all(claves.slice(i, i + AT_ONCE).map((c) => b.waitForVerdict(c, { timeoutMs: timeout })))));
    }
    return out;
  });
  const count = (estado: string) => done.filter((s) => s.estado === estado).length;
  const pending = done.filter((s) => !(FINAL_STATES as readonly string[]).includes(s.estado)).length;
  if (f.json) printJson(ctx, done.map((s) => ({ clave: s.clave, estado: s.estado })));
  else for (const s of done) writeLine(ctx.io.stdout, `${s.clave}\t${s.estado}`);
  info(ctx, `${done.length} sent or followed: ${count('aceptado')} aceptado, ${count('rechazado')} rechazado, ${count('error')} error, ${pending} not decided yet`);
  if (count('rechazado') + count('error') > 0) throw new SilentExit(EXIT.rejected);
  if (pending > 0) throw new SilentExit(EXIT.pending);
}
