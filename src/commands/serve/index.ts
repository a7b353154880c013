/**
 * `fecr serve`: the whole service (auth server, client API, worker, and the emulator in env local), or some of
 * it (--role) for the hosted mode: many processes on one PostgreSQL (--database / FECR_DATABASE_URL).
 */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { ServeFlags } from './run.js';

export function defineServeCommand(program: Command, ctx: Ctx): void {
  program
    .command('serve')
    .description(
      'run the service: auth server, client API, worker (and the Hacienda emulator with --env local); prints one JSON line when ready, and on stderr the fecr config set command for a remote profile',
    )
    .option('--data-dir <dir>', 'data dir (default FECR_DATA_DIR or the platform data dir)')
    .option('--log-file <file>', 'write the log (JSON lines) to this file, or - for stderr; default: <data dir>/serve.log when stderr is a terminal (its path said once), else stderr')
    .option('--log-format <format>', 'json: the log as JSON lines on stderr, as a deployment collects it, even on a terminal (the only format)')
    .option('--database <url>', 'postgres://… to share one PostgreSQL among many fecr processes (default FECR_DATABASE_URL, else SQLite in the data dir)')
    .option('--role <roles>', 'what this process runs: all, or a comma-separated list of auth, api, worker', 'all')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--auth-port <port>', 'auth server port (0 = any free port)', '0')
    .option('--api-port <port>', 'client API port (0 = any free port)', '0')
    .option('--env <env>', 'Hacienda: local (embedded emulator), sandbox or production', 'local')
    .option('--public-auth-url <url>', 'public URL of the auth server (token iss/aud); default its listening URL')
    .option('--public-api-url <url>', "public URL of the client API; Hacienda's callbacks go to <url>/hacienda/callback")
    .option('--auth-jwks-url <url>', "verify tokens with this JWKS (the auth server's /.well-known/jwks.json) instead of the keys in the store")
    .option('--hacienda-url <url>', 'env local: use the Hacienda emulator at this URL instead of an embedded one')
    .option('--emulator-delay <ms>', 'env local: the emulator processing delay', '200')
    .option(
      '--allow-private-webhooks',
      'env sandbox/production: let accounts point webhooks at loopback, private, link-local and other non-public addresses (also FECR_ALLOW_PRIVATE_WEBHOOKS=1)',
    )
    .option(
      '--trust-proxy <list>',
      'comma-separated addresses/CIDRs of the proxies (load balancer) whose X-Forwarded-For names the client, for login throttling and the limits of the Hacienda callback route (default FECR_TRUST_PROXY; none: X-Forwarded-For is ignored)',
    )
    .option('--smtp-url <url>', 'SMTP server for the mails to the receptors: smtp[s]://user:password@host:port (default FECR_SMTP_URL; none: .eml files in <data dir>/outbox)')
    .option('--mail-from <address>', 'From of those mails, "Name <address>", an address of yours (default FECR_MAIL_FROM; required with an SMTP server; the name defaults to the issuer\'s)')
    .option('--mail-reply-to <address>', 'Reply-To of those mails (default FECR_MAIL_REPLY_TO, else the issuer\'s address)')
    .option('--mail-resends-per-document <n>', 'mails the client API may queue for one document in 24 h, and foreign correosAdicionales one document may mail (default FECR_MAIL_RESENDS_PER_DOCUMENT, else 5)')
    .option('--mail-resends-per-account <n>', 'mail requests of one account to the client API in an hour, sent or refused, each foreign correosAdicionales address one (default FECR_MAIL_RESENDS_PER_ACCOUNT, else 60)')
    .option(
      '--recibidos-trust <paths>',
      "CA certificates a supplier's signing certificate may chain to, beside the shipped ones (schemas/trust/): PEM/DER files or folders, separated by ':' (default FECR_RECIBIDOS_TRUST)",
    )
    .action(async (opts: ServeFlags) => (await import('./run.js')).run(ctx, opts));
}
