/** `fecr config get|set|unset|list`: the profiles (local or remote) the issuer verbs use; `--profile` picks one. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export function defineConfigCommands(program: Command, ctx: Ctx): void {
  const config = program
    .command('config')
    .description('profiles: local (in-process service) or remote (a hosted instance); --profile NAME or FECR_PROFILE picks one')
    .addHelpText(
      'after',
      '\nKeys: mode (local|remote), env (local|sandbox|production), dataDir, account, authUrl, baseUrl, base;' +
        '\n  local mode, the mails to the receptors: smtpUrl (smtp[s]://user@host:port, no password), mailFrom, mailReplyTo;' +
        "\n  local mode, received comprobantes: recibidosTrust (CA certificate files or folders suppliers' signatures may chain to);" +
        "\n  local mode: haciendaUrl (Hacienda's IdP, reception and queries at this one URL instead of Hacienda's own; with env local, a shared" +
        '\n  fecr hacienda serve instead of the embedded emulator); env local: emulatorFaults (a fault file for the embedded emulator, docs/faults.md);' +
        '\n  local mode, contingency: contingencia (auto: sign in situación 3 when Hacienda cannot be reached; off), contingenciaPlazoHoras (default 48).' +
        '\nExample: fecr config set mode=remote authUrl=https://auth.example.com baseUrl=https://api.example.com base=acme --profile hosted' +
        '\nOnly config set creates a profile ("default" always exists; fecr demo creates "demo"); naming another one is an error.',
    );
  config
    .command('get')
    .description('print a key of the profile in use (its default when unset)')
    .argument('<key>')
    .action(async (key: string) => (await import('./get.js')).get(ctx, key));
  config
    .command('set')
    .description('set keys of the profile in use, creating it if needed: KEY VALUE, or KEY=VALUE pairs (all checked before any is written)')
    .argument('<pairs...>', 'KEY VALUE, or KEY=VALUE [KEY=VALUE …]')
    .action(async (pairs: string[]) => (await import('./set.js')).set(ctx, pairs));
  config
    .command('unset')
    .description('remove a key from the profile in use')
    .argument('<key>')
    .action(async (key: string) => (await import('./unset.js')).unset(ctx, key));
  config
    .command('list')
    .description('list every profile and its keys (the one in use marked)')
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (opts: { json?: boolean; csv?: boolean }) => (await import('./list.js')).list(ctx, opts));
}
