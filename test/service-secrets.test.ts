import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMasterKey, SecretBox } from '../src/service/secrets.js';
import { tempDir } from './helpers/cli.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));
  it('round-trips and never contains the plain text', () => {
    const sealed = box.seal('PIN 1234 ñ', 'issuer:1:3101123456');
    expect(sealed).not.toContain('1234');
    expect(box.open(sealed, 'issuer:1:3101123456')).toBe('PIN 1234 ñ');
    expect(box.seal('same')).not.toBe(box.seal('same')); // random IV
  });
  it('refuses a tampered value, another key and another context', () => {
    const sealed = box.seal('secreto', 'a');
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    expect(() => box.open([parts[0], parts[1], parts[2], ct.toString('base64url')].join('.'), 'a')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'a')).toThrow();
    expect(() => box.open(sealed, 'b')).toThrow();
    expect(() => box.open('nonsense')).toThrow(/not a sealed secret/);
  });
});

describe('master key', () => {
  it('comes from FECR_MASTER_KEY when set', async () => {
    const k = randomBytes(32);
    const r = await loadMasterKey({ dataDir: tempDir(), env: { FECR_MASTER_KEY: k.toString('base64') } });
    expect(r).toEqual({ key: k, source: 'env' });
    await expect(loadMasterKey({ dataDir: tempDir(), env: { FECR_MASTER_KEY: 'c2hvcnQ=' } })).rejects.toThrow(/32 bytes/);
  });
  it('falls back to a 0600 file with a warning, and finds the same key next time', async () => {
    const dir = tempDir();
    const warnings: string[] = [];
    const a = await loadMasterKey({ dataDir: dir, env: {}, noKeychain: true, warn: (m) => warnings.push(m) });
    expect(a.source).toBe('file');
    expect(warnings).toHaveLength(1);
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    const b = await loadMasterKey({ dataDir: dir, env: {}, noKeychain: true });
    expect(b.key.equals(a.key)).toBe(true);
    expect(readFileSync(join(dir, 'master.key'), 'utf8').trim()).toBe(a.key.toString('base64'));
  });
});
