import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { withBackend } from '../backend.js';
import { checkClave, ERRORES_HEADER, erroresOf, erroresRows, mailLine, printDetalle, printStatusTable, timeoutMs } from '../documents/shared.js';
import { renderTable } from '../../cli/table.js';
import { writeLine } from '../../cli/io.js';
import { startSpinner } from '../documents/spinner.js';
import { report } from '../send/run.js';

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
  const s = await withBackend(ctx, async (b) => {
    mode = b.mode;
    const unsent = async (st: Awaited<ReturnType<typeof b.status>>) => ((cause = st?.estado === 'pendiente' ? ((await b.unsentCause?.(clave)) ?? null) : null), st);
    if (!opts.watch) return unsent(await b.status(clave));
    const first = await b.status(clave);
    if (!first) return null;
    const spinner = startSpinner(ctx, `${clave}: ${first.estado}`);
    try {
      return unsent(await b.waitForVerdict(clave, { timeoutMs: timeout, onProgress: (st) => spinner.text(`${clave}: ${st.estado}`) }));
    } finally {
      spinner.stop();
    }
  });
  if (!s) throw new UserError(`no document with clave ${clave}`);
  const errores = erroresOf(s);
  await report(ctx, s, {
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
    },
  });
}
