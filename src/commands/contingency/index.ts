/** `fecr contingency …` (issue 30): provisional comprobantes of an outage, their replacement, and what is owed. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import { ENCODING_HELP } from '../../cli/io.js';
import type { RecordFlags } from './record.js';
import type { ReplaceFlags } from './replace.js';
import type { SendFlags } from './send.js';
import type { StatusFlags } from './status.js';

export function defineContingencyCommands(program: Command, ctx: Ctx): void {
  const c = program
    .command('contingency')
    .description('outages: provisional (paper) comprobantes and their electronic replacement, and what is still owed to Hacienda')
    .addHelpText(
      'after',
      '\nProfile keys (local mode): contingencia auto signs in situación 3 (sin internet) when Hacienda cannot be reached;' +
        '\ncontingenciaPlazoHoras (default 48) is the term status warns about. fecr send and fecr batch take --situacion 1|2|3.',
    );
  c.command('record')
    .description('register provisional comprobantes issued during an outage (their own numbering): flags, or --file with one object or a list')
    .option('--file <file>', 'JSON: {numero, fechaEmision, emisor, receptor?, totalComprobante, codigoMoneda?, kind?} or a list of them')
    .option('--numero <numero>', "the provisional comprobante's own number (up to 50 characters)")
    .option('--fecha <date>', 'its date: ISO 8601 date or date-time (Costa Rica time without an offset)')
    .option('--emisor <identificacion>', 'the issuer (registered in this profile)')
    .option('--receptor <text>', 'the buyer: name or identificación (optional)')
    .option('--total <amount>', 'its totalComprobante')
    .option('--moneda <code>', 'its currency (default CRC)')
    .option('--kind <kind>', 'what it stands for: FE (default), TE, NC, ND, FEE, FEC')
    .option('--json', 'print as JSON')
    .action(async (opts: RecordFlags) => (await import('./record.js')).run(ctx, opts));
  c.command('replace')
    .description('send the electronic document that replaces provisional comprobante ID (situación 2, CodigoReferencia 05, TipoDocIR 08) and mark it')
    .argument('<id>', 'the provisional comprobante (fecr contingency status lists them)')
    .argument('<body>', 'document body JSON file, or - for stdin')
    .option('--wait', "wait for Hacienda's verdict: exit 0 aceptado, 3 rechazado, 8 still pending at --timeout")
    .option('--timeout <seconds>', 'with --wait: how long to wait (default 60)')
    .option('--encoding <name>', ENCODING_HELP)
    .option('--json', 'print as JSON')
    .action(async (id: string, body: string, opts: ReplaceFlags) => (await import('./replace.js')).run(ctx, id, body, opts));
  c.command('send')
    .description('Hacienda answers again: send what the outage left queued now (every document not received yet, whatever the contingencia setting) and wait for each verdict (exit 0 all aceptado, 3 rechazado, 8 still pending)')
    .option('--timeout <seconds>', 'how long to wait for each verdict (default 60)')
    .option('--json', 'print as JSON')
    .action(async (opts: SendFlags) => (await import('./send.js')).run(ctx, opts));
  c.command('status')
    .description('what is still owed, oldest first, since when and how old: documents Hacienda has not received yet (any situación), provisional comprobantes not replaced, contingency documents not accepted')
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (opts: StatusFlags) => (await import('./status.js')).run(ctx, opts));
}
