/** `fecr demo`: the main job end to end — issuer, one document of each kind, Hacienda's verdicts, the files. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { DemoFlags } from './run.js';

export function defineDemoCommand(program: Command, ctx: Ctx): void {
  program
    .command('demo')
    .description(
      'issue one document of each kind with a generated test certificate, send them to the embedded Hacienda emulator, ' +
        'wait for the verdicts and write the XML, the response and the PDF of each (profile "demo" unless --profile / FECR_PROFILE)',
    )
    .option('--out <dir>', 'where to write the files', 'fecr-demo')
    .option('--timeout <seconds>', "how long to wait for Hacienda's verdicts", '60')
    .option('--json', 'print the results as JSON')
    .action(async (opts: DemoFlags, cmd: Command) => (await import('./run.js')).run(ctx, opts, cmd.optsWithGlobals<{ profile?: string }>().profile));
}
