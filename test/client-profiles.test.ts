// Profiles (conf in the config dir of the injected environment): fecr config get|set|unset|list, --profile,
// FECR_PROFILE, checked values; and what login/logout/whoami say on a local profile.
import { existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDir, resolveProfile } from '../src/client/profiles.js';
import { runCli, tempDir } from './helpers/cli.js';

describe('fecr config (profiles)', () => {
  const home = tempDir('fecr-profiles-');
  const env = { HOME: home };
  const file = join(home, '.config', 'fecr', 'config.json');

  it('an unconfigured profile is local with its defaults, and nothing is written', async () => {
    const r = await runCli(['config', 'list', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ current: 'default', file, profiles: { default: { mode: 'local', env: 'local', account: 'local' } } });
    expect(existsSync(file)).toBe(false);
    expect((await runCli(['config', 'get', 'mode'], { env })).stdout).toBe('local\n');
    expect((await runCli(['config', 'get', 'env'], { env })).stdout).toBe('local\n');
    const unset = await runCli(['config', 'get', 'authUrl'], { env });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toBe('error: authUrl is not set in profile "default" (set it with: fecr config set authUrl VALUE)\n');
  });

  it('sets and gets keys per profile (--profile and FECR_PROFILE), normalising values', async () => {
    for (const [k, v] of [
      ['authUrl', 'https://auth.example.com/'],
      ['baseUrl', 'https://api.example.com'],
      ['base', 'acme'],
    ]) {
      const r = await runCli(['config', 'set', k!, v!, '--profile', 'hosted'], { env });
      expect(r.code, r.stderr).toBe(0);
    }
    expect((await runCli(['--profile', 'hosted', 'config', 'get', 'authUrl'], { env })).stdout).toBe('https://auth.example.com\n');
    expect((await runCli(['config', 'get', 'mode'], { env: { ...env, FECR_PROFILE: 'hosted' } })).stdout).toBe('remote\n');
    // --profile wins over FECR_PROFILE
    expect((await runCli(['config', 'get', 'mode', '--profile', 'default'], { env: { ...env, FECR_PROFILE: 'hosted' } })).stdout).toBe('local\n');
    // the default profile is untouched
    expect((await runCli(['config', 'get', 'mode'], { env })).stdout).toBe('local\n');

    const dd = await runCli(['config', 'set', 'dataDir', 'relative/data'], { env, cwd: home });
    expect(dd.code, dd.stderr).toBe(0);
    expect((await runCli(['config', 'get', 'dataDir'], { env })).stdout).toBe(`${join(home, 'relative/data')}\n`);
    expect((await runCli(['config', 'set', 'env', 'sandbox'], { env })).code).toBe(0);

    const list = JSON.parse((await runCli(['config', 'list', '--json'], { env: { ...env, FECR_PROFILE: 'hosted' } })).stdout);
    expect(list.current).toBe('hosted');
    expect(list.profiles).toEqual({
      hosted: { mode: 'remote', authUrl: 'https://auth.example.com', baseUrl: 'https://api.example.com', base: 'acme' },
      default: { mode: 'local', env: 'sandbox', dataDir: join(home, 'relative/data'), account: 'local' },
    });
    // TSV when piped: profile, key, value
    const tsv = (await runCli(['config', 'list'], { env })).stdout.trim().split('\n');
    expect(tsv[0]).toBe('profile\tkey\tvalue');
    expect(tsv).toContain('hosted\tbaseUrl\thttps://api.example.com');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.hosted.authUrl).toBe('https://auth.example.com');

    expect((await runCli(['config', 'unset', 'env'], { env })).code).toBe(0);
    expect((await runCli(['config', 'get', 'env'], { env })).stdout).toBe('local\n');
  });

  it('refuses bad values, unknown keys and bad profile names with a usage error naming them', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['config', 'set', 'env', 'staging'], env, /^error: env: must be local, sandbox or production \(got "staging"\)\n$/],
      [['config', 'set', 'authUrl', 'ftp://x.example.com'], env, /^error: authUrl: must be an http\(s\) URL/],
      [['config', 'set', 'baseUrl', 'not a url'], env, /^error: baseUrl: /],
      [['config', 'set', 'mode', 'cloud'], env, /^error: mode: must be local or remote/],
      [['config', 'set', 'base', '   '], env, /^error: base: must not be empty/],
      [['config', 'set', 'colour', 'red'], env, /^error: unknown key "colour" \(keys: mode, env, dataDir, account, authUrl, baseUrl, base, smtpUrl, mailFrom, mailReplyTo, recibidosTrust, haciendaUrl, emulatorFaults, recibidosPlazoDias, recibidosAvisoDias, contingencia, contingenciaPlazoHoras\)\n$/],
      [['config', 'get', 'colour'], env, /^error: unknown key "colour"/],
      [['config', 'list', '--profile', '../etc'], env, /^error: --profile: "\.\.\/etc" is not a profile name/],
      [['config', 'list'], { ...env, FECR_PROFILE: 'a b' }, /^error: FECR_PROFILE: "a b" is not a profile name/],
    ];
    for (const [args, e, re] of cases) {
      const r = await runCli(args, { env: e });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(re);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });

  it('a remote profile without its URLs, or with a bad value in the file, names the key when used', async () => {
    expect((await runCli(['config', 'set', 'mode', 'remote', '--profile', 'half'], { env })).code).toBe(0);
    const r = await runCli(['whoami', '--profile', 'half'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: profile "half" is remote but has no authUrl (set it with: fecr config set authUrl URL --profile half)\n');

    const home2 = tempDir('fecr-profiles-bad-');
    mkdirSync(join(home2, '.config', 'fecr'), { recursive: true });
    writeFileSync(join(home2, '.config', 'fecr', 'config.json'), JSON.stringify({ profiles: { default: { mode: 'local', env: 'prod' } } }));
    const bad = await runCli(['whoami'], { env: { HOME: home2 } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: profile "default": env: must be local, sandbox or production \(fix it with: fecr config set env VALUE\)\n$/);

    writeFileSync(join(home2, '.config', 'fecr', 'config.json'), '{ not json');
    const broken = await runCli(['config', 'list'], { env: { HOME: home2 } });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/config\.json: invalid JSON/);
  });

  it('honours XDG_CONFIG_HOME over HOME', async () => {
    const xdg = tempDir('fecr-xdg-');
    const e = { HOME: home, XDG_CONFIG_HOME: xdg };
    expect(configDir(e)).toBe(join(xdg, 'fecr'));
    expect((await runCli(['config', 'set', 'base', 'xdg-acct', '--profile', 'x'], { env: e })).code).toBe(0);
    expect(existsSync(join(xdg, 'fecr', 'config.json'))).toBe(true);
    const other = await runCli(['config', 'get', 'base', '--profile', 'x'], { env }); // not in HOME's config
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/^error: --profile: no profile named "x" /);
  });

  it('login, logout and whoami on a local profile say there is nothing to log in to (exit 0)', async () => {
    for (const verb of ['login', 'logout', 'whoami']) {
      const r = await runCli([verb], { env });
      expect(r.code, verb).toBe(0);
      expect(r.stdout, verb).toBe('');
      expect(r.stderr.trim().split('\n'), verb).toHaveLength(1);
      expect(r.stderr, verb).toMatch(/^profile "default" is local: there is nothing to log in to/);
    }
  });

  it('resolveProfile: mode inferred from the URLs; keys of the other mode ignored', () => {
    expect(resolveProfile('p', {})).toEqual({ mode: 'local', env: 'local' });
    expect(resolveProfile('p', { authUrl: 'http://a', baseUrl: 'http://b/', dataDir: '/x' })).toEqual({ mode: 'remote', authUrl: 'http://a', baseUrl: 'http://b' });
    expect(resolveProfile('p', { mode: 'local', authUrl: 'http://a', env: 'production' })).toEqual({ mode: 'local', env: 'production' });
  });
});
