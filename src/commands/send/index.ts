/** `fecr send FILE.json|-`: sign a document, send it to Hacienda, print its clave (and with --wait, the verdict). */
import { Option, type Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import { ENCODING_HELP } from '../../cli/io.js';
import type { SendFlags } from './run.js';

export function defineSendCommand(program: Command, ctx: Ctx): void {
  program
    .command('send')
    .description('sign a document body and send it to Hacienda; prints its clave')
    .argument('<body>', 'document body JSON file, or - for stdin')
    .option('--wait', "wait for Hacienda's verdict: exit 0 aceptado, 3 rechazado, 8 still pending at --timeout")
    .option('--timeout <seconds>', 'with --wait: how long to wait (default 60)')
    .option('--strict', 'with --wait: also exit 3 when DetalleMensaje lists errors under "aceptado"')
    .option('--cc <address...>', "also mail the accepted comprobante to these addresses (added to the body's correosAdicionales)")
    .addOption(new Option('--situacion <n>', "the clave's situación: 1 normal, 2 contingencia (replaces a provisional comprobante), 3 sin internet").choices(['1', '2', '3']))
    .option('--new', 'issue another document even if this body (without numeroReferencia) was sent in the last 24 h; without it, that document is answered ("already sent as CLAVE")')
    .option('--force', 'sign and send even what Hacienda is known to reject (the findings fecr validate reports with Hacienda\'s code, e.g. -400 an unknown CABYS code); without it such a body is refused before a number is used')
    .option('--encoding <name>', ENCODING_HELP)
    .option('--json', 'print as JSON')
    .option('-q, --quiet', 'print the clave alone (with --wait the verdict is the exit code): CLAVE=$(fecr send doc.json --wait --quiet)')
    .action(async (body: string, opts: SendFlags) => (await import('./run.js')).run(ctx, body, opts));
}
