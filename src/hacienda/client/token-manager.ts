/**
 * Access tokens from Hacienda's IdP (Keycloak, OpenID Connect Resource Owner Password grant; NOTES §4.2).
 *
 * - One session per (environment, username): concurrent callers share the cached token and a single
 *   in-flight login or refresh (no thundering herd).
 * - Access tokens live 300 s; they are renewed with the refresh_token grant `refreshSkewMs` (30 s) before
 *   expiry, falling back to a password login when the refresh token is no longer valid.
 * - After a 401 from the API, `renewAccessToken(creds, rejected)` renews once for everybody who saw the
 *   same rejected token.
 * - `logout` ends the IdP session (POST client_id + refresh_token).
 * - A password the IdP refused (`invalid_grant`: wrong password, account disabled or locked) is not tried again:
 *   the same username and password fail at once with the same BadCredentialsError, without a request, until the
 *   password changes or `forgetRefusal` is called (its owner's credentials were updated). Every failed login counts
 *   towards the real IdP's lock-out of the taxpayer's account. Network errors, 5xx and 429 are not remembered.
 * The clock is injected (`now`); TLS verification is never disabled.
 */
import { createHash } from 'node:crypto';
import type { HaciendaEndpoints } from './endpoints.js';
import { BadCredentialsError, IdpClientError, IdpError, IdpUnavailableError } from './errors.js';
import { HttpClient, NetworkError, jsonBody, type HttpResponse } from './http.js';
import { backoffDelay, retryPolicy, serverWaitMs, timing, type RetryPolicy, type Timing } from './retry.js';

export interface HaciendaCredentials {
  /** usuarioHacienda, opaque (e.g. `cpj-3-101-123456@stag.comprobanteselectronicos.go.cr`). */
  username: string;
  /** claveHacienda. */
  password: string;
}

/** `now`, `sleep` and `random` (Timing) may be injected; default the clock, setTimeout and Math.random. */
export interface TokenManagerOptions extends Partial<Timing> {
  endpoints: Pick<HaciendaEndpoints, 'environment' | 'tokenUrl' | 'logoutUrl' | 'clientId'>;
  http?: HttpClient;
  /** Renew this long before the access token expires (default 30 000 ms). */
  refreshSkewMs?: number;
  /** Retries of IdP calls on network errors / 5xx / 429 (default 3 attempts, 300 ms base). */
  retry?: Partial<RetryPolicy>;
}

/** A token grant as the IdP returns it. */
export interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_token?: string;
  refresh_expires_in?: number;
  token_type?: string;
  session_state?: string;
  scope?: string;
}

interface Session {
  username: string;
  passwordHash: string;
  accessToken: string;
  accessExpiresAt: number;
  refreshToken?: string;
  refreshExpiresAt?: number;
}

export interface TokenManagerStats {
  passwordGrants: number;
  refreshGrants: number;
  logouts: number;
}

const hash = (s: string): string => createHash('sha256').update(s).digest('hex');

export class TokenManager {
  readonly endpoints: TokenManagerOptions['endpoints'];
  private readonly http: HttpClient;
  private readonly ownsHttp: boolean;
  private readonly t: Timing;
  private readonly skew: number;
  private readonly retry: RetryPolicy;
  private readonly sessions = new Map<string, Session>();
  private readonly inflight = new Map<string, Promise<Session>>();
  /** Refused logins by session key: the refused password's hash and the IdP's answer. */
  private readonly refused = new Map<string, { passwordHash: string; error: BadCredentialsError }>();
  /** Grants this manager asked for (observability and tests). */
  readonly stats: TokenManagerStats = { passwordGrants: 0, refreshGrants: 0, logouts: 0 };

  constructor(opts: TokenManagerOptions) {
    this.endpoints = opts.endpoints;
    this.ownsHttp = !opts.http;
    this.http = opts.http ?? new HttpClient();
    this.t = timing(opts);
    this.skew = opts.refreshSkewMs ?? 30_000;
    this.retry = retryPolicy(opts.retry, { maxAttempts: 3, baseDelayMs: 300, maxDelayMs: 5_000, maxServerWaitMs: 30_000 });
  }

  private key(username: string): string {
    return `${this.endpoints.environment}\u0000${this.endpoints.tokenUrl}\u0000${username}`;
  }

  /** A valid access token for these credentials (cached, refreshed or obtained as needed). */
  async getAccessToken(creds: HaciendaCredentials): Promise<string> {
    const s = await this.session(creds, undefined);
    return s.accessToken;
  }

  /**
   * Called after the API answered 401 to `rejectedToken`: renews the token once (refresh grant, else login).
   * Callers that saw the same rejected token share one renewal; a token already renewed is returned as is.
   */
  async renewAccessToken(creds: HaciendaCredentials, rejectedToken: string): Promise<string> {
    const s = await this.session(creds, rejectedToken);
    return s.accessToken;
  }

  private async session(creds: HaciendaCredentials, rejected: string | undefined): Promise<Session> {
    if (!creds.username || !creds.password) {
      throw new BadCredentialsError(creds.username ?? '', this.endpoints.environment, 'username and password are required');
    }
    const key = this.key(creds.username);
    const pwHash = hash(creds.password);
    const refusal = this.refused.get(key);
    if (refusal && refusal.passwordHash === pwHash) throw refusal.error;
    const usable = (s: Session | undefined): s is Session =>
      !!s && s.passwordHash === pwHash && s.accessToken !== rejected && this.fresh(s);
    for (let round = 0; round < 3; round++) {
      const pending = this.inflight.get(key);
      if (pending) {
        // Share the in-flight login/refresh; its failure is this caller's failure too.
        const s = await pending;
        if (usable(s)) return s;
        continue;
      }
      const s = this.sessions.get(key);
      if (usable(s)) return s;
      return this.startOperation(key, creds);
    }
    return this.startOperation(key, creds);
  }

  private fresh(s: Session): boolean {
    return s.accessExpiresAt - this.skew > this.t.now();
  }

  private startOperation(key: string, creds: HaciendaCredentials): Promise<Session> {
    const existing = this.inflight.get(key);
    if (existing) return existing;
    const op = (async () => {
      const prev = this.sessions.get(key);
      const samePassword = prev?.passwordHash === hash(creds.password);
      if (prev && samePassword && prev.refreshToken && (prev.refreshExpiresAt ?? 0) - this.skew > this.t.now()) {
        const refreshed = await this.refreshGrant(creds, prev.refreshToken);
        if (refreshed) return refreshed;
      }
      return this.passwordGrant(creds);
    })();
    this.inflight.set(key, op);
    op.then(
      (s) => {
        this.sessions.set(key, s);
        if (this.inflight.get(key) === op) this.inflight.delete(key);
      },
      () => {
        if (this.inflight.get(key) === op) this.inflight.delete(key);
      },
    );
    return op;
  }

  private async passwordGrant(creds: HaciendaCredentials): Promise<Session> {
    this.stats.passwordGrants++;
    const form = new URLSearchParams({
      grant_type: 'password',
      client_id: this.endpoints.clientId,
      client_secret: '',
      username: creds.username,
      password: creds.password,
      scope: '',
    });
    const started = this.t.now();
    const res = await this.post(this.endpoints.tokenUrl, form);
    if (res.status === 200) {
      this.refused.delete(this.key(creds.username));
      return this.toSession(creds, res, started);
    }
    const err = idpError(res);
    if (err.error === 'invalid_grant' || (res.status === 401 && !err.error)) {
      const refusal = new BadCredentialsError(creds.username, this.endpoints.environment, err.description ?? err.error, res.status);
      this.refused.set(this.key(creds.username), { passwordHash: hash(creds.password), error: refusal });
      throw refusal;
    }
    throw this.otherIdpError(res, err);
  }

  /** Returns undefined when the refresh token is no longer accepted (caller logs in again). */
  private async refreshGrant(creds: HaciendaCredentials, refreshToken: string): Promise<Session | undefined> {
    this.stats.refreshGrants++;
    const form = new URLSearchParams({ grant_type: 'refresh_token', client_id: this.endpoints.clientId, refresh_token: refreshToken });
    const started = this.t.now();
    const res = await this.post(this.endpoints.tokenUrl, form);
    if (res.status === 200) return this.toSession(creds, res, started);
    const err = idpError(res);
    if (err.error === 'invalid_grant' || res.status === 400 || res.status === 401) {
      if (err.error === 'unauthorized_client' || err.error === 'invalid_client') throw this.otherIdpError(res, err);
      return undefined;
    }
    throw this.otherIdpError(res, err);
  }

  private otherIdpError(res: HttpResponse, err: { error?: string; description?: string }): Error {
    if (err.error === 'unauthorized_client' || err.error === 'invalid_client' || /UNKNOWN_CLIENT/i.test(err.description ?? '')) {
      return new IdpClientError(this.endpoints.clientId, this.endpoints.tokenUrl, err.description ?? err.error, res.status);
    }
    if (res.status === 404) {
      return new IdpClientError(this.endpoints.clientId, this.endpoints.tokenUrl, err.description ?? err.error ?? 'realm not found (HTTP 404)', 404);
    }
    const detail = err.description ?? err.error ?? res.body.toString('utf8').slice(0, 200);
    return new IdpError(`Hacienda's IdP answered HTTP ${res.status} at ${this.endpoints.tokenUrl}${detail ? `: ${detail}` : ''}`, {
      status: res.status,
      detail,
    });
  }

  private toSession(creds: HaciendaCredentials, res: HttpResponse, started: number): Session {
    const body = jsonBody(res) as Partial<TokenResponse> | undefined;
    if (!body || typeof body.access_token !== 'string' || typeof body.expires_in !== 'number') {
      throw new IdpError(`Hacienda's IdP answered 200 without access_token/expires_in at ${this.endpoints.tokenUrl}`, { status: 200 });
    }
    const s: Session = {
      username: creds.username,
      passwordHash: hash(creds.password),
      accessToken: body.access_token,
      // Expiry counted from when we asked, so network time never makes us overestimate the lifetime.
      accessExpiresAt: started + body.expires_in * 1000,
    };
    if (typeof body.refresh_token === 'string' && body.refresh_token) {
      s.refreshToken = body.refresh_token;
      s.refreshExpiresAt = started + (typeof body.refresh_expires_in === 'number' ? body.refresh_expires_in : body.expires_in) * 1000;
    }
    return s;
  }

  /** POST a form to the IdP, retrying transport errors, 5xx and 429 (a failed grant has no side effect). */
  private async post(url: string, form: URLSearchParams): Promise<HttpResponse> {
    let last = '';
    let lastStatus: number | undefined;
    let lastErr: unknown;
    for (let attempt = 1; attempt <= this.retry.maxAttempts; attempt++) {
      if (attempt > 1) await this.t.sleep(backoffDelay(attempt - 1, this.retry, this.t.random));
      try {
        const res = await this.http.send(url, {
          method: 'POST',
          kind: 'idp',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: form.toString(),
        });
        if (res.status >= 500 || res.status === 429) {
          last = `HTTP ${res.status}`;
          lastStatus = res.status;
          const wait = serverWaitMs(res.status, res.headers, this.t.now());
          if (wait !== undefined && attempt < this.retry.maxAttempts) {
            if (wait > this.retry.maxServerWaitMs) break;
            await this.t.sleep(wait);
          }
          continue;
        }
        return res;
      } catch (err) {
        if (!(err instanceof NetworkError)) throw err;
        last = err.code;
        lastStatus = undefined;
        lastErr = err;
      }
    }
    throw new IdpUnavailableError(url, `${last} after ${this.retry.maxAttempts} attempts`, { status: lastStatus, cause: lastErr });
  }

  /** Ends the IdP session of this user (best effort; never throws). Returns true when the IdP confirmed. */
  async logout(username: string): Promise<boolean> {
    const key = this.key(username);
    const pending = this.inflight.get(key);
    if (pending) await pending.catch(() => undefined);
    const s = this.sessions.get(key);
    this.sessions.delete(key);
    if (!s?.refreshToken) return false;
    this.stats.logouts++;
    try {
      const res = await this.http.send(this.endpoints.logoutUrl, {
        method: 'POST',
        kind: 'idp',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: this.endpoints.clientId, refresh_token: s.refreshToken }).toString(),
      });
      return res.status >= 200 && res.status < 300;
    } catch {
      return false;
    }
  }

  /** Logs every cached session out and releases the HTTP pool if this manager created it. */
  async close(): Promise<void> {
    const users = [...this.sessions.values()].map((s) => s.username);
    await Promise.all(users.map((u) => this.logout(u)));
    if (this.ownsHttp) await this.http.close();
  }

  /** Forgets a cached token (and a refused password) without calling the IdP. */
  forget(username: string): void {
    this.sessions.delete(this.key(username));
    this.refused.delete(this.key(username));
  }

  /** The IdP may be asked again for this user's current password (its credentials were updated). */
  forgetRefusal(username: string): void {
    this.refused.delete(this.key(username));
  }

  /** Whether this username's password `password` was refused by the IdP (and is not asked again). */
  isRefused(creds: HaciendaCredentials): boolean {
    return this.refused.get(this.key(creds.username))?.passwordHash === hash(creds.password);
  }
}

function idpError(res: HttpResponse): { error?: string; description?: string } {
  const b = jsonBody(res) as { error?: unknown; error_description?: unknown } | undefined;
  const out: { error?: string; description?: string } = {};
  if (b && typeof b.error === 'string') out.error = b.error;
  if (b && typeof b.error_description === 'string') out.description = b.error_description;
  return out;
}
