/**
 * The emulator's IdP: a Keycloak look-alike for realms `rut` (client api-prod) and `rut-stag` (client
 * api-stag). Password and refresh_token grants, logout; RS256 JWTs signed with jose. Access tokens live
 * 300 s and refresh tokens 1200 s by default (as the staging IdP). Default mode accepts any non-empty
 * username/password; strict mode checks a `{username: password}` map.
 */
import { createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, exportJWK, type JWTPayload } from 'jose';
import { REALMS } from '../hacienda/client/endpoints.js';
import type { EmulatorKeys } from './keys.js';
import type { EmulatorEnvironment, EmulatorStore } from './store.js';
import { codeTable } from '../core/code-table.js';

export interface RealmInfo {
  realm: string;
  clientId: string;
  environment: EmulatorEnvironment;
}

export const EMULATOR_REALMS: Record<string, RealmInfo> = codeTable({
  [REALMS.production.realm]: { realm: REALMS.production.realm, clientId: REALMS.production.clientId, environment: 'production' },
  [REALMS.sandbox.realm]: { realm: REALMS.sandbox.realm, clientId: REALMS.sandbox.clientId, environment: 'sandbox' },
});

export interface IdpOptions {
  store: EmulatorStore;
  keys: EmulatorKeys;
  now: () => number;
  /** Base URL for the `iss` claim. */
  baseUrl: () => string;
  /** Strict mode: only these users, with these passwords. */
  users?: Record<string, string>;
  accessTokenTtlSec?: number;
  refreshTokenTtlSec?: number;
}

export interface IdpStats {
  passwordGrants: number;
  refreshGrants: number;
  failedGrants: number;
  logouts: number;
  /** Password grants per username. */
  grantsByUser: Record<string, number>;
}

export interface IdpAnswer {
  status: number;
  body?: Record<string, unknown>;
}

export type AccessCheck =
  | { ok: true; username: string; realm: RealmInfo; sid: string }
  | { ok: false; reason: string };

interface Claims extends JWTPayload {
  typ?: string;
  azp?: string;
  sid?: string;
  session_state?: string;
  preferred_username?: string;
}

const err = (status: number, error: string, description?: string): IdpAnswer => ({
  status,
  body: description ? { error, error_description: description } : { error },
});

export class EmulatorIdp {
  readonly stats: IdpStats = { passwordGrants: 0, refreshGrants: 0, failedGrants: 0, logouts: 0, grantsByUser: {} };
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly accessTtl: number;
  private readonly refreshTtl: number;

  constructor(private readonly opts: IdpOptions) {
    this.privateKey = createPrivateKey(opts.keys.privateKeyPem);
    this.publicKey = createPublicKey(opts.keys.publicKeyPem);
    this.accessTtl = opts.accessTokenTtlSec ?? 300;
    this.refreshTtl = opts.refreshTokenTtlSec ?? 1200;
  }

  get strict(): boolean {
    return this.opts.users !== undefined;
  }

  private issuer(realm: string): string {
    return `${this.opts.baseUrl()}/auth/realms/${realm}`;
  }

  async token(realmName: string, form: Record<string, string | undefined>): Promise<IdpAnswer> {
    const realm = EMULATOR_REALMS[realmName];
    if (!realm) return err(404, 'Realm does not exist');
    const grantType = form['grant_type'];
    if (!grantType) return err(400, 'invalid_request', 'Missing form parameter: grant_type');
    if (form['client_id'] !== realm.clientId) {
      this.stats.failedGrants++;
      return err(401, 'unauthorized_client', 'UNKNOWN_CLIENT: Client was not identified by any client authenticator');
    }
    if (grantType === 'password') return this.passwordGrant(realm, form['username'] ?? '', form['password'] ?? '');
    if (grantType === 'refresh_token') return this.refreshGrant(realm, form['refresh_token'] ?? '');
    return err(400, 'unsupported_grant_type', 'Unsupported grant_type');
  }

  private async passwordGrant(realm: RealmInfo, username: string, password: string): Promise<IdpAnswer> {
    const users = this.opts.users;
    const ok = username.length > 0 && password.length > 0 && (!users || (Object.hasOwn(users, username) && users[username] === password));
    if (!ok) {
      this.stats.failedGrants++;
      return err(401, 'invalid_grant', 'Invalid user credentials');
    }
    this.stats.passwordGrants++;
    this.stats.grantsByUser[username] = (this.stats.grantsByUser[username] ?? 0) + 1;
    this.opts.store.rememberUser(username, this.opts.now());
    return this.issue(realm, username, randomUUID());
  }

  private async refreshGrant(realm: RealmInfo, refreshToken: string): Promise<IdpAnswer> {
    const claims = await this.verify(refreshToken);
    if (!claims || claims.typ !== 'Refresh' || claims.iss !== this.issuer(realm.realm) || claims.azp !== realm.clientId || !claims.sid) {
      this.stats.failedGrants++;
      return err(400, 'invalid_grant', 'Invalid refresh token');
    }
    if (this.opts.store.isSessionRevoked(claims.sid)) {
      this.stats.failedGrants++;
      return err(400, 'invalid_grant', 'Session not active');
    }
    this.stats.refreshGrants++;
    return this.issue(realm, claims.preferred_username ?? String(claims.sub), claims.sid);
  }

  private async issue(realm: RealmInfo, username: string, sid: string): Promise<IdpAnswer> {
    const nowSec = Math.floor(this.opts.now() / 1000);
    const iss = this.issuer(realm.realm);
    const sub = username;
    const common = { azp: realm.clientId, sid, session_state: sid, preferred_username: username, scope: '' };
    const access = await new SignJWT({ ...common, typ: 'Bearer' })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.opts.keys.kid })
      .setIssuer(iss)
      .setAudience('account')
      .setSubject(sub)
      .setJti(randomUUID())
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + this.accessTtl)
      .sign(this.privateKey);
    const refresh = await new SignJWT({ ...common, typ: 'Refresh' })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.opts.keys.kid })
      .setIssuer(iss)
      .setAudience(iss)
      .setSubject(sub)
      .setJti(randomUUID())
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + this.refreshTtl)
      .sign(this.privateKey);
    return {
      status: 200,
      body: {
        access_token: access,
        expires_in: this.accessTtl,
        refresh_expires_in: this.refreshTtl,
        refresh_token: refresh,
        token_type: 'bearer',
        'not-before-policy': 0,
        session_state: sid,
        scope: '',
      },
    };
  }

  async logout(realmName: string, form: Record<string, string | undefined>): Promise<IdpAnswer> {
    const realm = EMULATOR_REALMS[realmName];
    if (!realm) return err(404, 'Realm does not exist');
    if (form['client_id'] !== realm.clientId) return err(401, 'unauthorized_client', 'UNKNOWN_CLIENT: Client was not identified by any client authenticator');
    const claims = await this.verify(form['refresh_token'] ?? '');
    if (!claims || claims.typ !== 'Refresh' || !claims.sid) return err(400, 'invalid_grant', 'Invalid refresh token');
    this.opts.store.revokeSession(claims.sid, (claims.exp ?? 0) * 1000);
    this.stats.logouts++;
    return { status: 204 };
  }

  /**
   * Tokens whose signature already verified, with their claims: a client sends the same access token with
   * every request for minutes, and RS256 verification costs more than the rest of a POST's checks. An entry
   * is used only while the token has not expired by the emulator's clock (the check jose makes); sessions
   * closed by logout are still refused (checked on every use).
   */
  private readonly verified = new Map<string, Claims>();

  private async verify(token: string): Promise<Claims | undefined> {
    if (!token) return undefined;
    const nowSec = Math.floor(this.opts.now() / 1000);
    const hit = this.verified.get(token);
    if (hit && typeof hit.exp === 'number' && hit.exp > nowSec && (hit.nbf === undefined || hit.nbf <= nowSec)) return hit;
    try {
      const { payload } = await jwtVerify(token, this.publicKey, { algorithms: ['RS256'], currentDate: new Date(this.opts.now()) });
      if (this.verified.size >= 1_000) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, payload as Claims);
      return payload as Claims;
    } catch {
      return undefined;
    }
  }

  /** Checks a bearer access token. */
  async checkAccess(token: string): Promise<AccessCheck> {
    const claims = await this.verify(token);
    if (!claims) return { ok: false, reason: 'token inválido o expirado' };
    if (claims.typ !== 'Bearer' || !claims.sid || !claims.iss) return { ok: false, reason: 'no es un token de acceso' };
    const realmName = claims.iss.slice(claims.iss.lastIndexOf('/') + 1);
    const realm = EMULATOR_REALMS[realmName];
    if (!realm || claims.iss !== this.issuer(realm.realm)) return { ok: false, reason: 'emisor del token desconocido' };
    if (this.opts.store.isSessionRevoked(claims.sid)) return { ok: false, reason: 'sesión cerrada' };
    return { ok: true, username: claims.preferred_username ?? String(claims.sub), realm, sid: claims.sid };
  }

  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    const jwk = await exportJWK(this.publicKey);
    return { keys: [{ ...jwk, kid: this.opts.keys.kid, alg: 'RS256', use: 'sig' }] };
  }
}
