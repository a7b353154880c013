/** `fecr documents list`: the documents of the profile's account, newest first; `fecr documents email`: mail one again. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { EmailFlags } from './email.js';
import type { ListFlags } from './list.js';

export function defineDocumentsCommands(program: Command, ctx: Ctx): void {
  const documents = program.command('documents').description('documents sent from this profile');
  documents
    .command('list')
    .description('list documents, newest first')
    .option('--state <state>', 'only this state: pendiente, credenciales_invalidas, enviado, recibido, procesando, aceptado, rechazado or error')
    .option('--since <date>', 'only documents created at or after this ISO 8601 date or date-time (dates in Costa Rica time)')
    .option('--issuer <identificacion>', "only this issuer's documents (its identificación)")
    .option('--limit <n>', 'at most this many (default 100, at most 1000)')
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (opts: ListFlags) => (await import('./list.js')).list(ctx, opts));
  documents
    .command('email')
    .description("mail an accepted document to its receptor again (its XML, PDF and Hacienda's answer attached)")
    .argument('<clave>', 'the 50-character clave')
    .option('--to <address...>', "send to these addresses instead of the document's recipients")
    .option('--json', 'print as JSON')
    .action(async (clave: string, opts: EmailFlags) => (await import('./email.js')).email(ctx, clave, opts));
}
