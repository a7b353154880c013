/**
 * Which Backend a verb talks to: the profile in use (`--profile`, i.e. the context's `profile`, else FECR_PROFILE,
 * else "default") decides.
 * Remote profiles get the HTTP backend with the stored session token (checked for expiry here first: an expired
 * token is the one line "session expired: run fecr login" and exit 4, with no request made; one the service then
 * refuses before its expiry is "session revoked: run fecr login", exit 4); local profiles get
 * the in-process service of src/client/local-backend.ts. Light to import: everything heavy loads on use.
 */
import type { ClientContext as Ctx } from './context.js';
import { ClientError } from './errors.js';
import type { Backend } from './backend.js';
import type { LocalBackendOptions } from './local-backend.js';
import type { ActiveProfile, LocalProfile, ProfileSource, RemoteProfile } from './profiles.js';
import type { TokenSource } from './secret-store.js';
import type { HaciendaEndpoints } from '../hacienda/client/endpoints.js';

export const SESSION_EXPIRED_LINE = 'session expired: run fecr login';
/** A token the service refuses before its own expiry (logout elsewhere, `fecr tokens revoke`, a disabled account). */
export const SESSION_REVOKED_LINE = 'session revoked: run fecr login';

/**
 * The name of the profile in use: `--profile`, else FECR_PROFILE, else "default". A bad name is a usage error;
 * existence is not checked (`fecr config set` creates profiles): see `existingProfileName`.
 */
export async function profileName(ctx: Ctx): Promise<string> {
  const { profileNameFrom } = await import('./profiles.js');
  return profileNameFrom(ctx.io.env, ctx.profile);
}

/** The profile in use and where it was named (--profile, FECR_PROFILE, or '' for the implicit "default"). */
export async function profileChoiceOf(ctx: Ctx): Promise<{ name: string; from: ProfileSource }> {
  const { profileChoice } = await import('./profiles.js');
  return profileChoice(ctx.io.env, ctx.profile);
}

/** The name of the profile in use, which must exist (else a usage error with the closest existing name). */
export async function existingProfileName(ctx: Ctx): Promise<string> {
  const { openProfiles } = await import('./profiles.js');
  const { name, from } = await profileChoiceOf(ctx);
  (await openProfiles(ctx.io.env)).requireExisting(name, from);
  return name;
}

/** Loads the profile in use (or the one named); an unknown name is a usage error with "did you mean". */
export async function activeProfile(ctx: Ctx, name?: string): Promise<ActiveProfile> {
  const { loadProfile, profileChoice } = await import('./profiles.js');
  const choice = profileChoice(ctx.io.env, name ?? ctx.profile);
  return loadProfile(ctx.io.env, choice.name, choice.from);
}

/** The claims fecr reads from a session token (decoded, not verified: the service verifies). */
export interface SessionClaims {
  sub?: string;
  iss?: string;
  aud?: string | string[];
  jti?: string;
  iat?: number;
  exp?: number;
}

export interface Session {
  token: string;
  source: TokenSource;
  claims: SessionClaims;
  /** Seconds left (negative once expired); null when the token has no exp. */
  secondsLeft: number | null;
}

/** The one line of an expired session (the CLI shows it as is, exit 4). */
export function sessionExpired(): never {
  throw new ClientError('auth', SESSION_EXPIRED_LINE, { bare: true });
}

/** The one line of a session the service refused before its expiry (the CLI shows it as is, exit 4). */
export function sessionRevoked(): never {
  throw new ClientError('auth', SESSION_REVOKED_LINE, { bare: true });
}

/** Whether a session is past its own expiry by the CLI's clock (the service refusing it otherwise means revoked). */
export function sessionPastExpiry(ctx: Ctx, session: Session): boolean {
  const exp = session.claims.exp;
  return typeof exp === 'number' && exp * 1000 <= ctx.now().getTime();
}

/** Decodes a token's payload; a token that is not a JWT is an authentication error. */
export async function decodeSession(ctx: Ctx, token: string, source: TokenSource): Promise<Session> {
  const { decodeJwt } = await import('jose');
  let claims: SessionClaims;
  try {
    claims = decodeJwt(token) as SessionClaims;
  } catch {
    const where = source === 'env' ? 'FECR_TOKEN' : `the stored token (${source})`;
    throw new ClientError('auth', `${where} is not a valid session token: run fecr login`);
  }
  const secondsLeft = typeof claims.exp === 'number' ? claims.exp - Math.floor(ctx.now().getTime() / 1000) : null;
  return { token, source, claims, secondsLeft };
}

/**
 * The session of a remote profile: the token (FECR_TOKEN, the keychain or the fallback file) and its claims.
 * `{allowExpired: false}` (the default) turns an expired token into the "session expired" line and exit 4;
 * no token at all is a one-line exit 4 too. With `{optional: true}` a missing token is null instead.
 */
export async function openSession(ctx: Ctx, active: ActiveProfile, opts: { allowExpired?: boolean; optional?: boolean } = {}): Promise<Session | null> {
  const { readToken } = await import('./secret-store.js');
  const found = await readToken({ env: ctx.io.env, configDir: active.configDir }, active.name);
  if (!found) {
    if (opts.optional) return null;
    const { flagFor } = await import('./profiles.js');
    throw new ClientError('auth', `not logged in: run fecr login${flagFor(active.name)}`);
  }
  const session = await decodeSession(ctx, found.token, found.source);
  if (!opts.allowExpired && session.secondsLeft !== null && session.secondsLeft <= 0) sessionExpired();
  return session;
}

/**
 * The Backend for a profile (default: the one in use). Remote: RemoteBackend on `baseUrl` with the session token
 * (checked for expiry first), retrying as BULK_RETRY says for a batch. Local: `openLocalBackend(ctx, profile, opts)`
 * of src/client/local-backend.ts. The caller closes it.
 */
export async function openBackend(ctx: Ctx, name?: string, opts: LocalBackendOptions = {}): Promise<Backend> {
  const active = await activeProfile(ctx, name);
  if (active.profile.mode === 'local') return openLocal(ctx, active.profile, opts);
  return openRemote(ctx, active as ActiveProfile & { profile: RemoteProfile }, opts);
}

/**
 * A batch's retries against a hosted service (remote-backend.ts `retry`): a refused connection too (the service
 * restarting), then a reset or a 502/503/504 of an idempotent call, up to 10 retries from 250 ms doubling to 5 s
 * (≈ 33 s in all): a restart of that length costs no row. A row that still fails is an `error` in the results, listed
 * in the summary, and `--resume` sends it again.
 */
export const BULK_RETRY = { attempts: 10, baseMs: 250, maxMs: 5000, refused: true } as const;

async function openRemote(ctx: Ctx, active: ActiveProfile & { profile: RemoteProfile }, opts: LocalBackendOptions = {}): Promise<Backend> {
  const session = (await openSession(ctx, active))!;
  const { RemoteBackend } = await import('./remote-backend.js');
  return new RemoteBackend({
    baseUrl: active.profile.baseUrl,
    token: session.token,
    tokenExpired: () => sessionPastExpiry(ctx, session),
    ...(opts.bulk ? { retry: BULK_RETRY } : {}),
  });
}

async function openLocal(ctx: Ctx, profile: LocalProfile, opts: LocalBackendOptions): Promise<Backend> {
  const { openLocalBackend } = await import('./local-backend.js');
  const endpoints = await haciendaEndpointsOf(profile);
  return openLocalBackend(ctx, endpoints ? { ...profile, endpoints } : profile, opts);
}

/**
 * A local profile's Hacienda URLs when it names its own (`haciendaUrl`), all at that URL: in env sandbox|production a
 * proxy or an emulator in Hacienda's place; in env local an external `fecr hacienda serve` (the emulator's realm and
 * paths), whose presence keeps the embedded emulator from starting (local-backend.ts).
 */
export async function haciendaEndpointsOf(profile: LocalProfile): Promise<HaciendaEndpoints | undefined> {
  if (!profile.haciendaUrl) return undefined;
  return (await import('../hacienda/client/endpoints.js')).resolveEndpoints(profile.env, { baseUrl: profile.haciendaUrl });
}
