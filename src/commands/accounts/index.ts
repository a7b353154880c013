/**
 * `fecr accounts …`, `fecr keys rotate`, `fecr tokens revoke`: administration of a service's data dir (--data-dir, else
 * the local profile's); they have no client-API equivalent, so a remote profile is refused (src/commands/local.ts).
 * One module per verb, loaded by its action; what they share is in shared.ts.
 */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export function defineAccountCommands(program: Command, ctx: Ctx): void {
  const accounts = program.command('accounts').description('client accounts of the service (local data dir)');
  const dd = (c: Command) =>
    c.option('--data-dir <dir>', "data dir (default: the local profile's, else FECR_DATA_DIR or the platform data dir; a remote profile is refused)");
  const targets = (c: Command) =>
    c
      .option('--env <env>', "the service's Hacienda environment: local, or sandbox/production (webhook URL must be a public address)", 'local')
      .option('--allow-private-webhooks', 'with --env sandbox/production, accept a loopback, private or other non-public webhook target (also FECR_ALLOW_PRIVATE_WEBHOOKS=1)');
  dd(
    targets(
      accounts
        .command('create')
        .description('create an account; the password is read from stdin with --password-stdin')
        .argument('<base>', 'account name (the "base" of login)')
        .option('--password-stdin', 'read the password from stdin (first line)')
        .option('--webhook-url <url>', 'where to deliver Hacienda verdicts (prints the signing secret once)')
        .option('--json', 'print as JSON'),
    ),
  ).action(async (base: string, opts) => (await import('./create.js')).create(ctx, base, opts));
  dd(accounts.command('list').description('list accounts').option('--json', 'print as JSON')).action(async (opts) =>
    (await import('./list.js')).list(ctx, opts),
  );
  dd(accounts.command('disable').description('disable an account (its tokens stop working)').argument('<base>')).action(async (base: string, opts) =>
    (await import('./disable.js')).disable(ctx, base, opts),
  );
  dd(accounts.command('enable').description('enable a disabled account').argument('<base>')).action(async (base: string, opts) =>
    (await import('./enable.js')).enable(ctx, base, opts),
  );
  dd(
    accounts.command('passwd').description('set the password of an account').argument('<base>').option('--password-stdin', 'read the password from stdin'),
  ).action(async (base: string, opts) => (await import('./passwd.js')).passwd(ctx, base, opts));
  dd(
    targets(
      accounts
        .command('set')
        .description('change settings of an account')
        .argument('<base>')
        .requiredOption('--webhook-url <url>', 'webhook URL (prints the new signing secret once)'),
    ),
  ).action(async (base: string, opts) => (await import('./set.js')).set(ctx, base, opts));
  dd(
    accounts
      .command('mail')
      .description(
        "the account's own SMTP server and sender for the mails to its receptors, and the addresses it may have mailed through the API besides each document's recipients (shown without flags; the password is sealed)",
      )
      .argument('<base>')
      .option('--smtp-url <url>', 'smtp[s]://user:password@host:port[?security=tls|starttls|none]')
      .option('--from <address>', 'From: "Name <address>", an address of yours (default the service\'s --mail-from; the name defaults to the issuer\'s)')
      .option('--reply-to <address>', 'Reply-To (default the service\'s, else the issuer\'s address)')
      .option('--clear', 'remove the server and sender: the mails follow the service\'s defaults')
      .option('--allow <address...>', "let the account have these addresses mailed through the API (POST /api/enviar/correo), besides each document's recipients")
      .option('--disallow <address...>', 'remove these addresses from that list')
      .option('--json', 'print as JSON'),
  ).action(async (base: string, opts) => (await import('./mail.js')).mail(ctx, base, opts));
  dd(
    accounts
      .command('mailbox')
      .description("the account's suppliers' mailbox, read by the service's worker as fecr recibidos watch reads one (shown without flags; the password, FECR_IMAP_PASSWORD, is sealed)")
      .argument('<base>')
      .option('--imap <url>', 'imaps://USER@HOST[:PORT]/MAILBOX')
      .option('--rules <file>', 'the rules file of fecr recibidos watch (default: hold every comprobante)')
      .option('--interval <seconds>', 'seconds between passes (default 60)')
      .option('--clear', 'stop reading it')
      .option('--json', 'print as JSON'),
  ).action(async (base: string, opts) => (await import('./mailbox.js')).mailbox(ctx, base, opts));

  const keys = program.command('keys').description('token signing keys of the auth server');
  dd(keys.command('rotate').description('add a new signing key; old keys stay in the JWKS until their last token expires')).action(async (opts) =>
    (await import('./keys-rotate.js')).rotate(ctx, opts),
  );
  dd(keys.command('list').description('list signing keys').option('--json', 'print as JSON')).action(async (opts) => (await import('./keys-list.js')).keysList(ctx, opts));
  const tokens = program.command('tokens').description('access tokens');
  dd(tokens.command('revoke').description('revoke a token by its jti').argument('<jti>')).action(async (jti: string, opts) =>
    (await import('./tokens-revoke.js')).revoke(ctx, jti, opts),
  );
}
