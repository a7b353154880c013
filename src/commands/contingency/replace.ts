/**
 * `fecr contingency replace ID FILE.json`: the electronic document that replaces provisional comprobante ID, sent in
 * situación 2 with the reference to it (CodigoReferencia 05, TipoDocIR 08: core/contingency.ts), then marked. Run
 * again (a crash between the two), it finds the same document (its submission key) instead of sending a second one.
 */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { encodingFlag, readJson } from '../../cli/io.js';
import { info } from '../../cli/output.js';
import { BackendError } from '../../client/backend.js';
import { replacementBody } from '../../core/contingency.js';
import { completedInput } from '../../core/input/complete.js';
import { dec } from '../../core/money.js';
import { withBackend } from '../backend.js';
import { report, type SendFlags } from '../send/run.js';
import { timeoutMs } from '../documents/shared.js';
import { contingencyOf } from './shared.js';

export type ReplaceFlags = Pick<SendFlags, 'wait' | 'timeout' | 'json' | 'encoding'>;

export async function run(ctx: Ctx, id: string, file: string, f: ReplaceFlags): Promise<void> {
  if (!/^[1-9]\d{0,15}$/.test(id)) throw new UsageError(`"${id}" is not a provisional comprobante's id (fecr contingency status lists them)`);
  if (!f.wait && f.timeout !== undefined) throw new UsageError('--timeout needs --wait');
  const timeout = timeoutMs(f.timeout);
  const read = await readJson(ctx.io, file, { encoding: encodingFlag(f.encoding), encodingFlag: true });
  let mode: 'local' | 'remote' = 'local';
  const final = await withBackend(ctx, async (b) => {
    mode = b.mode;
    const api = contingencyOf(b);
    const p = await api.provisional(Number(id));
    if (p.reemplazo && p.reemplazo.estado !== 'rechazado' && p.reemplazo.estado !== 'error') {
      throw new BackendError('invalid', `provisional ${id} is replaced already by ${p.reemplazo.clave} (${p.reemplazo.estado ?? 'unknown'})`);
    }
    const r = replacementBody(read, p);
    if (!r.ok) throw new BackendError('invalid', `document cannot replace provisional ${id}`, r.findings);
    const body = completedInput(r.body) as { resumenFactura?: { totalComprobante?: unknown } };
    const total = body.resumenFactura?.totalComprobante;
    if (total !== undefined && !dec(String(total)).eq(dec(p.totalComprobante))) {
      info(ctx, `warning: the document's totalComprobante ${String(total)} is not the provisional comprobante's ${p.totalComprobante}`);
    }
    // One document per provisional (and per rejected replacement before it), whatever happens to this process.
    const { clave } = await b.submit(body, { submissionKey: `contingencia:${p.id}:${p.reemplazo?.clave ?? 'first'}` });
    await api.markReplaced(p.id, clave);
    info(ctx, `provisional ${id} replaced by ${clave} (situación 2, CodigoReferencia 05, TipoDocIR 08)`);
    if (!f.wait) {
      if (f.json) ctx.io.stdout.write(`${JSON.stringify({ id: p.id, clave })}\n`);
      else ctx.io.stdout.write(`${clave}\n`);
      return undefined;
    }
    if (!f.json) ctx.io.stdout.write(`${clave}\n`);
    return b.waitForVerdict(clave, { timeoutMs: timeout });
  });
  if (final) await report(ctx, final, { json: f.json, mode });
}
