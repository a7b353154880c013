/**
 * `fecr documents payment CLAVE --amount X [--date D] [--medio 04]` (issue 30): the recibo electrónico de pago of a
 * payment received against an accepted credit sale (core/corrections/payment.ts); an overpayment is refused. Sent as
 * `fecr send` sends a body; `fecr status CLAVE` then shows the balance left.
 */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { submitAndReport, type SendFlags } from '../send/run.js';
import { checkClave, correctionsOf } from './shared.js';

export interface PaymentFlags extends Pick<SendFlags, 'wait' | 'timeout' | 'strict' | 'json' | 'quiet'> {
  amount?: string;
  date?: string;
  medio?: string;
}

export async function payment(ctx: Ctx, claveArg: string, opts: PaymentFlags): Promise<void> {
  const clave = checkClave(claveArg);
  const amount = opts.amount?.trim();
  if (!amount || !/^\d{1,13}(\.\d{1,5})?$/.test(amount) || Number(amount) <= 0) throw new UsageError('--amount must be the amount received, greater than 0, with a point for decimals and no thousands separator, e.g. --amount 56500.00');
  // --medio: commander checks its choices (Nota 6; 99 "otros" needs a MedioPagoOtros text a body gives: fecr send).
  const medioPago = opts.medio;
  await submitAndReport(ctx, opts, (b) =>
    correctionsOf(b).payment(clave, { monto: amount, ...(opts.date !== undefined ? { fecha: opts.date } : {}), ...(medioPago ? { medioPago } : {}) }),
  );
}
