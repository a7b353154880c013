/**
 * Secrets at rest: AES-256-GCM with a 32-byte master key. The master key comes from FECR_MASTER_KEY
 * (base64), else the OS keychain (@napi-rs/keyring), else a 0600 file in the data dir (with a
 * warning); it is generated on first start and never logged.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ownerOnlyFile } from '../adapters/owner-only.js';
import path from 'node:path';

const VERSION = 'v1';

/** Seals and opens strings with AES-256-GCM. Output: `v1.<iv>.<tag>.<ciphertext>` (base64url parts). */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the master key must be 32 bytes');
    this.#key = Buffer.from(key);
  }

  seal(plain: string, context = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  /** Throws when the value was not sealed with this key and context (tampered or wrong key). */
  open(sealed: string, context = ''): string {
    const [v, iv, tag, ct] = sealed.split('.');
    if (v !== VERSION || iv === undefined || tag === undefined || ct === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }

  sealJson(value: unknown, context = ''): string {
    return this.seal(JSON.stringify(value), context);
  }

  openJson<T>(sealed: string, context = ''): T {
    return JSON.parse(this.open(sealed, context)) as T;
  }
}

export type MasterKeySource = 'env' | 'keychain' | 'file';

export interface MasterKeyOptions {
  dataDir: string;
  env: Record<string, string | undefined>;
  /** Called once with a one-line warning when the key falls back to a file. */
  warn?: (message: string) => void;
  /** Skip the OS keychain (tests of the fallback path). */
  noKeychain?: boolean;
}

/** Finds (or creates on first start) the master key. */
export async function loadMasterKey(opts: MasterKeyOptions): Promise<{ key: Buffer; source: MasterKeySource }> {
  const fromEnv = opts.env.FECR_MASTER_KEY;
  if (fromEnv) {
    const key = Buffer.from(fromEnv, 'base64');
    if (key.length !== 32) throw new Error('FECR_MASTER_KEY must be 32 bytes in base64');
    return { key, source: 'env' };
  }
  // A key file, once written, stays the key of this data dir: never switch sources under sealed data.
  const file = path.join(opts.dataDir, 'master.key');
  if (existsSync(file)) {
    // A key file left 0644 (an older fecr, a copy, a restored backup) is closed to 0600 as it is opened (issue 37).
    ownerOnlyFile(file);
    return { key: Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'), source: 'file' };
  }
  const account = `master-key:${path.resolve(opts.dataDir)}`;
  if (!opts.noKeychain && opts.env.FECR_NO_KEYCHAIN !== '1') {
    try {
      const { Entry } = await import('@napi-rs/keyring');
      const entry = new Entry('fecr', account);
      const existing = entry.getPassword();
      if (existing) return { key: Buffer.from(existing, 'base64'), source: 'keychain' };
      const fresh = randomBytes(32).toString('base64');
      entry.setPassword(fresh);
      if (entry.getPassword() === fresh) return { key: Buffer.from(fresh, 'base64'), source: 'keychain' };
      try {
        entry.deletePassword();
      } catch {
        // nothing stored
      }
    } catch {
      // no keychain here (headless Linux, containers, CI): fall back to a file below
    }
  }
  const key = randomBytes(32);
  try {
    writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    // Another process created it first (two fecr processes starting at once): use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return { key: Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'), source: 'file' };
    throw e;
  }
  chmodSync(file, 0o600);
  opts.warn?.(`no OS keychain available: the master key is in ${file} (mode 0600); set FECR_MASTER_KEY to keep it elsewhere`);
  return { key, source: 'file' };
}
