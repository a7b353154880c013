/** `fecr status CLAVE [--watch]`: where a document stands (Hacienda's verdict once decided). */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { StatusFlags } from './run.js';

export function defineStatusCommand(program: Command, ctx: Ctx): void {
  program
    .command('status')
    .description("a document's state and Hacienda's answer: exit 0 aceptado, 3 rechazado, 1 error, 8 not decided yet")
    .argument('<clave>', 'the 50-digit clave')
    .option('--watch', 'refresh until Hacienda decides (or --timeout)')
    .option('--timeout <seconds>', 'with --watch: how long to wait (default 60)')
    .option('--json', 'print as JSON')
    .action(async (clave: string, opts: StatusFlags) => (await import('./run.js')).run(ctx, clave, opts));
}
