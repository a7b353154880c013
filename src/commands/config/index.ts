/** `fecr config get|set|unset|list`: the profiles (local or remote) the issuer verbs use; `--profile` picks one. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export function defineConfigCommands(program: Command, ctx: Ctx): void {
  const config = program
    .command('config')
    .description('profiles: local (in-process service) or remote (a hosted instance); --profile NAME or FECR_PROFILE picks one')
    .addHelpText(
      'after',
      '\nKeys: mode (local|remote), env (local|sandbox|production), dataDir, account, authUrl, baseUrl, base.' +
        '\nExample: fecr config set authUrl https://auth.example.com --profile hosted',
    );
  config
    .command('get')
    .description('print a key of the profile in use (its default when unset)')
    .argument('<key>')
    .action(async (key: string) => (await import('./run.js')).get(ctx, key));
  config
    .command('set')
    .description('set a key of the profile in use (checked: a bad value names the key)')
    .argument('<key>')
    .argument('<value>')
    .action(async (key: string, value: string) => (await import('./run.js')).set(ctx, key, value));
  config
    .command('unset')
    .description('remove a key from the profile in use')
    .argument('<key>')
    .action(async (key: string) => (await import('./run.js')).unset(ctx, key));
  config
    .command('list')
    .description('list every profile and its keys (the one in use marked)')
    .option('--json', 'print as JSON')
    .action(async (opts: { json?: boolean }) => (await import('./run.js')).list(ctx, opts));
}
