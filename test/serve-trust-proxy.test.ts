// `fecr serve --trust-proxy` / FECR_TRUST_PROXY: which proxies' X-Forwarded-For names the client for login
// throttling. The parsing and address keys as functions, a bad value as a usage error, and `fecr serve --role auth`
// as a real child process behind a "load balancer" on 127.0.0.1 (every request comes from 127.0.0.1).
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { addressKey, parseTrustProxy } from '../src/server/rate-limit.js';
import { runCli, tempDir } from './helpers/cli.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const PASSWORD = 'contraseña-segura-1';

describe('parseTrustProxy and addressKey', () => {
  it('accepts addresses, CIDRs and proxy-addr names; refuses anything else', () => {
    expect(parseTrustProxy(' 10.0.0.0/8, 192.168.1.5 ,fd00::/8,::1,loopback')).toEqual(['10.0.0.0/8', '192.168.1.5', 'fd00::/8', '::1', 'loopback']);
    for (const bad of ['', ' , ', 'true', '*', 'lb.internal', '10.0.0.0/33', '10.1', '::1/129', '10.0.0.1;rm']) {
      expect(() => parseTrustProxy(bad), bad).toThrow();
    }
  });

  it('keys IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
    expect(addressKey('203.0.113.5')).toBe('203.0.113.5');
    expect(addressKey('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(addressKey('2001:db8:1:2::5')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:3::5')).not.toBe(addressKey('2001:db8:1:2::5'));
  });
});

describe('fecr serve --trust-proxy', () => {
  const dir = tempDir('fecr-trust-proxy-');
  const env = { HOME: join(dir, 'home'), FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1', FECR_TRUST_PROXY: '' };
  let serve: Spawned<{ authUrl: string }> | undefined;

  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
  });

  it('refuses a value that is not a list of addresses or CIDRs, naming the flag or the variable', async () => {
    const flag = await runCli(['serve', '--trust-proxy', '10.0.0.0/8,balanceador'], { env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--trust-proxy: "balanceador" is not an IP address or CIDR');
    const variable = await runCli(['serve'], { env: { ...env, FECR_TRUST_PROXY: 'true' } });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain('FECR_TRUST_PROXY: "true" is not an IP address or CIDR');
  });

  async function attempt(authUrl: string, base: string, password: string, xff: string): Promise<number> {
    const r = await request(`${authUrl}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': xff },
      body: JSON.stringify({ base, password }),
    });
    await r.body.text();
    return r.statusCode;
  }

  /** An attacker fails 6 times on the account, then the owner tries once: statuses of the attacker, the owner's. */
  async function scenario(authUrl: string, account: string): Promise<{ attacker: number[]; owner: number }> {
    const attacker: number[] = [];
    for (let i = 0; i < 6; i++) attacker.push(await attempt(authUrl, account, 'mala', '198.51.100.7'));
    return { attacker, owner: await attempt(authUrl, account, PASSWORD, '192.0.2.10') };
  }

  it('believes X-Forwarded-For from the proxies named (flag or variable) and ignores it otherwise', { timeout: 120_000 }, async () => {
    for (const base of ['uno', 'dos', 'tres']) {
      const r = await runCli(['accounts', 'create', base, '--password-stdin'], { env, stdin: `${PASSWORD}\n` });
      expect(r.code, r.stderr).toBe(0);
    }
    // --trust-proxy: the attacker's address is throttled, the owner behind the same proxy is not.
    serve = await spawnFecr(['serve', '--role', 'auth', '--trust-proxy', '127.0.0.1,::1'], { env });
    expect(await scenario(serve.ready.authUrl, 'uno')).toEqual({ attacker: [401, 401, 401, 401, 401, 429], owner: 200 });
    await serve.stop();

    // FECR_TRUST_PROXY, the same.
    serve = await spawnFecr(['serve', '--role', 'auth'], { env: { ...env, FECR_TRUST_PROXY: '127.0.0.0/8, ::1/128' } });
    expect(await scenario(serve.ready.authUrl, 'dos')).toEqual({ attacker: [401, 401, 401, 401, 401, 429], owner: 200 });
    await serve.stop();

    // Neither: X-Forwarded-For means nothing, every request is 127.0.0.1's, so the owner's comes from the
    // attacker's (throttled) address too.
    serve = await spawnFecr(['serve', '--role', 'auth'], { env });
    expect(await scenario(serve.ready.authUrl, 'tres')).toEqual({ attacker: [401, 401, 401, 401, 401, 429], owner: 429 });
  });
});
