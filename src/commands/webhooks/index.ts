/**
 * `fecr webhooks list|replay`: webhook deliveries of an account (a data dir: --data-dir or the local profile's; the
 * client API has no deliveries endpoint, so a remote profile is refused);
 * `fecr webhooks listen`: receive the active profile's deliveries here and forward them (listen.ts).
 */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { ListenFlags } from './listen.js';
import type { WebhookFlags } from './shared.js';

export function defineWebhookCommands(program: Command, ctx: Ctx): void {
  const webhooks = program.command('webhooks').description('webhook deliveries of Hacienda verdicts');
  webhooks
    .command('list')
    .description('list deliveries, newest first')
    .requiredOption('--account <base>', 'account name')
    .option('--state <state>', 'pendiente, entregado or fallido')
    .option('--limit <n>', 'at most this many', '50')
    .option('--data-dir <dir>', "data dir (default: the local profile's, else FECR_DATA_DIR or the platform data dir; a remote profile is refused)")
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (opts: WebhookFlags) => (await import('./list.js')).list(ctx, opts));
  webhooks
    .command('replay')
    .description('deliver again (same webhook-id); a running `fecr serve` picks it up')
    .argument('<id>', 'delivery id (from webhooks list)')
    .requiredOption('--account <base>', 'account name')
    .option('--data-dir <dir>', "data dir (default: the local profile's, else FECR_DATA_DIR or the platform data dir; a remote profile is refused)")
    .action(async (id: string, opts: WebhookFlags) => (await import('./replay.js')).replay(ctx, id, opts));
  webhooks
    .command('listen')
    .description("receive the account's webhook deliveries here, print each one and forward it to --forward-to (like stripe listen)")
    .option('--forward-to <url>', 'your receiver: each delivery is POSTed there with its exact body and signature headers')
    .option('--port <n>', 'port of the local receiver (0: any free port)', '0')
    .option('--host <address>', 'address of the local receiver', '127.0.0.1')
    .option('--public-url <url>', 'the URL the service should deliver to, when it is not the local address (e.g. a tunnel to it)')
    .option('--json', 'print each delivery as one JSON object per line')
    .addHelpText(
      'after',
      `
Acts on the account of the active profile (--profile / FECR_PROFILE), local or remote:
  - starts a receiver on --host:--port and points the account's webhook URL at it (or at --public-url),
    keeping the account's signing secret: forwarded deliveries verify at your receiver with the secret it has;
  - the previous webhook URL is printed, remembered and put back when listen stops (Ctrl-C or SIGTERM);
    if fecr is killed outright it stays pointed here: run listen again and stop it with Ctrl-C;
  - prints one line per delivery on stdout: time (Costa Rica), estado (aceptado, parcial, rechazado), clave,
    webhook-id, then the forward's status and latency (--json: {time, webhookId, clave, mensaje, estado,
    forward: {url, status | error, ms}, answered});
  - answers the service with your receiver's status (so its retries follow what your receiver said), 502 when
    the forward fails or takes over 9 s, 200 without --forward-to.
Local mode: the service's worker runs in this process while listening (sends, polls and deliveries of the
data dir happen here, with or without other fecr commands). Remote mode: the hosted service delivers to this
receiver, so it must be able to reach it: same machine, or --public-url with a tunnel (--host 0.0.0.0 to
accept from the network). An account without a signing secret gets one; it is printed once on stderr.`,
    )
    .action(async (opts: ListenFlags) => (await import('./listen.js')).listen(ctx, opts));
}
