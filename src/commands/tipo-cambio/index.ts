/** `fecr tipo-cambio [DATE]`: the dollar's BCCR selling rate of a day, from Hacienda's indicator API. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export function defineTipoCambioCommand(program: Command, ctx: Ctx): void {
  program
    .command('tipo-cambio')
    .description("the dollar's BCCR reference selling rate of a day (what tipoCambio \"auto\" puts in a USD comprobante) and where it came from")
    .argument('[date]', 'YYYY-MM-DD (default: today in Costa Rica)')
    .option('--json', 'print as JSON')
    .action(async (date: string | undefined, opts: { json?: boolean }) => (await import('./run.js')).tipoCambio(ctx, date, opts));
}
