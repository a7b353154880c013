// Issue 25, point 10a: `fecr config` never prints a secret. An smtpUrl with a password is refused (config.json is
// not sealed) and the refusal shows the URL with the password masked; the same for a value that is no URL at all
// (a typo), in both forms of `config set`. A URL that carries a password anyway (authUrl, or a config.json edited
// by hand) is masked in `config set`'s echo, `config get`, `config list` and `config list --json`, and in the error
// of a profile that cannot be used. In-process, temp HOME.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redactUrlPassword } from '../src/client/profiles.js';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';

const SECRET = 'S3cr3t-pw';
const home = tempDir('fecr-config-secrets-');
const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => runCli(args, { env, cwd: home });
const printed = (r: CliRun) => r.stdout + r.stderr;

describe('fecr config set refuses a password without printing it', () => {
  it.each([
    ['KEY=VALUE', [`smtpUrl=smtp://facturas:${SECRET}@smtp.example.com:587`], 'smtp://facturas:***@smtp.example.com:587'],
    ['KEY VALUE', ['smtpUrl', `smtps://facturas%40acme.cr:${SECRET}@smtp.example.com`], 'smtps://facturas%40acme.cr:***@smtp.example.com'],
  ])('%s: exit 2, the URL shown with its password masked', async (_form, args, shown) => {
    const r = await fecr(['config', 'set', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/smtpUrl: must not carry a password/);
    expect(r.stderr).toContain(`(got "${shown}")`);
    expect(printed(r)).not.toContain(SECRET);
  });

  it('a value that is no URL (a typo) is masked from the first ":" to the last "@"', async () => {
    for (const value of [`smtp//facturas:${SECRET}@smtp.example.com`, `facturas:${SECRET}@smtp.example.com`, `smtp://facturas:${SECRET} x@smtp.example.com`]) {
      const r = await fecr(['config', 'set', `smtpUrl=${value}`]);
      expect(r.code, value).toBe(2);
      expect(r.stderr, value).toContain(':***@smtp.example.com');
      expect(printed(r), value).not.toContain(SECRET);
    }
  });

  it('nothing was written', async () => {
    const file = join(home, '.config', 'fecr', 'config.json');
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // No config file at all: nothing written.
    }
    expect(text).not.toContain(SECRET);
  });
});

describe('a URL with a password is masked wherever config shows it', () => {
  it('authUrl with user:password: set echoes it masked; get, list and list --json too', async () => {
    const set = await fecr(['config', 'set', 'mode=remote', `authUrl=https://ops:${SECRET}@auth.example.com`, 'baseUrl=https://api.example.com', '--profile', 'hosted']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain('authUrl = https://ops:***@auth.example.com');
    expect(printed(set)).not.toContain(SECRET);
    const get = await fecr(['config', 'get', 'authUrl', '--profile', 'hosted']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toBe('https://ops:***@auth.example.com\n');
    for (const args of [['config', 'list'], ['config', 'list', '--json']]) {
      const r = await fecr(args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('https://ops:***@auth.example.com');
      expect(printed(r)).not.toContain(SECRET);
    }
  });

  it('an smtpUrl with a password written into config.json by hand: get and list mask it; using the profile names no secret', async () => {
    const dir = join(home, '.config', 'fecr');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'config.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { profiles: Record<string, Record<string, string>> };
    config.profiles.mailer = { mode: 'local', dataDir: join(home, 'data'), smtpUrl: `smtp://facturas:${SECRET}@smtp.example.com:587` };
    writeFileSync(file, JSON.stringify(config));
    const get = await fecr(['config', 'get', 'smtpUrl', '--profile', 'mailer']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toBe('smtp://facturas:***@smtp.example.com:587\n');
    const list = await fecr(['config', 'list', '--json']);
    expect(JSON.parse(list.stdout).profiles.mailer.smtpUrl).toBe('smtp://facturas:***@smtp.example.com:587');
    expect(printed(list)).not.toContain(SECRET);
    const use = await fecr(['documents', 'list', '--profile', 'mailer']);
    expect(use.code).toBe(2);
    expect(use.stderr).toMatch(/smtpUrl: must not carry a password/);
    expect(printed(use)).not.toContain(SECRET);
  });
});

describe('redactUrlPassword', () => {
  it.each([
    ['smtp://user:pw@host:25', 'smtp://user:***@host:25'],
    ['smtp://user@host:587', 'smtp://user@host:587'],
    ['https://api.example.com', 'https://api.example.com'],
    ['smtp://user:p@ss@host', 'smtp://user:***@host'],
    ['user:pw@host', 'user:***@host'],
    ['/home/user/data', '/home/user/data'],
  ])('%s → %s', (input, output) => {
    expect(redactUrlPassword(input)).toBe(output);
  });
});
