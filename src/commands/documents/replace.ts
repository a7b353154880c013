/**
 * `fecr documents replace CLAVE FILE.json` (issue 30): the corrected document that replaces one Hacienda rejected,
 * with CodigoReferencia 16 / TipoDocIR 10 naming it (core/corrections/replace.ts), under a new number; sent as
 * `fecr send` sends a body.
 */
import type { Ctx } from '../../cli/context.js';
import { encodingFlag, readJson } from '../../cli/io.js';
import { completedInput } from '../../core/input/complete.js';
import { checkSendFlags, submitAndReport, type SendFlags } from '../send/run.js';
import { checkClave, correctionsOf } from './shared.js';

export interface ReplaceFlags extends Pick<SendFlags, 'wait' | 'timeout' | 'strict' | 'json' | 'quiet' | 'encoding'> {
  reason?: string;
}

export async function replace(ctx: Ctx, claveArg: string, file: string, opts: ReplaceFlags): Promise<void> {
  const clave = checkClave(claveArg);
  checkSendFlags(opts);
  // As `fecr send`: the figures the body leaves out are computed here (core/input/complete.ts).
  const body = completedInput(await readJson(ctx.io, file, { encoding: encodingFlag(opts.encoding), encodingFlag: true }));
  await submitAndReport(ctx, opts, (b) => correctionsOf(b).replace(clave, body, opts.reason !== undefined ? { razon: opts.reason } : {}));
}
