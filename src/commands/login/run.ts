import { createInterface } from 'node:readline';
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { readAll, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import { HttpClient, NetworkError, type HttpResponse } from '../../client/http-client.js';
import { flagFor, openProfiles, type ActiveProfile, type RemoteProfile } from '../../client/profiles.js';
import { deleteToken, saveToken } from '../../client/secret-store.js';
import { activeProfile, decodeSession, openSession, sessionPastExpiry, type Session } from '../../client/select.js';
import type { LoginFlags } from './index.js';

type RemoteActive = ActiveProfile & { profile: RemoteProfile };

/** Local profiles have no session: one note, exit 0. Returns the remote profile otherwise. */
async function remoteOrNote(ctx: Ctx): Promise<RemoteActive | null> {
  const active = await activeProfile(ctx);
  if (active.profile.mode === 'remote') return active as RemoteActive;
  info(ctx, `profile "${active.name}" is local: there is nothing to log in to (a remote profile needs authUrl and baseUrl: fecr config set authUrl URL${flagFor(active.name)})`);
  return null;
}

function messageOf(res: HttpResponse): string {
  const m = (res.json as { message?: unknown } | undefined)?.message;
  return typeof m === 'string' ? m : `HTTP ${res.status}`;
}

async function post(http: HttpClient, url: string, body: unknown, token?: string): Promise<HttpResponse> {
  try {
    return await http.postJson(url, body, token ? { token } : {});
  } catch (e) {
    if (e instanceof NetworkError) throw new UserError(e.message);
    throw e;
  }
}

export async function login(ctx: Ctx, opts: LoginFlags): Promise<void> {
  const active = await remoteOrNote(ctx);
  if (!active) return;
  const { name, profile } = active;
  const tty = ctx.io.stdinIsTTY;

  let base = opts.base?.trim() || profile.base;
  if (!base) {
    if (!tty || opts.passwordStdin) throw new UsageError(`missing --base NAME (the account name${tty ? '' : '; there is no terminal to ask'})`);
    base = (await promptLine(ctx, 'Account (base): ')).trim();
    if (!base) throw new UsageError('missing --base NAME (the account name)');
  }
  let password: string;
  if (opts.passwordStdin) {
    password = (await readAll(ctx.io.stdin)).toString('utf8').split(/\r?\n/)[0] ?? '';
    if (!password) throw new UsageError('no password on stdin (--password-stdin reads its first line)');
  } else if (tty) {
    password = await promptHidden(ctx, `Password for ${base}: `);
    if (!password) throw new UsageError('no password given');
  } else {
    throw new UsageError('missing --password-stdin: without a terminal the password is read from stdin (echo … | fecr login --password-stdin)');
  }

  const http = new HttpClient({ timeoutMs: 30_000 });
  try {
    const res = await post(http, `${profile.authUrl}/login`, { base, password });
    const body = res.json as { token?: unknown; expires_in?: unknown } | undefined;
    if (res.status === 200 && typeof body?.token === 'string') {
      const session = await decodeSession(ctx, body.token, 'keychain');
      const where = await saveToken({ env: ctx.io.env, configDir: active.configDir, warn: (l) => writeLine(ctx.io.stderr, l) }, name, body.token);
      if (base !== profile.base) await (await openProfiles(ctx.io.env)).set(name, 'base', base, ctx.io.cwd);
      const until = session.claims.exp ? ` until ${new Date(session.claims.exp * 1000).toISOString()}` : '';
      info(ctx, `logged in to ${profile.authUrl} as ${base} (profile "${name}", token in the ${where === 'keychain' ? 'OS keychain' : 'file'})${until}`);
      if (ctx.io.env.FECR_TOKEN) info(ctx, 'note: FECR_TOKEN is set in the environment and overrides the stored token');
      return;
    }
    if (res.status === 401) throw new UserError(`login refused: ${messageOf(res)}`, EXIT.auth);
    if (res.status === 429) {
      const after = res.headers['retry-after'];
      throw new UserError(`login refused: ${messageOf(res)}${after ? ` (retry after ${String(after)} s)` : ''}`, EXIT.auth);
    }
    if (res.status === 400) throw new UsageError(`login refused: ${messageOf(res)}`);
    throw new UserError(`login failed: ${profile.authUrl}/login answered ${res.status} (${messageOf(res)})`);
  } finally {
    await http.close();
  }
}

export async function logout(ctx: Ctx): Promise<void> {
  const active = await remoteOrNote(ctx);
  if (!active) return;
  const { name, profile } = active;
  const session = await openSession(ctx, active, { allowExpired: true, optional: true });
  if (!session) return info(ctx, `not logged in (profile "${name}")`);

  let failure: string | undefined;
  let already = false;
  if (session.secondsLeft !== null && session.secondsLeft <= 0) {
    already = true; // expired: nothing to revoke
  } else {
    const http = new HttpClient({ timeoutMs: 30_000 });
    try {
      const res = await http.postJson(`${profile.authUrl}/logout`, {}, { token: session.token });
      if (res.status === 401) already = true;
      else if (res.status !== 200) failure = `${profile.authUrl}/logout answered ${res.status} (${messageOf(res)})`;
    } catch (e) {
      if (!(e instanceof NetworkError)) throw e;
      failure = e.message;
    } finally {
      await http.close();
    }
  }
  await deleteToken({ env: ctx.io.env, configDir: active.configDir }, name);
  if (failure) {
    const until = session.claims.exp ? ` until ${new Date(session.claims.exp * 1000).toISOString()}` : '';
    throw new UserError(`forgot the token of profile "${name}", but could not revoke it: ${failure}; it stays valid${until}`);
  }
  info(ctx, already ? `the session had already ended; forgot its token (profile "${name}")` : `logged out: token revoked and forgotten (profile "${name}")`);
  if (session.source === 'env') info(ctx, 'note: FECR_TOKEN is still set in the environment');
}

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
      writeLine(ctx.io.stderr, e.message);
      throw new SilentExit(EXIT.auth);
    }
    writeLine(ctx.io.stderr, `warning: could not check the session with ${active.profile.baseUrl}: ${e.message}`);
  } finally {
    await backend.close();
  }
}

/** One visible line from the terminal (prompt on stderr). */
async function promptLine(ctx: Ctx, question: string): Promise<string> {
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr, terminal: true });
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
  }
}

/** A password from the terminal without echo (raw mode; Enter ends, Backspace erases, Ctrl-C cancels). */
async function promptHidden(ctx: Ctx, question: string): Promise<string> {
  const input = ctx.io.stdin as NodeJS.ReadStream;
  if (typeof input.setRawMode !== 'function') throw new UsageError('cannot read a password without echo here: pass it with --password-stdin');
  ctx.io.stderr.write(question);
  return new Promise<string>((resolve, reject) => {
    let value = '';
    let escape = false;
    const finish = (err?: Error) => {
      input.setRawMode(false);
      input.removeListener('data', onData);
      input.pause();
      ctx.io.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of String(chunk)) {
        if (escape) {
          // skip an escape sequence (arrow keys …) up to its final letter or ~
          if (/[A-Za-z~]/.test(ch)) escape = false;
          continue;
        }
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish();
        if (ch === '\u0003') return finish(new UserError('cancelled'));
        if (ch === '\u001b') escape = true;
        else if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else if (ch >= ' ') value += ch;
      }
    };
    input.setRawMode(true);
    input.setEncoding('utf8');
    input.on('data', onData);
    input.resume();
  });
}
