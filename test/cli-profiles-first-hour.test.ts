// The first hour with profiles (issue 13): a mistyped profile name is a usage error with "did you mean", never a
// silent new local profile; `fecr config set` takes several KEY=VALUE pairs; operator verbs refuse a remote
// profile instead of reading local data; a token the service refuses before its own expiry is "session revoked".
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';
import { postJson } from './helpers/e2e.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const dir = tempDir('fecr-first-hour-');
const home = join(dir, 'home');
/** FECR_DATA_DIR always set: a verb that falls back to the platform data dir must never touch the real one. */
const env = { HOME: home, FECR_NO_KEYCHAIN: '1', FECR_DATA_DIR: join(dir, 'env-data') };
const configFile = join(home, '.config', 'fecr', 'config.json');
const FIXTURE = new URL('../fixtures/documents/01-fe-servicios-13.json', import.meta.url).pathname;

const fecr = (args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}) => runCli(args, { env: { ...env, ...opts.env }, cwd: dir, stdin: opts.stdin });
const profiles = (): Record<string, Record<string, string>> => (existsSync(configFile) ? JSON.parse(readFileSync(configFile, 'utf8')).profiles : {});

function oneLine(r: CliRun, code: number, re: RegExp, what: string): void {
  expect(r.code, `${what}: ${r.stderr}`).toBe(code);
  expect(r.stdout, what).toBe('');
  expect(r.stderr.trim().split('\n'), what).toHaveLength(1);
  expect(r.stderr, what).toMatch(re);
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fecr config set with several KEY=VALUE pairs', () => {
  it('creates a remote profile in one line; the old KEY VALUE form still works', async () => {
    const r = await fecr(['config', 'set', 'mode=remote', 'authUrl=https://auth.example.com/', 'baseUrl=https://api.example.com', 'base=acme', '--profile', 'hosted']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.trim().split('\n')).toEqual([
      'profile "hosted": mode = remote',
      'profile "hosted": authUrl = https://auth.example.com',
      'profile "hosted": baseUrl = https://api.example.com',
      'profile "hosted": base = acme',
    ]);
    expect(profiles().hosted).toEqual({ mode: 'remote', authUrl: 'https://auth.example.com', baseUrl: 'https://api.example.com', base: 'acme' });
    // A value may contain "=" (split at the first one); the two-argument form keeps its meaning.
    expect((await fecr(['config', 'set', 'base', 'a=b', '--profile', 'two'])).code).toBe(0);
    expect((await fecr(['config', 'set', 'account=x=y', '--profile', 'two'])).code).toBe(0);
    expect(profiles().two).toEqual({ base: 'a=b', account: 'x=y' });
  });

  it('checks every pair before writing anything: one bad key or value is a usage error and nothing is stored', async () => {
    const cases: [string[], RegExp][] = [
      [['mode=remote', 'authUrl=ftp://x.example.com'], /^error: authUrl: must be an http\(s\) URL/],
      [['mode=remote', 'colour=red'], /^error: unknown key "colour" \(keys: mode, env, dataDir, account, authUrl, baseUrl, base, smtpUrl, mailFrom, mailReplyTo, recibidosTrust, haciendaUrl, emulatorFaults, recibidosPlazoDias, recibidosAvisoDias, contingencia, contingenciaPlazoHoras\)\n$/],
      [['mode=remote', 'mode=local'], /^error: mode is given twice\n$/],
      [['mode', 'remote', 'base=acme'], /^error: config set takes KEY VALUE, or KEY=VALUE pairs/],
      [['mode'], /^error: config set takes KEY VALUE, or KEY=VALUE pairs/],
      [['=remote'], /^error: unknown key ""/],
    ];
    for (const [pairs, re] of cases) oneLine(await fecr(['config', 'set', ...pairs, '--profile', 'bad']), 2, re, pairs.join(' '));
    expect(profiles().bad).toBeUndefined();
  });
});

describe('an unknown profile is a usage error with "did you mean", for --profile and FECR_PROFILE', () => {
  it('send --profile nope: exit 2, nothing sent, nothing created', async () => {
    const r = await fecr(['send', FIXTURE, '--profile', 'nope']);
    oneLine(r, 2, /^error: --profile: no profile named "nope" \(profiles: default, hosted, two; fecr config set KEY=VALUE --profile nope creates it\)\n$/, 'send');
    expect(existsSync(env.FECR_DATA_DIR)).toBe(false);
    expect(Object.keys(profiles())).not.toContain('nope');
  });

  it('FECR_PROFILE=hostd and --profile hostd name the closest profile', async () => {
    oneLine(await fecr(['documents', 'list'], { env: { FECR_PROFILE: 'hostd' } }), 2, /^error: FECR_PROFILE: no profile named "hostd"; did you mean "hosted"\? /, 'FECR_PROFILE');
    oneLine(await fecr(['login', '--profile', 'hostd', '--password-stdin'], { stdin: 'x\n' }), 2, /^error: --profile: no profile named "hostd"; did you mean "hosted"\? /, 'login');
    oneLine(await fecr(['whoami'], { env: { FECR_PROFILE: 'Hosted' } }), 2, /did you mean "hosted"\?/, 'whoami');
    oneLine(await fecr(['config', 'get', 'mode', '--profile', 'defualt']), 2, /^error: --profile: no profile named "defualt"; did you mean "default"\? /, 'config get');
    oneLine(await fecr(['config', 'unset', 'base', '--profile', 'hostd']), 2, /did you mean "hosted"/, 'config unset');
    oneLine(await fecr(['config', 'list'], { env: { FECR_PROFILE: 'hostd' } }), 2, /did you mean "hosted"/, 'config list');
    oneLine(await fecr(['cabys', 'cafe', '--profile', 'hostd']), 2, /did you mean "hosted"/, 'cabys');
    expect(Object.keys(profiles())).not.toContain('hostd');
  });

  it('"default" always exists; "demo" before fecr demo says how to create it', async () => {
    expect((await fecr(['config', 'get', 'mode', '--profile', 'default'])).stdout).toBe('local\n');
    oneLine(await fecr(['documents', 'list', '--profile', 'demo']), 2, /^error: --profile: no profile named "demo" yet: fecr demo creates it\n$/, 'demo');
  });

  it('config set creates a profile, which then works everywhere', async () => {
    expect((await fecr(['config', 'set', 'env=local', `dataDir=${join(dir, 'fresh-data')}`, '--profile', 'fresh'])).code).toBe(0);
    const r = await fecr(['documents', 'list', '--json'], { env: { FECR_PROFILE: 'fresh' } });
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('operator verbs (data dir only) refuse a remote profile', () => {
  const refused = (verb: string) => new RegExp(`^error: fecr ${verb} works on a service's data dir \\(a local profile or --data-dir\\); profile "hosted" is remote\\n$`);

  it('accounts, keys, tokens and webhooks list|replay: one line, exit 2, with --profile and FECR_PROFILE', async () => {
    const cases: [string, string[], string?][] = [
      ['accounts list', ['accounts', 'list']],
      ['accounts create', ['accounts', 'create', 'acme', '--password-stdin'], 'una-clave-larga\n'],
      ['accounts disable', ['accounts', 'disable', 'acme']],
      ['accounts enable', ['accounts', 'enable', 'acme']],
      ['accounts passwd', ['accounts', 'passwd', 'acme', '--password-stdin'], 'otra-clave-larga\n'],
      ['accounts set', ['accounts', 'set', 'acme', '--webhook-url', 'http://127.0.0.1:9/hook']],
      ['keys rotate', ['keys', 'rotate']],
      ['keys list', ['keys', 'list']],
      ['tokens revoke', ['tokens', 'revoke', 'some-jti']],
      ['webhooks list', ['webhooks', 'list', '--account', 'acme']],
      ['webhooks replay', ['webhooks', 'replay', '1', '--account', 'acme']],
    ];
    for (const [verb, args, stdin] of cases) {
      oneLine(await fecr([...args, '--profile', 'hosted'], { stdin }), 2, refused(verb), verb);
      oneLine(await fecr(args, { stdin, env: { FECR_PROFILE: 'hosted' } }), 2, refused(verb), `${verb} (FECR_PROFILE)`);
    }
    expect(existsSync(env.FECR_DATA_DIR)).toBe(false);
  });

  it('with --data-dir they act on it; a local profile gives its own data dir', async () => {
    const srv = join(dir, 'srv');
    const c = await fecr(['accounts', 'create', 'acme', '--password-stdin', '--data-dir', srv, '--profile', 'hosted'], { stdin: 'una-clave-larga\n' });
    expect(c.code, c.stderr).toBe(0);
    const l = await fecr(['accounts', 'list', '--json', '--data-dir', srv], { env: { FECR_PROFILE: 'hosted' } });
    expect(l.code, l.stderr).toBe(0);
    expect(JSON.parse(l.stdout).map((a: { base: string }) => a.base)).toEqual(['acme']);

    expect((await fecr(['config', 'set', 'mode=local', `dataDir=${srv}`, '--profile', 'ops'])).code).toBe(0);
    const viaProfile = await fecr(['accounts', 'list', '--json', '--profile', 'ops']);
    expect(viaProfile.code, viaProfile.stderr).toBe(0);
    expect(JSON.parse(viaProfile.stdout).map((a: { base: string }) => a.base)).toEqual(['acme']);
    const wl = await fecr(['webhooks', 'list', '--account', 'acme', '--json'], { env: { FECR_PROFILE: 'ops' } });
    expect(wl.code, wl.stderr).toBe(0);
    expect(JSON.parse(wl.stdout)).toEqual([]);
    expect(existsSync(env.FECR_DATA_DIR)).toBe(false);
  });
});

describe('a revoked session (real fecr serve) says "session revoked", exit 4; an expired one keeps "session expired"', () => {
  const PASSWORD = 'clave-revocada-2026';
  const srv = join(dir, 'revoke-srv');
  const serverEnv = { HOME: join(dir, 'server-home'), FECR_DATA_DIR: srv, FECR_NO_KEYCHAIN: '1' };
  const cenv = { HOME: join(dir, 'client-home'), FECR_NO_KEYCHAIN: '1', FECR_DATA_DIR: join(dir, 'client-data'), FECR_PROFILE: 'hosted' };
  const tokenFile = join(cenv.HOME, '.config', 'fecr', 'tokens', 'hosted.token');
  let serve: Spawned<{ authUrl: string; baseUrl: string }>;
  const c = (args: string[], opts: { stdin?: string; now?: () => Date } = {}) => runCli(args, { env: cenv, ...opts });

  beforeAll(async () => {
    const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: `${PASSWORD}\n` });
    expect(acct.code, acct.stderr).toBe(0);
    serve = await spawnFecr(['serve', '--data-dir', srv, '--emulator-delay', '50'], { env: serverEnv });
    const set = await c(['config', 'set', 'mode=remote', `authUrl=${serve.ready.authUrl}`, `baseUrl=${serve.ready.baseUrl}`, 'base=acme']);
    expect(set.code, set.stderr).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
  });

  it('login, then the token is revoked on the server: the next verb and whoami say "session revoked"', async () => {
    const l = await c(['login', '--password-stdin'], { stdin: `${PASSWORD}\n` });
    expect(l.code, l.stderr).toBe(0);
    const ok = await c(['whoami', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect((await postJson(`${serve.ready.authUrl}/logout`, {}, token)).status).toBe(200);

    const verb = await c(['documents', 'list']);
    expect(verb.code, verb.stderr).toBe(4);
    expect(verb.stderr).toBe('session revoked: run fecr login\n');
    const who = await c(['whoami']);
    expect(who.code, who.stderr).toBe(4);
    expect(who.stderr).toBe('session revoked: run fecr login\n');
    expect(who.stdout).toBe('');
    // Past its own expiry, the same token is "expired" (checked here, before any request).
    const late = await c(['documents', 'list'], { now: () => new Date(Date.now() + 9 * 3600_000) });
    expect(late.code).toBe(4);
    expect(late.stderr).toBe('session expired: run fecr login\n');
  });

  it('the operator revokes by jti (fecr tokens revoke): the same line', async () => {
    expect((await c(['login', '--password-stdin'], { stdin: `${PASSWORD}\n` })).code).toBe(0);
    const jti = JSON.parse((await c(['whoami', '--json'])).stdout).jti as string;
    const rv = await runCli(['tokens', 'revoke', jti, '--data-dir', srv], { env: serverEnv });
    expect(rv.code, rv.stderr).toBe(0);
    // The service trusts a checked token for up to 2 s: ask until it has noticed.
    let r: CliRun;
    const deadline = Date.now() + 10_000;
    do {
      await new Promise((res) => setTimeout(res, 300));
      r = await c(['cabys', 'cafe']);
    } while (r.code === 0 && Date.now() < deadline);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toBe('session revoked: run fecr login\n');
  });
});
