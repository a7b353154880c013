/** `fecr whoami`: the session of the profile in use, checked with the service. */
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { renderTable } from '../../cli/table.js';
import { openSession, sessionPastExpiry, type Session } from '../../client/select.js';
import { remoteOrNote, type RemoteActive } from './shared.js';

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h ${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

export async function whoami(ctx: Ctx, opts: { json?: boolean }): Promise<void> {
  const active = await remoteOrNote(ctx);
  if (!active) return;
  const session = (await openSession(ctx, active))!;
  await checkWithService(ctx, active, session);
  const { claims } = session;
  const data = {
    profile: active.name,
    base: claims.sub ?? null,
    iss: claims.iss ?? null,
    jti: claims.jti ?? null,
    expiresAt: claims.exp ? new Date(claims.exp * 1000).toISOString() : null,
    secondsLeft: session.secondsLeft,
    token: session.source,
    baseUrl: active.profile.baseUrl,
  };
  if (opts.json) return printJson(ctx, data);
  const rows: string[][] = [
    ['profile', data.profile],
    ['base', data.base ?? ''],
    ['iss', data.iss ?? ''],
    ['jti', data.jti ?? ''],
    ['expires', data.expiresAt ?? 'never'],
    ['time left', data.secondsLeft === null ? 'unlimited' : formatDuration(data.secondsLeft)],
    ['token', session.source === 'env' ? 'FECR_TOKEN' : session.source === 'keychain' ? 'OS keychain' : 'file'],
    ['api', data.baseUrl],
  ];
  writeLine(ctx.io.stdout, renderTable(ctx, ['field', 'value'], rows));
}

/**
 * Asks the service whether it still accepts the session (a cheap authenticated read, POST /api/consultar/webhook):
 * refused before its expiry is "session revoked: run fecr login" (exit 4). An unreachable service is one warning
 * line, and whoami still shows what the token says.
 */
async function checkWithService(ctx: Ctx, active: RemoteActive, session: Session): Promise<void> {
  const [{ RemoteBackend }, { BackendError }] = await Promise.all([import('../../client/remote-backend.js'), import('../../client/backend.js')]);
  const backend = new RemoteBackend({ baseUrl: active.profile.baseUrl, token: session.token, tokenExpired: () => sessionPastExpiry(ctx, session) });
  try {
    await backend.webhookUrl();
  } catch (e) {
    if (!(e instanceof BackendError)) throw e;
    if (e.code === 'auth') {
      writeLine(ctx.io.stderr, safeText(e.message));
      throw new SilentExit(EXIT.auth);
    }
    writeLine(ctx.io.stderr, `warning: could not check the session with ${active.profile.baseUrl}: ${safeText(e.message)}`);
  } finally {
    await backend.close();
  }
}
