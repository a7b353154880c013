/** What the `fecr config` verbs share: a key checked against the profile keys, and its value as the verbs see it. */
import { UsageError } from '../../cli/errors.js';
import { modeOf, PROFILE_KEYS, maskedValue, type ProfileKey, type StoredProfile } from '../../client/profiles.js';

export function checkKey(key: string): ProfileKey {
  if (!(PROFILE_KEYS as string[]).includes(key)) throw new UsageError(`unknown key "${key}" (keys: ${PROFILE_KEYS.join(', ')})`);
  return key as ProfileKey;
}

/**
 * A key's value as the verbs show it (get, list): stored, else the default of the profile's mode. A URL's password
 * (an smtpUrl or authUrl edited by hand into config.json) is masked: fecr never prints a secret.
 */
export function effective(stored: StoredProfile, key: ProfileKey): string | undefined {
  if (key === 'mode') return modeOf(stored);
  if (stored[key] !== undefined) return maskedValue(key, String(stored[key]));
  if (modeOf(stored) === 'local') {
    if (key === 'env') return 'local';
    if (key === 'account') return 'local';
  }
  return undefined;
}
