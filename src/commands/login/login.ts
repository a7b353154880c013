/** `fecr login`: a session token for the remote profile in use, kept in the OS keychain (else a 0600 file). */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { readAll, writeLine } from '../../cli/io.js';
import { info } from '../../cli/output.js';
import { input, password as askPassword } from '../../cli/prompt.js';
import { login as loginToAuthServer } from '../../client/auth.js';
import { openProfiles } from '../../client/profiles.js';
import { saveToken } from '../../client/secret-store.js';
import { decodeSession } from '../../client/select.js';
import { remoteOrNote } from './shared.js';

export interface LoginFlags {
  base?: string;
  passwordStdin?: boolean;
}

export async function login(ctx: Ctx, opts: LoginFlags): Promise<void> {
  const active = await remoteOrNote(ctx);
  if (!active) return;
  const { name, profile } = active;
  const tty = ctx.io.stdinIsTTY;

  let base = opts.base?.trim() || profile.base;
  if (!base) {
    if (!tty || opts.passwordStdin) throw new UsageError(`missing --base NAME (the account name${tty ? '' : '; there is no terminal to ask'})`);
    base = (await input(ctx, { message: 'Account (base):' })).trim();
    if (!base) throw new UsageError('missing --base NAME (the account name)');
  }
  let password: string;
  if (opts.passwordStdin) {
    password = (await readAll(ctx.io.stdin)).toString('utf8').split(/\r?\n/)[0] ?? '';
    if (!password) throw new UsageError('no password on stdin (--password-stdin reads its first line)');
  } else if (tty) {
    password = await askPassword(ctx, { message: `Password for ${base}:` });
    if (!password) throw new UsageError('no password given');
  } else {
    throw new UsageError('missing --password-stdin: without a terminal the password is read from stdin (echo … | fecr login --password-stdin)');
  }

  const token = await loginToAuthServer(profile.authUrl, base, password);
  const session = await decodeSession(ctx, token, 'keychain');
  const where = await saveToken({ env: ctx.io.env, configDir: active.configDir, warn: (l) => writeLine(ctx.io.stderr, l) }, name, token);
  if (base !== profile.base) await (await openProfiles(ctx.io.env)).set(name, 'base', base, ctx.io.cwd);
  const until = session.claims.exp ? ` until ${new Date(session.claims.exp * 1000).toISOString()}` : '';
  info(ctx, `logged in to ${profile.authUrl} as ${base} (profile "${name}", token in the ${where === 'keychain' ? 'OS keychain' : 'file'})${until}`);
  if (ctx.io.env.FECR_TOKEN) info(ctx, 'note: FECR_TOKEN is set in the environment and overrides the stored token');
}
