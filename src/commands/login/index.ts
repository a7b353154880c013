/** `fecr login`, `fecr logout`, `fecr whoami`: the session of a remote profile (token in the OS keychain). */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { LoginFlags } from './login.js';

export function defineLoginCommands(program: Command, ctx: Ctx): void {
  program
    .command('login')
    .description('log in to the remote profile in use; the token goes to the OS keychain (else a 0600 file)')
    .option('--base <name>', 'account name (default: the profile\'s "base"); prompted on a terminal')
    .option('--password-stdin', 'read the password from stdin (first line); without it a terminal prompts')
    .action(async (opts: LoginFlags) => (await import('./login.js')).login(ctx, opts));
  program
    .command('logout')
    .description('revoke the session token on the server and forget it')
    .action(async () => (await import('./logout.js')).logout(ctx));
  program
    .command('whoami')
    .description('the session of the profile in use (checked with the service): account, issuer, token id, expiry and time left')
    .option('--json', 'print as JSON')
    .action(async (opts: { json?: boolean }) => (await import('./whoami.js')).whoami(ctx, opts));
}
