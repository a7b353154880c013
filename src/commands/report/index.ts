/** `fecr report …`: the accountant's month (issue 29). */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { IvaFlags } from './iva.js';

export function defineReportCommands(program: Command, ctx: Ctx): void {
  const r = program.command('report').description("the accountant's month: the figures an IVA return needs");
  r.command('iva')
    .description("one month's IVA in colones: sales by tarifa (gravado, exento, no sujeto, exonerado, exports), the FEC's self-assessed IVA, the purchases' IVA acreditable, the difference, and the documents left out with why")
    .argument('<mes>', 'YYYY-MM')
    .option('--issuer <identificacion>', "only this issuer's sales (default: every issuer of the account)")
    .option('--json', 'print as JSON (5 decimals)')
    .option('--csv', 'print the table as CSV (RFC 4180; formulas neutralised)')
    .action(async (mes: string, opts: IvaFlags) => (await import('./iva.js')).run(ctx, mes, opts));
}
