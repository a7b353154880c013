/** Hacienda's public queries: `fecr cabys TEXT…`, `fecr contribuyente ID`, `fecr exoneracion NUMERO`. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { LookupFlags } from './flags.js';
import { defineTipoCambioCommand } from '../tipo-cambio/index.js';

export function defineLookupCommands(program: Command, ctx: Ctx): void {
  program
    .command('cabys')
    .description('search the CABYS catalogue (codes of goods and services) and show the IVA rate of each')
    .argument('<text...>', 'words of the description, e.g. cafe molido')
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (words: string[], opts: LookupFlags) => (await import('./cabys.js')).cabys(ctx, words, opts));
  program
    .command('contribuyente')
    .description("a taxpayer in Hacienda's registry: name, type of identificación, régimen, estado and economic activities")
    .argument('<id>', 'identificación (cédula), digits only or with dashes')
    .option('--json', 'print as JSON')
    .action(async (id: string, opts: LookupFlags) => (await import('./contribuyente.js')).contribuyente(ctx, id, opts));
  program
    .command('exoneracion')
    .description('an exoneration document (autorización) by its number: state, percentage, expiry')
    .argument('<numero>', 'document number, e.g. AL-00020402-24')
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (numero: string, opts: LookupFlags) => (await import('./exoneracion.js')).exoneracion(ctx, numero, opts));
  // A top-level verb of its own (src/commands/tipo-cambio/), defined beside Hacienda's other public queries.
  defineTipoCambioCommand(program, ctx);
}
