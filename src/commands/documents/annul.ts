/**
 * `fecr documents annul CLAVE [--reason TEXT]` (issue 30): the nota de crédito that annuls an accepted comprobante in
 * full (service/corrections.ts, core/corrections/annul.ts), signed and sent as `fecr send` sends a body.
 */
import type { Ctx } from '../../cli/context.js';
import { submitAndReport, type SendFlags } from '../send/run.js';
import { checkClave, correctionsOf } from './shared.js';

export interface AnnulFlags extends Pick<SendFlags, 'wait' | 'timeout' | 'strict' | 'json' | 'quiet'> {
  reason?: string;
}

export async function annul(ctx: Ctx, claveArg: string, opts: AnnulFlags): Promise<void> {
  const clave = checkClave(claveArg);
  await submitAndReport(ctx, opts, (b) => correctionsOf(b).annul(clave, opts.reason !== undefined ? { razon: opts.reason } : {}));
}
