// Administration commands of the local service, in-process against a temp data dir.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers/cli.js';

describe('fecr accounts / keys / tokens / webhooks (local data dir)', () => {
  const dir = tempDir();
  const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };

  it('creates an account with the password from stdin and a webhook whose secret is shown once', async () => {
    const r = await runCli(['accounts', 'create', 'acme', '--password-stdin', '--webhook-url', 'http://127.0.0.1:9/hook'], { env, stdin: 'supersecreto\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(r.stderr).toContain('no OS keychain available'); // the warned file fallback
    const key = join(dir, 'data', 'master.key');
    expect(existsSync(key)).toBe(true);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    // The database holds neither the password nor the webhook secret in clear.
    const db = readFileSync(join(dir, 'data', 'fecr.db'));
    expect(db.includes('supersecreto')).toBe(false);
    expect(db.includes(r.stdout.trim())).toBe(false);
    const list = await runCli(['accounts', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ base: 'acme', disabled: false, webhookUrl: 'http://127.0.0.1:9/hook' })]);
  });

  it('refuses a password as an argument, duplicates, short passwords and unknown accounts, in one line', async () => {
    const noStdin = await runCli(['accounts', 'create', 'other'], { env });
    expect(noStdin.code).toBe(2);
    expect(noStdin.stderr).toMatch(/--password-stdin/);
    const dup = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env, stdin: 'otraclave123\n' });
    expect(dup.code).toBe(1);
    expect(dup.stderr.trim().split('\n')).toHaveLength(1);
    const short = await runCli(['accounts', 'create', 'shorty', '--password-stdin'], { env, stdin: 'abc\n' });
    expect(short.code).toBe(1);
    const unknown = await runCli(['accounts', 'disable', 'nobody'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: /);
  });

  it('disables, enables, changes the password and the webhook', async () => {
    expect((await runCli(['accounts', 'disable', 'acme'], { env })).code).toBe(0);
    expect(JSON.parse((await runCli(['accounts', 'list', '--json'], { env })).stdout)[0].disabled).toBe(true);
    expect((await runCli(['accounts', 'enable', 'acme'], { env })).code).toBe(0);
    expect((await runCli(['accounts', 'passwd', 'acme', '--password-stdin'], { env, stdin: 'nuevaclave123\n' })).code).toBe(0);
    const set = await runCli(['accounts', 'set', 'acme', '--webhook-url', 'http://127.0.0.1:10/new'], { env });
    expect(set.code).toBe(0);
    expect(set.stdout.trim()).toMatch(/^whsec_/);
  });

  it('rotates signing keys and lists them; revokes a token id', async () => {
    const first = await runCli(['keys', 'rotate'], { env });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['keys', 'rotate'], { env });
    const keys = JSON.parse((await runCli(['keys', 'list', '--json'], { env })).stdout) as { kid: string; current: boolean }[];
    expect(keys.find((k) => k.current)?.kid).toBe(second.stdout.trim());
    expect(keys.map((k) => k.kid)).toContain(first.stdout.trim());
    expect((await runCli(['tokens', 'revoke', 'abc123'], { env })).code).toBe(0);
  });

  it('lists webhook deliveries of an account (none yet)', async () => {
    const r = await runCli(['webhooks', 'list', '--account', 'acme', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    const bad = await runCli(['webhooks', 'replay', 'x', '--account', 'acme'], { env });
    expect(bad.code).toBe(2);
  });
});
