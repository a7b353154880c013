/**
 * Where Hacienda's services live, per environment (NOTES §4.1, §5). Every URL can be overridden;
 * `local` points every service at one base URL (the emulator's).
 */

export type HaciendaEnvironment = 'local' | 'sandbox' | 'production';

export interface HaciendaEndpoints {
  environment: HaciendaEnvironment;
  /** IdP token endpoint (OpenID Connect, password and refresh_token grants). */
  tokenUrl: string;
  /** IdP logout endpoint (POST client_id + refresh_token). */
  logoutUrl: string;
  /** OAuth client id: `api-prod` or `api-stag`. */
  clientId: string;
  /** Reception API base without trailing slash, e.g. `https://api.comprobanteselectronicos.go.cr/recepcion/v1`. */
  receptionBaseUrl: string;
  /** Public query API base without trailing slash (`https://api.hacienda.go.cr`). */
  queryBaseUrl: string;
}

export const IDP_HOST = 'https://idp.comprobanteselectronicos.go.cr';
export const API_HOST = 'https://api.comprobanteselectronicos.go.cr';
export const QUERY_BASE_URL = 'https://api.hacienda.go.cr';

/** IdP realm and client of each real environment. */
export const REALMS = {
  production: { realm: 'rut', clientId: 'api-prod', receptionPath: '/recepcion/v1' },
  sandbox: { realm: 'rut-stag', clientId: 'api-stag', receptionPath: '/recepcion-sandbox/v1' },
} as const;

export function tokenPath(realm: string): string {
  return `/auth/realms/${realm}/protocol/openid-connect/token`;
}
export function logoutPath(realm: string): string {
  return `/auth/realms/${realm}/protocol/openid-connect/logout`;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

export interface ResolveEndpointsOptions extends Partial<Omit<HaciendaEndpoints, 'environment'>> {
  /**
   * For `local`: the emulator's URL (e.g. `http://127.0.0.1:41234`); required. The local environment
   * uses the production-shaped paths (realm `rut`, client `api-prod`, `/recepcion/v1`), because the
   * emulator validates like production.
   */
  baseUrl?: string;
}

/** The endpoints of an environment, with any field overridden. */
export function resolveEndpoints(environment: HaciendaEnvironment, overrides: ResolveEndpointsOptions = {}): HaciendaEndpoints {
  const { baseUrl, ...rest } = overrides;
  let base: Omit<HaciendaEndpoints, 'environment'>;
  if (environment === 'local') {
    if (!baseUrl) throw new TypeError('the local environment needs baseUrl (the emulator URL)');
    const b = trimSlash(baseUrl);
    const r = REALMS.production;
    base = {
      tokenUrl: b + tokenPath(r.realm),
      logoutUrl: b + logoutPath(r.realm),
      clientId: r.clientId,
      receptionBaseUrl: b + r.receptionPath,
      queryBaseUrl: b,
    };
  } else {
    const r = REALMS[environment];
    const idp = baseUrl ? trimSlash(baseUrl) : IDP_HOST;
    const api = baseUrl ? trimSlash(baseUrl) : API_HOST;
    base = {
      tokenUrl: idp + tokenPath(r.realm),
      logoutUrl: idp + logoutPath(r.realm),
      clientId: r.clientId,
      receptionBaseUrl: api + r.receptionPath,
      queryBaseUrl: baseUrl ? trimSlash(baseUrl) : QUERY_BASE_URL,
    };
  }
  const out: HaciendaEndpoints = { environment, ...base };
  for (const [k, v] of Object.entries(rest)) {
    if (typeof v === 'string' && v.length > 0) (out as unknown as Record<string, string>)[k] = k === 'clientId' ? v : trimSlash(v);
  }
  return out;
}
