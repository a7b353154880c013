/** `fecr doctor`: the profile in use (or --profile P) checked end to end, one line per check with what to do. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { DoctorFlags } from './run.js';

export function defineDoctorCommand(program: Command, ctx: Ctx): void {
  program
    .command('doctor')
    .description('check a profile end to end: config, data dir, each issuer\'s certificate, the Hacienda it sends to (in sandbox/production its credentials, the reception API and its activity code; with a haciendaUrl its reception, IdP and credentials) and what is owed to Hacienda; exit 0 when nothing fails')
    .option('--json', 'print {"profile","mode","env","ok","checks":[{"check","status","message","fix"}]} as JSON')
    .addHelpText(
      'after',
      `
One line per check: ok, warn (works, but act soon: a certificate with less than 30 days left, a file other users
may read), fail (what stops fecr from sending, and the fix) or skip (not checked: what it needs failed). Exit 0 when
no check fails (warnings do not), 1 otherwise. Sandbox and production profiles make one IdP login per issuer (not
when Hacienda refused its password before: every failed login counts towards Hacienda's lock-out) and one request
to the reception API and to the registry (/fe/ae), without retries. A local profile with a haciendaUrl (an external
emulator) gets one GET of its reception API and of its IdP's token endpoint (5 s each, no credentials), then one
login per issuer; an unreachable one fails naming the cause (connection refused, DNS, TLS, HTTP status), exit 1. Documents Hacienda has
not received yet (whatever the contingencia setting) are a warning: fecr contingency send sends them. No document
is sent.`,
    )
    .action(async (opts: DoctorFlags) => (await import('./run.js')).run(ctx, opts));
}
