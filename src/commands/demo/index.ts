/** `fecr demo`: the main job end to end on the embedded defaults. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export function defineDemoCommand(program: Command, ctx: Ctx): void {
  program
    .command('demo')
    .description('issue one document of each kind with a generated test certificate, sign and verify them, write the files')
    .option('--out <dir>', 'where to write the files', 'fecr-demo')
    .option('--json', 'print the results as JSON')
    .action(async (opts: { out: string; json?: boolean }) => (await import('./run.js')).run(ctx, opts));
}
