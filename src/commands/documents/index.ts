/**
 * `fecr documents list`: the documents of the profile's account, newest first; `fecr documents email`: mail one again;
 * `fecr documents annul|replace|payment` (issue 30): the NC that annuls a comprobante, the replacement of a rejected
 * one, the REP of a payment received — each sent as `fecr send` sends a body, with its --wait.
 */
import { Option, type Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import { ENCODING_HELP } from '../../cli/io.js';
import type { EmailFlags } from './email.js';
import type { ListFlags } from './list.js';
import type { AnnulFlags } from './annul.js';
import type { PaymentFlags } from './payment.js';
import type { ReplaceFlags } from './replace.js';

/** The options every verb that sends a document shares with `fecr send`. */
function sendOptions(cmd: Command): Command {
  return cmd
    .option('--wait', "wait for Hacienda's verdict: exit 0 aceptado, 3 rechazado, 8 still pending at --timeout")
    .option('--timeout <seconds>', 'with --wait: how long to wait (default 60)')
    .option('--strict', 'with --wait: also exit 3 when DetalleMensaje lists errors under "aceptado"')
    .option('--json', 'print as JSON')
    .option('-q, --quiet', 'print the clave alone (with --wait the verdict is the exit code)');
}

export function defineDocumentsCommands(program: Command, ctx: Ctx): void {
  const documents = program.command('documents').description('documents sent from this profile');
  documents
    .command('list')
    .description('list documents, newest first')
    .option('--state <state>', 'only this state: pendiente, credenciales_invalidas, enviado, recibido, procesando, aceptado, rechazado or error')
    .option('--since <date>', 'only documents created at or after this ISO 8601 date or date-time (dates in Costa Rica time)')
    .option('--issuer <identificacion>', "only this issuer's documents (its identificación)")
    .option('--limit <n>', 'at most this many (default 100, at most 1000)')
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (opts: ListFlags) => (await import('./list.js')).list(ctx, opts));
  documents
    .command('email')
    .description("mail an accepted document to its receptor again (its XML, PDF and Hacienda's answer attached)")
    .argument('<clave>', 'the 50-character clave')
    .option('--to <address...>', "send to these addresses instead of the document's recipients")
    .option('--json', 'print as JSON')
    .action(async (clave: string, opts: EmailFlags) => (await import('./email.js')).email(ctx, clave, opts));
  sendOptions(
    documents
      .command('annul')
      .description('send the nota de crédito that annuls an accepted comprobante in full (code 01); prints its clave')
      .argument('<clave>', 'the clave of the comprobante to annul (an FE, TE or ND Hacienda accepted)')
      .option('--reason <text>', 'the Razon of the reference (3-180 characters; default "Anula documento de referencia")'),
  ).action(async (clave: string, opts: AnnulFlags) => (await import('./annul.js')).annul(ctx, clave, opts));
  sendOptions(
    documents
      .command('replace')
      .description('send the corrected document that replaces one Hacienda rejected (code 16, TipoDocIR 10), under a new number')
      .argument('<clave>', 'the clave of the rejected comprobante')
      .argument('<body>', 'the corrected document body JSON file, or - for stdin')
      .option('--reason <text>', 'the Razon of the reference (default "Sustituye comprobante electrónico rechazado")')
      .option('--encoding <name>', ENCODING_HELP),
  ).action(async (clave: string, body: string, opts: ReplaceFlags) => (await import('./replace.js')).replace(ctx, clave, body, opts));
  sendOptions(
    documents
      .command('payment')
      .description('send the recibo electrónico de pago (REP) of a payment received against a credit sale; prints its clave')
      .argument('<clave>', 'the clave of the sale (condicionVenta 08 or 10) Hacienda accepted')
      .requiredOption('--amount <amount>', 'the amount received, IVA included, in the sale\'s currency (e.g. 56500.00)')
      .option('--date <date>', "the payment's date, YYYY-MM-DD or an ISO 8601 date-time (default now): the REP's FechaEmision")
      .addOption(new Option('--medio <code>', 'TipoMedioPago (Nota 6): 01 efectivo, 02 tarjeta, 03 cheque, 04 transferencia (default), 06 SINPE MÓVIL, 07 plataforma digital').choices(['01', '02', '03', '04', '05', '06', '07'])),
  ).action(async (clave: string, opts: PaymentFlags) => (await import('./payment.js')).payment(ctx, clave, opts));
}
