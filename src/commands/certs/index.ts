/** Certificate commands: create-test, show. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export function defineCertsCommands(program: Command, ctx: Ctx): void {
  const certs = program.command('certs').description('signing certificates (.p12)');
  certs
    .command('create-test')
    .description('make a test RSA-2048 .p12 whose subject looks like a central-bank certificate')
    .requiredOption('--id <identificacion>', 'identification number, e.g. 3101123456')
    .requiredOption('--type <tipo>', 'identification type: 01 física, 02 jurídica, 03 DIMEX, 04 NITE')
    .requiredOption('--pin <pin>', 'PIN protecting the .p12')
    .requiredOption('--out <file>', 'where to write the .p12')
    .option('--name <name>', 'subject common name')
    .option('--days <n>', 'validity in days', '730')
    .action(async (opts: { id: string; type: string; pin: string; out: string; name?: string; days: string }) =>
      (await import('./create-test.js')).run(ctx, opts),
    );
  certs
    .command('show')
    .description('print the subject, serial and validity of a .p12')
    .argument('<file>', '.p12 file')
    .option('--pin-stdin', 'read the PIN from stdin (first line)')
    .option('--json', 'print as JSON')
    .action(async (file: string, opts: { pinStdin?: boolean; json?: boolean }) => (await import('./show.js')).run(ctx, file, opts));
}
