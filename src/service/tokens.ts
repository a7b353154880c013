/**
 * Access tokens: RS256 JWTs with the spec's claims (iss = aud = the auth server's public URL, iat, exp = iat +
 * 28800, jti, sub = base = the account name), their verification for the client API (RS256 only, known kid,
 * issuer and audience, expiry, revocation, account still enabled) and revocation by jti.
 */
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import type { Store } from '../store/index.js';
import { accountsGeneration, BASE_PATTERN } from './accounts.js';
import type { ServiceContext } from './context.js';
import { currentKey, publicJwks, TOKEN_LIFETIME_SECONDS, type Jwks } from './keys.js';

export { TOKEN_LIFETIME_SECONDS } from './keys.js';

export interface IssuedToken {
  token: string;
  expires_in: number;
  token_type: 'Bearer';
}

export interface VerifiedToken {
  /** The account name (= sub). */
  base: string;
  jti: string;
  /** Expiry, epoch seconds (the claim). */
  exp: number;
}

/** `Authorization` header value → the token's account, or null for anything not acceptable. */
export type TokenVerifier = (authorization: string | undefined) => Promise<VerifiedToken | null>;

export interface TokenVerifierOptions {
  /** The auth server's public URL: the expected iss and aud. A function when it is only known after listen. */
  issuer: string | (() => string);
  /** 'local': the keys in the store (same data dir). A URL: a remote JWKS (the auth server's /.well-known/jwks.json). */
  jwks: 'local' | URL;
  /** Remote JWKS: minimum time between refetches (ms) on an unknown kid. Default 30 s. */
  remoteCooldownMs?: number;
  /** Remote JWKS: refetch after this age (ms). Default 10 min. */
  remoteCacheMaxAgeMs?: number;
  /** How long "not revoked, account enabled" is trusted per jti (ms). Default 2 s. */
  stateCacheMs?: number;
  /** How long a checked signature is trusted per exact token string (ms; expiry is still checked). Default 60 s. */
  signatureCacheMs?: number;
}

const MAX_JTI_LENGTH = 128;
const MAX_CACHE_ENTRIES = 50_000;
/** Tolerated clock skew on iat (s). */
const IAT_SKEW_SECONDS = 60;

/** Per store, in this process: revoked jtis seen (until their expiry) and briefly trusted good states. */
interface TokenState {
  revoked: Map<string, number>; // jti → expires_at (ms)
  ok: Map<string, { until: number; generation: number }>;
}
const states = new WeakMap<Store, TokenState>();
function stateOf(store: Store): TokenState {
  let s = states.get(store);
  if (!s) {
    s = { revoked: new Map(), ok: new Map() };
    states.set(store, s);
  }
  return s;
}

function bounded<K, V>(map: Map<K, V>, key: K, value: V): void {
  if (map.size >= MAX_CACHE_ENTRIES) map.clear();
  map.set(key, value);
}

/** Signs a token for the account with the current key. `issuer` is the auth server's public URL. */
export async function issueToken(ctx: ServiceContext, account: { base: string }, opts: { issuer: string }): Promise<IssuedToken> {
  const { kid, privateKey } = await currentKey(ctx);
  const iat = Math.floor(ctx.now() / 1000);
  const jti = ctx.randomBytes(16).toString('base64url');
  const token = await new SignJWT({ base: account.base })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
    .setIssuer(opts.issuer)
    .setAudience(opts.issuer)
    .setIssuedAt(iat)
    .setExpirationTime(iat + TOKEN_LIFETIME_SECONDS)
    .setJti(jti)
    .setSubject(account.base)
    .sign(privateKey);
  return { token, expires_in: TOKEN_LIFETIME_SECONDS, token_type: 'Bearer' };
}

/** The compact JWS of `Authorization: Bearer <token>`, or null. */
export function bearerToken(authorization: string | undefined): string | null {
  if (typeof authorization !== 'string') return null;
  const m = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)\s*$/i.exec(authorization);
  return m?.[1] ?? null;
}

/**
 * Revokes a token by jti until `exp` (epoch seconds; default: now + the token lifetime, the longest a token
 * can still live, for when only the jti is known). Also prunes expired revocations.
 */
export async function revokeToken(ctx: ServiceContext, jti: string, exp?: number): Promise<void> {
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) throw new Error('invalid jti');
  const expiresAt = exp !== undefined ? exp * 1000 : ctx.now() + TOKEN_LIFETIME_SECONDS * 1000;
  await ctx.store.db
    .insertInto('revoked_tokens')
    .values({ jti, expires_at: expiresAt })
    .onConflict((oc) => oc.column('jti').doUpdateSet({ expires_at: expiresAt }))
    .execute();
  const s = stateOf(ctx.store);
  s.ok.delete(jti);
  bounded(s.revoked, jti, expiresAt);
  await pruneRevokedTokens(ctx);
}

/** Deletes revocations of tokens that have expired anyway. Returns how many. */
export async function pruneRevokedTokens(ctx: ServiceContext): Promise<number> {
  const now = ctx.now();
  const r = await ctx.store.db.deleteFrom('revoked_tokens').where('expires_at', '<=', now).executeTakeFirst();
  const s = stateOf(ctx.store);
  for (const [jti, until] of s.revoked) if (until <= now) s.revoked.delete(jti);
  return Number(r.numDeletedRows ?? 0);
}

/** Whether a jti is revoked (in the store). */
export async function isRevoked(ctx: ServiceContext, jti: string): Promise<boolean> {
  const row = await ctx.store.db.selectFrom('revoked_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
  return row !== undefined;
}

/**
 * A verifier for the client API (and /logout). Accepts only RS256 tokens whose header kid is in the key set,
 * with the right iss and aud, unexpired (by ctx.now), a jti, sub = base naming an existing enabled account, not
 * revoked. Every other input gives null. Store failures reject (they are not the client's fault).
 */
export function createTokenVerifier(ctx: ServiceContext, opts: TokenVerifierOptions): TokenVerifier {
  const issuerOf = typeof opts.issuer === 'function' ? opts.issuer : () => opts.issuer as string;
  const stateCacheMs = opts.stateCacheMs ?? 2_000;
  const signatureCacheMs = opts.signatureCacheMs ?? 60_000;
  // token string → its checked claims: the RSA verify and claim checks run once per token per minute.
  const checked = new Map<string, { claims: VerifiedToken & { iat: number }; until: number; issuer: string }>();

  let keySet: JWTVerifyGetKey;
  if (opts.jwks === 'local') {
    let snapshot: { jwks: Jwks; set: JWTVerifyGetKey } | undefined;
    keySet = async (header, token) => {
      const jwks = await publicJwks(ctx);
      if (snapshot?.jwks !== jwks) snapshot = { jwks, set: createLocalJWKSet(jwks) };
      return snapshot.set(header, token);
    };
  } else {
    keySet = createRemoteJWKSet(opts.jwks, {
      cooldownDuration: opts.remoteCooldownMs ?? 30_000,
      cacheMaxAge: opts.remoteCacheMaxAgeMs ?? 600_000,
      timeoutDuration: 5_000,
    });
  }
  const getKey: JWTVerifyGetKey = (header, token) => {
    if (header.alg !== 'RS256' || typeof header.kid !== 'string' || header.kid === '') throw new Error('RS256 with a kid only');
    return keySet(header, token);
  };

  async function checkSignatureAndClaims(token: string, issuer: string, now: number): Promise<(VerifiedToken & { iat: number }) | null> {
    let payload: Record<string, unknown>;
    try {
      const verified = await jwtVerify(token, getKey, {
        algorithms: ['RS256'],
        issuer,
        audience: issuer,
        typ: 'JWT',
        currentDate: new Date(now),
        requiredClaims: ['iss', 'aud', 'iat', 'exp', 'jti', 'sub'],
      });
      payload = verified.payload as Record<string, unknown>;
    } catch {
      return null;
    }
    const { sub, base, jti, exp, iat } = payload;
    if (typeof sub !== 'string' || typeof base !== 'string' || sub !== base || !BASE_PATTERN.test(base)) return null;
    if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) return null;
    if (typeof exp !== 'number' || typeof iat !== 'number') return null;
    if (exp - iat > TOKEN_LIFETIME_SECONDS || iat > now / 1000 + IAT_SKEW_SECONDS) return null;
    return { base, jti, exp, iat };
  }

  return async (authorization) => {
    const token = bearerToken(authorization);
    if (token === null) return null;
    const now = ctx.now();
    const issuer = issuerOf();
    let claims: (VerifiedToken & { iat: number }) | null;
    const hit = checked.get(token);
    if (hit && hit.issuer === issuer && now >= hit.until - signatureCacheMs && now < hit.until) {
      claims = hit.claims;
      if (claims.exp * 1000 <= now || claims.iat > now / 1000 + IAT_SKEW_SECONDS) return null;
    } else {
      claims = await checkSignatureAndClaims(token, issuer, now);
      if (claims === null) return null;
      bounded(checked, token, { claims, until: now + signatureCacheMs, issuer });
    }
    const { base, jti, exp } = claims;

    const s = stateOf(ctx.store);
    const revokedUntil = s.revoked.get(jti);
    if (revokedUntil !== undefined) return null;
    const generation = accountsGeneration(ctx.store);
    const ok = s.ok.get(jti);
    if (ok && ok.until > now && ok.generation === generation) return { base, jti, exp };

    if (await isRevoked(ctx, jti)) {
      s.ok.delete(jti);
      bounded(s.revoked, jti, exp * 1000);
      return null;
    }
    const account = await ctx.store.db.selectFrom('accounts').select('disabled').where('base', '=', base).executeTakeFirst();
    if (!account || Number(account.disabled) === 1) {
      s.ok.delete(jti);
      return null;
    }
    bounded(s.ok, jti, { until: Math.min(now + stateCacheMs, exp * 1000), generation });
    return { base, jti, exp };
  };
}
