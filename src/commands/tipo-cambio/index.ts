/** `fecr tipo-cambio [DATE] [--moneda USD|EUR]`: the BCCR selling rate of a day, from Hacienda's indicator API. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export function defineTipoCambioCommand(program: Command, ctx: Ctx): void {
  program
    .command('tipo-cambio')
    .description("the BCCR reference selling rate of a day (what tipoCambio \"auto\" puts in a USD or EUR comprobante) and where it came from")
    .argument('[date]', 'YYYY-MM-DD (default: today in Costa Rica)')
    .option('--moneda <code>', 'USD (default) or EUR (today only: Hacienda publishes no history of the euro)')
    .option('--json', 'print as JSON')
    .action(async (date: string | undefined, opts: { json?: boolean; moneda?: string }) => (await import('./run.js')).tipoCambio(ctx, date, opts));
}
