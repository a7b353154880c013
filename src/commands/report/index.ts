/** `fecr report …`: the accountant's month (issue 29). */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { IvaFlags } from './iva.js';

export function defineReportCommands(program: Command, ctx: Ctx): void {
  const r = program.command('report').description("the accountant's month: the figures an IVA return needs");
  r.command('iva')
    .description("one month's IVA in colones: sales by tarifa (gravado, exento, no sujeto, exonerado, exports), the FEC's self-assessed IVA, the purchases' IVA acreditable, the difference, and the documents left out with why")
    .argument('<mes>', 'YYYY-MM')
    .option('--issuer <identificacion>', "only this issuer's sales and purchases (default: one section per issuer of the account, never a sum across them)")
    .option('--json', 'print as JSON (5 decimals; without --issuer: an array, one object per issuer)')
    .option('--csv', 'print the table as CSV (RFC 4180; formulas neutralised; without --issuer: emisor its first column)')
    .action(async (mes: string, opts: IvaFlags) => (await import('./iva.js')).run(ctx, mes, opts));
}
