/** `fecr emisor register|update FILE.json`, `fecr emisor show ID`: the issuers documents are sent for. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export interface EmisorFlags {
  p12?: string;
  pinStdin?: boolean;
  json?: boolean;
}

export function defineEmisorCommands(program: Command, ctx: Ctx): void {
  const emisor = program.command('emisor').description('issuers (emisores): register, update, show');
  for (const verb of ['register', 'update'] as const) {
    emisor
      .command(verb)
      .description(
        verb === 'register'
          ? "register an issuer from its record (the spec's registration shape); the certificate must open with the PIN and belong to the issuer"
          : "replace an issuer's record and secrets (same shape as register)",
      )
      .argument('[file]', 'issuer record JSON (FILE.json, or - for stdin)')
      .option('--p12 <file>', 'the .p12 certificate (sets certificadoHacienda)')
      .option('--pin-stdin', 'read the PIN of the certificate from stdin (sets pinCertificado)')
      .option('--json', 'print {"identificacion","action"} as JSON')
      .action(async (file: string | undefined, opts: EmisorFlags) => (await import('./run.js')).save(ctx, verb, file, opts));
  }
  emisor
    .command('show')
    .description('an issuer as the service shows it (no secrets)')
    .argument('<id>', 'identificación of the issuer')
    .option('--json', 'print as JSON')
    .action(async (id: string, opts: EmisorFlags) => (await import('./run.js')).show(ctx, id, opts));
}
