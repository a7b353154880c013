// Issue 25, point 10f: IPv6 forms that embed an IPv4 address are judged as that address by the webhook guard
// (hosted mode: --env sandbox|production). `http://[::7f00:1]` (the deprecated IPv4-compatible form of 127.0.0.1,
// which ipaddr.js calls plain unicast) passed it; so did the same form of private and metadata addresses, 6to4 of
// them was refused only as "6to4". Checked: the address judgement, the registration (POST /api/configurar/webhook of a
// real service in env sandbox), and the connect-time lookup (a name resolving to such an address).
import type { LookupFunction } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/server/service.js';
import { createAccount } from '../src/service/accounts.js';
import { guardedLookup, nonPublicReason, WebhookTargetError } from '../src/service/webhook-targets.js';
import { tempDir } from './helpers/cli.js';
import { postJson } from './helpers/e2e.js';

const REFUSED: [string, RegExp][] = [
  ['::7f00:1', /loopback.*IPv4-compatible form of 127\.0\.0\.1/],
  ['::7f01:203', /loopback.*127\.1\.2\.3/],
  ['0:0:0:0:0:0:a00:5', /private.*IPv4-compatible form of 10\.0\.0\.5/],
  ['::c0a8:10a', /private.*192\.168\.1\.10/],
  ['::a9fe:a9fe', /metadata.*169\.254\.169\.254/],
  ['::6440:1', /carrier-grade NAT/],
  ['::ffff:7f00:1', /loopback.*IPv4-mapped/],
  ['::ffff:0:a00:5', /private.*IPv4-translated/],
  ['64:ff9b::7f00:1', /loopback.*NAT64/],
  ['64:ff9b::a9fe:a9fe', /metadata.*NAT64/],
  ['2002:7f00:1::1', /loopback.*6to4 form of 127\.0\.0\.1/],
  ['2002:a00:5::', /private.*6to4 form of 10\.0\.0\.5/],
  ['2002:a9fe:a9fe::1', /metadata.*6to4/],
  // Deprecated tunnelling forms are no target even around a public address.
  ['::808:808', /deprecated IPv4-compatible/],
  ['2002:808:808::1', /deprecated 6to4/],
];

describe('nonPublicReason: IPv6 forms embedding IPv4', () => {
  it.each(REFUSED)('%s is refused (%s)', (address, reason) => {
    expect(nonPublicReason(address)).toMatch(reason);
    expect(nonPublicReason(`[${address}]`)).toMatch(reason);
  });

  it('mapped, translated and NAT64 forms of a public address, and plain public IPv6, stay allowed; :: and ::1 keep their reasons', () => {
    for (const a of ['::ffff:808:808', '::ffff:0:808:808', '64:ff9b::808:808', '2606:4700::1111', '2001:4860:4860::8888']) expect(nonPublicReason(a), a).toBeNull();
    expect(nonPublicReason('::1')).toBe('a loopback address');
    expect(nonPublicReason('::')).toBe('an unspecified address (::)');
  });
});

describe('connect time: a name resolving to an embedded loopback address gets no connection', () => {
  it.each([['::7f00:1'], ['2002:7f00:1::1'], ['::a00:5']])('%s', async (address) => {
    const lookup = guardedLookup({ publicOnly: true, resolve: async () => [{ address, family: 6 }] }) as unknown as (
      host: string,
      opts: Parameters<LookupFunction>[1],
      cb: (err: Error | null, address?: unknown, family?: number) => void,
    ) => void;
    const err = await new Promise<Error | null>((resolve) => lookup('evil.example.com', { all: true }, (e) => resolve(e)));
    expect(err).toBeInstanceOf(WebhookTargetError);
    expect(err!.message).toMatch(/refused.*resolves to/);
  });
});

describe('the service in env sandbox: POST /api/configurar/webhook', () => {
  let svc: RunningService | undefined;
  afterAll(async () => {
    await svc?.close();
  });

  it('refuses http://[::7f00:1] and the other embedded forms with a 400; a public address is accepted', async () => {
    const dataDir = tempDir('fecr-guard-embedded-');
    svc = await startService({ dataDir, env: { FECR_NO_KEYCHAIN: '1', HOME: dataDir }, roles: ['auth', 'api'], environment: 'sandbox' });
    await createAccount(svc.opened.ctx, { base: 'acme', password: 'password-123' });
    const login = await postJson(`${svc.authUrl}/login`, { base: 'acme', password: 'password-123' });
    expect(login.status, login.text).toBe(200);
    const token = (login.body as { token: string }).token;
    for (const url of ['http://[::7f00:1]/hook', 'http://[::127.0.0.1]:8080/hook', 'https://[::a00:5]/hook', 'http://[2002:7f00:1::1]/hook', 'http://[64:ff9b::7f00:1]/hook']) {
      const r = await postJson(`${svc.baseUrl}/api/configurar/webhook`, { url }, token);
      expect(r.status, `${url}: ${r.text}`).toBe(400);
      expect(r.body).toMatchObject({ details: [{ path: 'url', message: expect.stringMatching(/public/) }] });
    }
    const good = await postJson(`${svc.baseUrl}/api/configurar/webhook`, { url: 'http://[::ffff:5db8:d70e]/hook' }, token); // 93.184.215.14
    expect(good.status, good.text).toBe(200);
  });
});
