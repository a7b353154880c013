/** `fecr doctor`: the profile in use (or --profile P) checked end to end, one line per check with what to do. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { DoctorFlags } from './run.js';

export function defineDoctorCommand(program: Command, ctx: Ctx): void {
  program
    .command('doctor')
    .description('check a profile end to end: config, data dir, each issuer\'s certificate and, in sandbox/production, its Hacienda credentials, the reception API and its activity code; exit 0 when nothing fails')
    .option('--json', 'print {"profile","mode","env","ok","checks":[{"check","status","message","fix"}]} as JSON')
    .addHelpText(
      'after',
      `
One line per check: ok, warn (works, but act soon: a certificate with less than 30 days left, a file other users
may read), fail (what stops fecr from sending, and the fix) or skip (not checked: what it needs failed). Exit 0 when
no check fails (warnings do not), 1 otherwise. Sandbox and production profiles make one IdP login per issuer (not
when Hacienda refused its password before: every failed login counts towards Hacienda's lock-out) and one request
to the reception API and to the registry (/fe/ae), without retries.`,
    )
    .action(async (opts: DoctorFlags) => (await import('./run.js')).run(ctx, opts));
}
