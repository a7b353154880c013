/**
 * `fecr emisor register|update FILE.json`, `fecr emisor show ID`, `fecr emisor list`, `fecr emisor numbers ID`: the issuers
 * documents are sent for.
 * Without FILE.json, in a terminal, register/update ask for the record (see interactive.ts).
 */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { EmisorFlags } from './shared.js';

export function defineEmisorCommands(program: Command, ctx: Ctx): void {
  const emisor = program.command('emisor').description('issuers (emisores): register, update, show, list, numbers');
  for (const verb of ['register', 'update'] as const) {
    emisor
      .command(verb)
      .description(
        verb === 'register'
          ? "register an issuer from its record (the spec's registration shape); the certificate must open with the PIN and belong to the issuer"
          : "replace an issuer's record and secrets (same shape as register)",
      )
      .argument('[file]', 'issuer record JSON (FILE.json, or - for stdin); omitted in a terminal: asked for interactively')
      .option('--p12 <file>', 'the .p12 certificate (sets certificadoHacienda; asked for when interactive and omitted)')
      .option('--pin-stdin', 'read the PIN of the certificate from stdin (sets pinCertificado)')
      .option('--json', 'print {"identificacion","action"} as JSON')
      .addHelpText(
        'after',
        `
Interactive (no FILE.json, stdin is a terminal): asks for the certificate and its PIN (hidden; a wrong PIN is
asked again), the identification (prefilled from the certificate), then looks the taxpayer up in Hacienda's
registry to prefill the names and offer its economic activities; then contact, location, ambiente and the
Hacienda user and password (hidden). Shows a summary without secrets and asks before ${verb === 'register' ? 'registering' : 'updating'}.
Without a terminal FILE.json is required (exit 2).`,
      )
      .action(async (file: string | undefined, opts: EmisorFlags) => (await import('./save.js')).save(ctx, verb, file, opts));
  }
  emisor
    .command('show')
    .description('the record of an issuer as registered, without its secrets (Hacienda password, PIN, .p12, signing key)')
    .argument('<id>', 'identificación of the issuer')
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (id: string, opts: EmisorFlags) => (await import('./show.js')).show(ctx, id, opts));
  emisor
    .command('numbers')
    .description('the next numeroReferencia of each kind of document of an issuer (local profile), and where each series starts')
    .argument('<id>', 'identificación of the issuer')
    .option('--set <KIND=N>', 'the next number of a kind (FE, ND, NC, TE, FEC, FEE, REP), e.g. FE=1501; repeatable; refused below a number already used', (v: string, acc: string[] = []) => [...acc, v])
    .option('--sucursal <n>', "with --set: the series of this sucursal (default: the issuer's)")
    .option('--terminal <n>', 'with --set: the series of this terminal (default 1)')
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .addHelpText(
      'after',
      `
In local mode a body may leave numeroReferencia out: fecr takes the next free number of its issuer, kind, sucursal
and terminal (one after the highest used, or the start set here when higher). An issuer coming from another system
sets where each kind goes on: fecr emisor numbers 3101123456 --set FE=1501 --set NC=42.`,
    )
    .action(async (id: string, opts: import('./numbers.js').NumbersFlags) => (await import('./numbers.js')).numbers(ctx, id, opts));
  emisor
    .command('list')
    .description("the account's issuers (no secrets)")
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (opts: EmisorFlags) => (await import('./list.js')).list(ctx, opts));
}
