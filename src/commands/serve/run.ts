import type { Ctx } from '../../cli/context.js';
import { waitForStopSignal } from '../../cli/signals.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import type { ServeFlags } from './index.js';

function port(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`${flag} must be a port number from 0 to 65535`);
  return n;
}

export async function run(ctx: Ctx, f: ServeFlags): Promise<void> {
  if (!['local', 'sandbox', 'production'].includes(f.env)) throw new UsageError('--env must be local, sandbox or production');
  const delay = Number(f.emulatorDelay);
  if (!Number.isInteger(delay) || delay < 0) throw new UsageError('--emulator-delay must be a whole number of ms');
  const { startService } = await import('../../server/service.js');
  const { resolveDataDir } = await import('../../service/runtime.js');
  let svc;
  try {
    svc = await startService({
      dataDir: resolveDataDir(ctx.io.env, f.dataDir),
      env: ctx.io.env,
      host: f.host,
      authPort: port('--auth-port', f.authPort),
      apiPort: port('--api-port', f.apiPort),
      environment: f.env as 'local' | 'sandbox' | 'production',
      publicAuthUrl: f.publicAuthUrl,
      publicApiUrl: f.publicApiUrl,
      authJwksUrl: f.authJwksUrl,
      emulatorDelayMs: delay,
      warn: (m) => ctx.io.stderr.write(`warning: ${m}\n`),
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') throw new UserError(`address in use: ${err.message}`);
    throw e;
  }
  writeLine(ctx.io.stdout, JSON.stringify({ authUrl: svc.authUrl, baseUrl: svc.baseUrl, ...(svc.haciendaUrl ? { haciendaUrl: svc.haciendaUrl } : {}) }));
  await waitForStopSignal();

  await svc.close();
}
