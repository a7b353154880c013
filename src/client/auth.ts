/**
 * The auth server of a hosted fecr, as the client sees it: `POST /login` (a token for an account) and
 * `POST /logout` (the caller's token revoked). Answers become values or ClientErrors with a code; the CLI prints.
 */
import { ClientError } from './errors.js';
import { HttpClient, NetworkError, type HttpResponse } from './http-client.js';

/** The `message` of the spec's error body, else the status. */
export function messageOf(res: HttpResponse): string {
  const m = (res.json as { message?: unknown } | undefined)?.message;
  return typeof m === 'string' ? m : `HTTP ${res.status}`;
}

/**
 * A session token for `base`. A refusal (wrong password, unknown or disabled account, too many failures) is an
 * `auth` ClientError; fields the server says are missing are `usage`; anything else, or no answer, is `error`.
 */
export async function login(authUrl: string, base: string, password: string, http = new HttpClient({ timeoutMs: 30_000 })): Promise<string> {
  try {
    let res: HttpResponse;
    try {
      res = await http.postJson(`${authUrl}/login`, { base, password });
    } catch (e) {
      if (e instanceof NetworkError) throw new ClientError('error', e.message, { cause: e });
      throw e;
    }
    const body = res.json as { token?: unknown } | undefined;
    if (res.status === 200 && typeof body?.token === 'string') return body.token;
    if (res.status === 401) throw new ClientError('auth', `login refused: ${messageOf(res)}`);
    if (res.status === 429) {
      const after = res.headers['retry-after'];
      throw new ClientError('auth', `login refused: ${messageOf(res)}${after ? ` (retry after ${String(after)} s)` : ''}`);
    }
    if (res.status === 400) throw new ClientError('usage', `login refused: ${messageOf(res)}`);
    throw new ClientError('error', `login failed: ${authUrl}/login answered ${res.status} (${messageOf(res)})`);
  } finally {
    await http.close();
  }
}

/** What `POST /logout` did: `revoked`, `already` (the server no longer takes the token), or `failed` with why. */
export type LogoutOutcome = { result: 'revoked' } | { result: 'already' } | { result: 'failed'; reason: string };

export async function logout(authUrl: string, token: string, http = new HttpClient({ timeoutMs: 30_000 })): Promise<LogoutOutcome> {
  try {
    const res = await http.postJson(`${authUrl}/logout`, {}, { token });
    if (res.status === 200) return { result: 'revoked' };
    if (res.status === 401) return { result: 'already' };
    return { result: 'failed', reason: `${authUrl}/logout answered ${res.status} (${messageOf(res)})` };
  } catch (e) {
    if (!(e instanceof NetworkError)) throw e;
    return { result: 'failed', reason: e.message };
  } finally {
    await http.close();
  }
}
