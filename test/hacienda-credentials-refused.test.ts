// The TokenManager never asks the IdP again for a password it refused (issue 25, point 7): every failed login counts
// towards the real IdP's lock-out of the taxpayer's account. A Keycloak look-alike on 127.0.0.1 answers as the real
// one does (NOTES §4.2; Keycloak's password grant): 401 `invalid_grant` "Invalid user credentials" for a wrong
// password, 400 `invalid_grant` "Account disabled" / "Account is temporarily disabled" for a disabled or locked
// account; and 503 / 429 for an outage, which are NOT refusals (retried as before, asked again on the next call).
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadCredentialsError, IdpUnavailableError, TokenManager, tokenPath, logoutPath } from '../src/hacienda/client/index.js';

interface Answer {
  status: number;
  body: unknown;
}

let server: Server;
let base = '';
let answer: (username: string, password: string) => Answer = () => ({ status: 500, body: {} });
let requests = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const a = answer(form.get('username') ?? '', form.get('password') ?? '');
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function manager(): TokenManager {
  return new TokenManager({
    endpoints: { environment: 'sandbox', tokenUrl: base + tokenPath('rut-stag'), logoutUrl: base + logoutPath('rut-stag'), clientId: 'api-stag' },
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, maxServerWaitMs: 10 },
  });
}

const USER = 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr';
const token = { access_token: 'a.b.c', expires_in: 300, refresh_token: 'r.s.t', refresh_expires_in: 1200, token_type: 'bearer' };

describe('a refused password is not asked again', () => {
  it.each([
    ['401 invalid_grant (wrong password)', 401, 'Invalid user credentials'],
    ['400 invalid_grant (account disabled)', 400, 'Account disabled'],
    ['400 invalid_grant (account locked by brute-force detection)', 400, 'Account is temporarily disabled'],
  ])('%s: one request, then the same error without any; a new password or forgetRefusal asks again', async (_name, status, description) => {
    answer = (_u, p) => (p === 'buena' ? { status: 200, body: token } : { status, body: { error: 'invalid_grant', error_description: description } });
    const tm = manager();
    const before = requests;
    const first = await tm.getAccessToken({ username: USER, password: 'mala' }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(BadCredentialsError);
    expect((first as BadCredentialsError).detail).toBe(description);
    expect(requests - before).toBe(1);
    // Ten more callers (ten documents' sends): the same refusal, no request.
    const again = await Promise.allSettled(Array.from({ length: 10 }, () => tm.getAccessToken({ username: USER, password: 'mala' })));
    expect(again.every((r) => r.status === 'rejected' && r.reason instanceof BadCredentialsError)).toBe(true);
    expect(tm.isRefused({ username: USER, password: 'mala' })).toBe(true);
    expect(requests - before).toBe(1);
    // The password changed (the issuer was updated): asked.
    expect(await tm.getAccessToken({ username: USER, password: 'buena' })).toBe('a.b.c');
    expect(requests - before).toBe(2);
    // The same refused password once its owner says it changed (forgetRefusal): asked once more, refused once more.
    tm.forgetRefusal(USER);
    tm.forget(USER);
    await expect(tm.getAccessToken({ username: USER, password: 'mala' })).rejects.toBeInstanceOf(BadCredentialsError);
    expect(requests - before).toBe(3);
    await expect(tm.getAccessToken({ username: USER, password: 'mala' })).rejects.toBeInstanceOf(BadCredentialsError);
    expect(requests - before).toBe(3);
    await tm.close();
  });

  it.each([
    ['503 (outage)', 503],
    ['429 (throttled)', 429],
  ])('%s is not a refusal: retried inside the call, and asked again on the next call', async (_name, status) => {
    answer = () => ({ status, body: { error: 'temporarily_unavailable' } });
    const tm = manager();
    const before = requests;
    await expect(tm.getAccessToken({ username: USER, password: 'mala' })).rejects.toBeInstanceOf(IdpUnavailableError);
    expect(requests - before).toBe(3);
    await expect(tm.getAccessToken({ username: USER, password: 'mala' })).rejects.toBeInstanceOf(IdpUnavailableError);
    expect(requests - before).toBe(6);
    expect(tm.isRefused({ username: USER, password: 'mala' })).toBe(false);
    await tm.close();
  });

  it('another user of the same IdP is not affected by a refusal', async () => {
    answer = (u) => (u === USER ? { status: 401, body: { error: 'invalid_grant', error_description: 'Invalid user credentials' } } : { status: 200, body: token });
    const tm = manager();
    await expect(tm.getAccessToken({ username: USER, password: 'mala' })).rejects.toBeInstanceOf(BadCredentialsError);
    expect(await tm.getAccessToken({ username: 'cpj-3-101-654321@stag.comprobanteselectronicos.go.cr', password: 'mala' })).toBe('a.b.c');
    await tm.close();
  });
});
