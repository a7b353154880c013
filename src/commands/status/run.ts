import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { withBackend } from '../backend.js';
import { checkClave, ERRORES_HEADER, erroresOf, erroresRows, mailLine, printDetalle, printStatusTable, timeoutMs } from '../documents/shared.js';
import { renderTable } from '../../cli/table.js';
import { writeLine } from '../../cli/io.js';
import { info } from '../../cli/output.js';
import { startSpinner } from '../documents/spinner.js';
import { report } from '../send/run.js';
import type { Backend } from '../../client/backend.js';
import type { DocumentLinks } from '../../client/corrections.js';
import { CODIGOS_REFERENCIA } from '../../core/codes.js';

export interface StatusFlags {
  watch?: boolean;
  timeout?: string;
  json?: boolean;
}

export async function run(ctx: Ctx, claveArg: string, opts: StatusFlags): Promise<void> {
  const clave = checkClave(claveArg);
  if (!opts.watch && opts.timeout !== undefined) throw new UsageError('--timeout needs --watch');
  const timeout = timeoutMs(opts.timeout);
  let mode: 'local' | 'remote' = 'local';
  let cause: string | null = null;
  let links: DocumentLinks | null = null;
  const s = await withBackend(ctx, async (b) => {
    // Who references it (notes, replacements, payments: issue 30), and a sale's balance; a service without them says nothing.
    const linked = async <T>(st: T): Promise<T> => ((links = st ? await linksOf(b, clave) : null), st);
    mode = b.mode;
    const unsent = async (st: Awaited<ReturnType<typeof b.status>>) => ((cause = st?.estado === 'pendiente' ? ((await b.unsentCause?.(clave)) ?? null) : null), st);
    if (!opts.watch) return linked(await unsent(await b.status(clave)));
    const first = await b.status(clave);
    if (!first) return null;
    const spinner = startSpinner(ctx, `${clave}: ${first.estado}`);
    try {
      return linked(await unsent(await b.waitForVerdict(clave, { timeoutMs: timeout, onProgress: (st) => spinner.text(`${clave}: ${st.estado}`) })));
    } finally {
      spinner.stop();
    }
  });
  if (!s) throw new UserError(`no document with clave ${clave}`);
  const errores = erroresOf(s);
  const l = links as DocumentLinks | null;
  // Only when something references it: a comprobante nothing references shows as it always did.
  const shown =
    l && l.referenciadoPor.length > 0
      ? {
          referenciadoPor: l.referenciadoPor,
          ...(l.saldo !== undefined ? { saldo: l.saldo, saldoPendiente: l.saldoPendiente } : {}),
          ...(l.reemplazadoPor ? { reemplazadoPor: l.reemplazadoPor } : {}),
          ...(l.anuladoPor ? { anuladoPor: l.anuladoPor } : {}),
        }
      : {};
  // Not received by Hacienda yet: owed (issue 36), said after report's line, and how to send it.
  const owed = s.estado === 'pendiente' ? OWED_LINE : undefined;
  await report(ctx, { ...s, ...shown }, {
    json: opts.json,
    mode,
    cause,
    listed: !opts.json && errores.length > 0,
    table: (st) => {
      printStatusTable(ctx, [st]);
      // Hacienda's list as a table of its own; DetalleMensaje as written when it lists nothing (its opening, a reason).
      if (errores.length > 0) writeLine(ctx.io.stdout, `\n${renderTable(ctx, ERRORES_HEADER, erroresRows(errores))}`);
      else printDetalle(ctx, st);
      const mail = mailLine(st.correo);
      if (mail) writeLine(ctx.io.stdout, mail);
      if (l) printLinks(ctx, l, st.estado);
    },
  }).catch((e: unknown) => {
    if (owed) info(ctx, owed);
    throw e;
  });
}

/** What `fecr status` adds for a document Hacienda has not received yet. */
export const OWED_LINE = '  owed to Hacienda (not received yet): fecr contingency send sends it once Hacienda answers; fecr contingency status lists everything owed';

/**
 * The documents that reference this one (issue 30), what replaced or annulled it (issue 36), then a sale's balance
 * when anything references it (0 for one Hacienda rejected: said so).
 */
function printLinks(ctx: Ctx, l: DocumentLinks, estado: string): void {
  if (l.referenciadoPor.length === 0) return;
  const rows = l.referenciadoPor.map((r) => [r.tipo, r.clave, r.estado, r.codigoReferencia ? `${r.codigoReferencia} ${CODIGOS_REFERENCIA[r.codigoReferencia] ?? ''}`.trim() : '', r.monto ?? '']);
  writeLine(ctx.io.stdout, `\nreferenced by:\n${renderTable(ctx, ['tipo', 'clave', 'estado', 'codigoReferencia', 'monto'], rows)}`);
  if (l.reemplazadoPor) writeLine(ctx.io.stdout, `replaced by: ${l.reemplazadoPor.clave} (${l.reemplazadoPor.estado})`);
  if (l.anuladoPor) writeLine(ctx.io.stdout, `annulled by: ${l.anuladoPor.clave} (${l.anuladoPor.estado})`);
  if (l.saldo === undefined) return;
  const dead = estado === 'rechazado' || estado === 'error';
  const pending = dead ? ` (${estado === 'rechazado' ? 'rejected by Hacienda' : 'ended in error'}: nothing is owed on it)` : l.saldoPendiente !== undefined && l.saldoPendiente !== l.saldo ? ` (${l.saldoPendiente} counting the documents Hacienda has not decided on yet)` : '';
  writeLine(ctx.io.stdout, `saldo: ${l.saldo}${l.moneda ? ` ${l.moneda}` : ''}${pending}`);
}

/** The documents that reference `clave` and its balance; null when the backend cannot say (the status stands alone). */
async function linksOf(b: Backend, clave: string): Promise<DocumentLinks | null> {
  try {
    // Awaited as it comes: a backend that answers the sub-API with a rejected promise (a stand-in) is handled here too.
    const api = b.corrections ? await b.corrections() : undefined;
    return api && typeof api.links === 'function' ? await api.links(clave) : null;
  } catch {
    return null;
  }
}
