/** `fecr webhooks list|replay`: webhook deliveries of an account (local data dir). */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';

export interface WebhookFlags {
  account: string;
  dataDir?: string;
  state?: string;
  limit?: string;
  json?: boolean;
}

export function defineWebhookCommands(program: Command, ctx: Ctx): void {
  const webhooks = program.command('webhooks').description('webhook deliveries of Hacienda verdicts');
  webhooks
    .command('list')
    .description('list deliveries, newest first')
    .requiredOption('--account <base>', 'account name')
    .option('--state <state>', 'pendiente, entregado or fallido')
    .option('--limit <n>', 'at most this many', '50')
    .option('--data-dir <dir>', 'data dir (default FECR_DATA_DIR or the platform data dir)')
    .option('--json', 'print as JSON')
    .action(async (opts: WebhookFlags) => (await import('./run.js')).list(ctx, opts));
  webhooks
    .command('replay')
    .description('deliver again (same webhook-id); a running `fecr serve` picks it up')
    .argument('<id>', 'delivery id (from webhooks list)')
    .requiredOption('--account <base>', 'account name')
    .option('--data-dir <dir>', 'data dir (default FECR_DATA_DIR or the platform data dir)')
    .action(async (id: string, opts: WebhookFlags) => (await import('./run.js')).replay(ctx, id, opts));
}
