/** `fecr documents list`: the documents of the profile's account, newest first. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { ListFlags } from './list.js';

export function defineDocumentsCommands(program: Command, ctx: Ctx): void {
  const documents = program.command('documents').description('documents sent from this profile');
  documents
    .command('list')
    .description('list documents, newest first')
    .option('--state <state>', 'only this state: pendiente, enviado, recibido, procesando, aceptado, rechazado or error')
    .option('--since <date>', 'only documents created at or after this ISO 8601 date or date-time (dates in Costa Rica time)')
    .option('--limit <n>', 'at most this many (default 100, at most 1000)')
    .option('--json', 'print as JSON')
    .action(async (opts: ListFlags) => (await import('./list.js')).list(ctx, opts));
}
