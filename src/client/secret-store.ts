/**
 * Session tokens per profile: the OS keychain (@napi-rs/keyring, service "fecr", account "token:<profile>"); where
 * no keychain answers (headless Linux, containers, CI, or FECR_NO_KEYCHAIN=1) a file `tokens/<profile>.token` with
 * mode 0600 in the config dir, with one warning line. FECR_TOKEN overrides both. A token is never printed.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ClientError } from './errors.js';

export type TokenSource = 'env' | 'keychain' | 'file';

export interface SecretStoreOptions {
  env: Record<string, string | undefined>;
  /** The config dir (profiles.ts `configDir`). */
  configDir: string;
  /** Where the one warning line goes when the token lands in a file. */
  warn?: (line: string) => void;
}

export const KEYCHAIN_SERVICE = 'fecr';
export const keychainAccount = (profile: string): string => `token:${profile}`;

export function tokenFile(configDir: string, profile: string): string {
  return path.join(configDir, 'tokens', `${profile}.token`);
}

interface EntryLike {
  getPassword(): string | null | undefined;
  setPassword(password: string): void;
  deletePassword(): unknown;
}

async function keychainEntry(opts: SecretStoreOptions, profile: string): Promise<EntryLike | null> {
  if (opts.env.FECR_NO_KEYCHAIN === '1') return null;
  try {
    const { Entry } = await import('@napi-rs/keyring');
    return new Entry(KEYCHAIN_SERVICE, keychainAccount(profile));
  } catch {
    return null;
  }
}

function readFileToken(file: string): string | null {
  try {
    const t = readFileSync(file, 'utf8').trim();
    return t === '' ? null : t;
  } catch {
    return null;
  }
}

/**
 * The token in effect for a profile: FECR_TOKEN, else the fallback file (it exists only when the last login could
 * not use the keychain, so it is the newer one), else the keychain. Null when there is none.
 */
export async function readToken(opts: SecretStoreOptions, profile: string): Promise<{ token: string; source: TokenSource } | null> {
  const fromEnv = opts.env.FECR_TOKEN?.trim();
  if (fromEnv) return { token: fromEnv, source: 'env' };
  const fromFile = readFileToken(tokenFile(opts.configDir, profile));
  if (fromFile) return { token: fromFile, source: 'file' };
  const entry = await keychainEntry(opts, profile);
  if (entry) {
    try {
      const t = entry.getPassword();
      if (t) return { token: t, source: 'keychain' };
    } catch {
      // no keychain answering, or no entry
    }
  }
  return null;
}

/** Stores a profile's token: the keychain when it answers (and removes a stale file), else the 0600 file (warns once). */
export async function saveToken(opts: SecretStoreOptions, profile: string, token: string): Promise<Exclude<TokenSource, 'env'>> {
  const file = tokenFile(opts.configDir, profile);
  const entry = await keychainEntry(opts, profile);
  if (entry) {
    try {
      entry.setPassword(token);
      if (entry.getPassword() === token) {
        rmSync(file, { force: true });
        return 'keychain';
      }
    } catch {
      // no keychain answering: the file below
    }
  }
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, token + '\n', { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    const code = (e as NodeJS.ErrnoException).code;
    if (code) throw new ClientError('error', `no OS keychain available and ${file} cannot be written (${code})`);
    throw e;
  }
  opts.warn?.(`warning: no OS keychain available: the session token of profile "${profile}" is in ${file} (mode 0600)`);
  return 'file';
}

/** Forgets a profile's token in the keychain and the file; true when there was one. */
export async function deleteToken(opts: SecretStoreOptions, profile: string): Promise<boolean> {
  const file = tokenFile(opts.configDir, profile);
  let found = readFileToken(file) !== null;
  rmSync(file, { force: true });
  const entry = await keychainEntry(opts, profile);
  if (entry) {
    try {
      if (entry.getPassword()) {
        entry.deletePassword();
        found = true;
      }
    } catch {
      // nothing stored, or no keychain answering
    }
  }
  return found;
}
