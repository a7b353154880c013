/**
 * Profiles: where the CLI verbs go. A profile is local (the service in-process on a data dir) or remote (a hosted
 * instance: its auth server and client API). Stored with conf as `{profiles: {NAME: {...}}}` in `config.json` of
 * the config dir, which follows the injected environment (XDG_CONFIG_HOME, HOME) so tests use a temp HOME.
 * Every command reads its profile, few write one: reading is a plain JSON read of conf's file (conf's import
 * graph, with ajv, costs about 100 ms of start-up), and conf is loaded only to write (atomic write, mode 0600).
 * The profile in use: `--profile NAME`, else FECR_PROFILE, else "default". "default" always exists (local, with
 * its defaults, until configured); any other name must have been created by `fecr config set` (or `fecr demo`
 * for "demo"): a mistyped name is a usage error with the closest existing name, never a new local profile.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { platformDirs } from '../adapters/platform-dirs.js';
import { echo } from '../core/echo.js';
import { editDistance } from '../core/input/unknown-keys.js';
import { ClientError } from './errors.js';

export const DEFAULT_PROFILE = 'default';
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export type HaciendaEnv = 'local' | 'sandbox' | 'production';

export interface LocalProfile {
  mode: 'local';
  /** Data dir of the in-process service; absent: FECR_DATA_DIR, else the platform data dir. */
  dataDir?: string;
  env: HaciendaEnv;
  /** Account of the local data dir the verbs act as (default "local"). */
  account?: string;
  /** The receptor mails: SMTP server (no password: that one is sealed with `fecr accounts mail`), From and Reply-To. */
  smtpUrl?: string;
  mailFrom?: string;
  mailReplyTo?: string;
  /** The CAs a supplier's signing certificate may chain to, beside the shipped ones (FECR_RECIBIDOS_TRUST's form). */
  recibidosTrust?: string;
  /**
   * Hacienda's IdP, reception and queries at this one URL instead of Hacienda's own (env sandbox|production: a proxy,
   * an emulator) or of the embedded emulator (env local: a shared `fecr hacienda serve`, the embedded one not started).
   */
  haciendaUrl?: string;
  /** Env local: the fault file (absolute path, docs/faults.md) the embedded emulator starts with. */
  emulatorFaults?: string;
  recibidosPlazoDias?: string;
  recibidosAvisoDias?: string;
  /** Issue 30: `auto` signs in situación 3 when Hacienda's reception does not answer; hours to send what is owed. */
  contingencia?: string;
  contingenciaPlazoHoras?: string;
}

export interface RemoteProfile {
  mode: 'remote';
  authUrl: string;
  baseUrl: string;
  /** The account name ("base") of login; remembered after a successful `fecr login --base`. */
  base?: string;
  recibidosPlazoDias?: string;
  recibidosAvisoDias?: string;
}

export type Profile = LocalProfile | RemoteProfile;

/** What is stored for a profile: any subset of the keys (checked one by one on `set`, as a whole on use). */
export type StoredProfile = Partial<Record<ProfileKey, string>>;

const httpUrl = z
  .string()
  .trim()
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.search === '' && u.hash === '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without query')
  .transform((s) => s.replace(/\/+$/, ''));

const accountName = z.string().trim().min(1, 'must not be empty').max(128, 'must be at most 128 characters');

/** Every key of `fecr config set`, with its check and its help text. */
export const KEY_SCHEMAS = {
  mode: z.enum(['local', 'remote'], { error: 'must be local or remote' }),
  env: z.enum(['local', 'sandbox', 'production'], { error: 'must be local, sandbox or production' }),
  dataDir: z.string().trim().min(1, 'must not be empty'),
  account: accountName,
  authUrl: httpUrl,
  baseUrl: httpUrl,
  base: accountName,
  /** Local mode: the receptor mails' SMTP server, without its password (config.json is not sealed). */
  smtpUrl: z
    .string()
    .trim()
    .refine((s) => {
      try {
        return ['smtp:', 'smtps:'].includes(new URL(s).protocol);
      } catch {
        return false;
      }
    }, 'must be an smtp:// or smtps:// URL, e.g. smtp://user@smtp.example.com:587')
    .refine((s) => {
      try {
        return new URL(s).password === '';
      } catch {
        return true;
      }
    }, 'must not carry a password (config.json is not sealed): give the server and its password to fecr accounts mail local --smtp-url URL, which seals it'),
  mailFrom: z.string().trim().min(3, 'must be an e-mail address or "Name <address>"'),
  mailReplyTo: z.string().trim().min(3, 'must be an e-mail address'),
  /** Local mode: CA certificates (PEM/DER files or folders, path-delimiter separated) trusted for received comprobantes. */
  recibidosTrust: z.string().trim().min(1, 'must name CA certificate files or folders'),
  /** Local mode: Hacienda's IdP, reception and queries at one base URL instead of Hacienda's (env local: instead of the embedded emulator). */
  haciendaUrl: httpUrl,
  /** Local mode, env local: a fault file for the embedded emulator (checked when set, and read when the emulator starts). */
  emulatorFaults: z.string().trim().min(1, 'must name a fault file (JSON, docs/faults.md)'),
  /** `recibidos list --due` (both modes): days after FechaEmision Hacienda is taken to presume acceptance (README), and the warning before. */
  recibidosPlazoDias: z.string().trim().regex(/^[1-9]\d{0,2}$/, 'must be a whole number of days, 1 to 999'),
  recibidosAvisoDias: z.string().trim().regex(/^\d{1,3}$/, 'must be a whole number of days, 0 to 999'),
  /** Local mode (issue 30): `auto` signs in situación 3 (sin internet) when Hacienda cannot be reached; the term of `fecr contingency status`. */
  contingencia: z.enum(['auto', 'off'], { error: 'must be auto or off' }),
  contingenciaPlazoHoras: z.string().trim().regex(/^[1-9]\d{0,3}$/, 'must be a whole number of hours, 1 to 9999'),
} as const;
export type ProfileKey = keyof typeof KEY_SCHEMAS;
export const PROFILE_KEYS = Object.keys(KEY_SCHEMAS) as ProfileKey[];

const LOCAL_KEYS: ProfileKey[] = ['mode', 'env', 'dataDir', 'account', 'smtpUrl', 'mailFrom', 'mailReplyTo', 'recibidosTrust', 'haciendaUrl', 'emulatorFaults', 'recibidosPlazoDias', 'recibidosAvisoDias', 'contingencia', 'contingenciaPlazoHoras'];
const REMOTE_KEYS: ProfileKey[] = ['mode', 'authUrl', 'baseUrl', 'base', 'recibidosPlazoDias', 'recibidosAvisoDias'];

/** Where the profile in use was named: the flag, the environment, or nowhere (the implicit "default"). */
export type ProfileSource = '--profile' | 'FECR_PROFILE' | '';

/** The profile chosen by --profile / FECR_PROFILE (else "default"); a bad name is a usage error naming where it came from. */
export function profileChoice(env: Record<string, string | undefined>, flag?: string): { name: string; from: ProfileSource } {
  const [name, from]: [string, ProfileSource] =
    flag !== undefined ? [flag, '--profile'] : env.FECR_PROFILE ? [env.FECR_PROFILE, 'FECR_PROFILE'] : [DEFAULT_PROFILE, ''];
  if (!PROFILE_NAME.test(name)) throw new ClientError('usage', `${from}: "${name}" is not a profile name (letters, digits, ".", "_", "-"; at most 64)`);
  return { name, from };
}

/** A profile name from --profile / FECR_PROFILE; a bad one is a usage error naming where it came from. */
export function profileNameFrom(env: Record<string, string | undefined>, flag?: string): string {
  return profileChoice(env, flag).name;
}

/** The profile `fecr demo` creates; before that run, naming it says so. */
export const DEMO_PROFILE = 'demo';

/** The existing name closest to `name` (at most 2 edits, and fewer edits than half its length), else null. */
export function closestProfile(name: string, names: string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of [...names].sort()) {
    const dist = editDistance(name.toLowerCase(), candidate.toLowerCase(), 3);
    if (dist > 2 || dist * 2 >= Math.max(name.length, candidate.length) || dist >= bestDistance) continue;
    best = candidate;
    bestDistance = dist;
  }
  return best;
}

/** The one line for a profile name that is not in the config file (nor "default"): the closest name, the existing ones, how to create it. */
export function unknownProfileMessage(name: string, from: ProfileSource, existing: string[]): string {
  const where = from ? `${from}: ` : '';
  if (name === DEMO_PROFILE) return `${where}no profile named "${DEMO_PROFILE}" yet: fecr demo creates it`;
  const close = closestProfile(name, existing);
  const shown = existing.length > 12 ? [...existing.slice(0, 12), '…'] : existing;
  return `${where}no profile named "${name}"${close ? `; did you mean "${close}"?` : ''} (profiles: ${shown.join(', ')}; fecr config set KEY=VALUE${flagFor(name)} creates it)`;
}

/**
 * The config dir: $XDG_CONFIG_HOME/fecr on any platform, else the platform's (env-paths' config dir: ~/.config/fecr
 * on Linux), from the given environment.
 */
export function configDir(env: Record<string, string | undefined>): string {
  if (env.XDG_CONFIG_HOME) return path.join(path.resolve(env.XDG_CONFIG_HOME), 'fecr');
  return platformDirs(env).config;
}

/** The mask shown in place of a URL's password. */
export const PASSWORD_MASK = '***';

/**
 * A URL with its password (`scheme://user:PASSWORD@host`) masked, for every message and listing: a URL that parses
 * has its password replaced; a value that is no such URL (a typo in it: `smtp//user:pw@host`, `user:pw@host`) has
 * everything from the first ":" after any "//" to the last "@" masked. Anything without a password is returned as is.
 */
export function redactUrlPassword(value: string): string {
  try {
    const u = new URL(value.trim());
    if (u.password !== '') {
      // In the text as given (no normalisation): the password is between the authority's first ":" and last "@".
      const start = value.indexOf('//') + 2;
      const end = value.slice(start).search(/[/?#\\]/);
      const authority = end < 0 ? value.slice(start) : value.slice(start, start + end);
      const at = authority.lastIndexOf('@');
      const colon = authority.indexOf(':');
      if (start >= 2 && colon >= 0 && colon < at) return `${value.slice(0, start + colon)}:${PASSWORD_MASK}${value.slice(start + at)}`;
      u.password = PASSWORD_MASK;
      return u.toString();
    }
    if (u.host !== '') return value;
  } catch {
    // Not a URL: masked below.
  }
  const at = value.lastIndexOf('@');
  if (at < 0) return value;
  const slashes = value.indexOf('//');
  const colon = value.indexOf(':', slashes >= 0 && slashes < at ? slashes + 2 : 0);
  if (colon < 0 || colon > at) return value;
  return `${value.slice(0, colon)}:${PASSWORD_MASK}${value.slice(at)}`;
}

/** The keys whose values are URLs, which may carry a password. */
const URL_KEYS: ReadonlySet<string> = new Set<ProfileKey>(['smtpUrl', 'authUrl', 'baseUrl', 'haciendaUrl']);

/** A value of a profile key as fecr prints it (config get, list, set): a URL's password masked. */
export function maskedValue(key: string, value: string): string {
  return URL_KEYS.has(key) ? redactUrlPassword(value) : value;
}

/** A value of a profile key as a message quotes it: masked, and a long one cut (core/echo.ts). */
export function shownValue(key: string, value: string): string {
  return echo(maskedValue(key, value));
}

/** Checks one value for a key; returns it normalised (trimmed, URL without trailing "/", absolute data dir). */
export function checkValue(key: string, value: string, cwd: string): string {
  if (!(PROFILE_KEYS as string[]).includes(key)) throw new ClientError('usage', `unknown key "${echo(key)}" (keys: ${PROFILE_KEYS.join(', ')})`);
  const r = KEY_SCHEMAS[key as ProfileKey].safeParse(value);
  // Never the value as given: an smtpUrl refused for its password would print that password.
  if (!r.success) throw new ClientError('usage', `${key}: ${r.error.issues[0]?.message ?? 'invalid value'} (got "${shownValue(key, value)}")`);
  if (key === 'recibidosTrust') return r.data.split(path.delimiter).filter((p) => p.trim() !== '').map((p) => path.resolve(cwd, p.trim())).join(path.delimiter);
  return key === 'dataDir' || key === 'emulatorFaults' ? path.resolve(cwd, r.data) : r.data;
}

/** The mode of a stored profile: its `mode`, else remote when it names an auth server or API, else local. */
export function modeOf(stored: StoredProfile): 'local' | 'remote' {
  if (stored.mode === 'local' || stored.mode === 'remote') return stored.mode;
  return stored.authUrl || stored.baseUrl ? 'remote' : 'local';
}

/**
 * The profile to use from what is stored (nothing stored: local with defaults). Keys of the other mode are kept
 * in the file but ignored. A missing or bad value is a usage error naming the key and how to set it.
 */
export function resolveProfile(name: string, stored: StoredProfile = {}): Profile {
  const mode = modeOf(stored);
  const keys = mode === 'local' ? LOCAL_KEYS : REMOTE_KEYS;
  const values: Record<string, string> = {};
  for (const key of keys) {
    const v = stored[key];
    if (v === undefined || key === 'mode') continue;
    const r = KEY_SCHEMAS[key].safeParse(v);
    if (!r.success) throw new ClientError('usage', `profile "${name}": ${key}: ${r.error.issues[0]?.message ?? 'invalid value'} (fix it with: fecr config set ${key} VALUE${flagFor(name)})`);
    values[key] = r.data;
  }
  const term = {
    ...(values.recibidosPlazoDias !== undefined ? { recibidosPlazoDias: values.recibidosPlazoDias } : {}),
    ...(values.recibidosAvisoDias !== undefined ? { recibidosAvisoDias: values.recibidosAvisoDias } : {}),
  };
  if (mode === 'local') {
    return {
      mode: 'local',
      env: (values.env as HaciendaEnv | undefined) ?? 'local',
      ...(values.dataDir !== undefined ? { dataDir: values.dataDir } : {}),
      ...(values.account !== undefined ? { account: values.account } : {}),
      ...(values.smtpUrl !== undefined ? { smtpUrl: values.smtpUrl } : {}),
      ...(values.mailFrom !== undefined ? { mailFrom: values.mailFrom } : {}),
      ...(values.mailReplyTo !== undefined ? { mailReplyTo: values.mailReplyTo } : {}),
      ...(values.recibidosTrust !== undefined ? { recibidosTrust: values.recibidosTrust } : {}),
      ...(values.haciendaUrl !== undefined ? { haciendaUrl: values.haciendaUrl } : {}),
      ...(values.emulatorFaults !== undefined ? { emulatorFaults: values.emulatorFaults } : {}),
      ...(values.contingencia !== undefined ? { contingencia: values.contingencia } : {}),
      ...(values.contingenciaPlazoHoras !== undefined ? { contingenciaPlazoHoras: values.contingenciaPlazoHoras } : {}),
      ...term,
    };
  }
  for (const key of ['authUrl', 'baseUrl'] as const) {
    if (values[key] === undefined) throw new ClientError('usage', `profile "${name}" is remote but has no ${key} (set it with: fecr config set ${key} URL${flagFor(name)})`);
  }
  return { mode: 'remote', authUrl: values.authUrl!, baseUrl: values.baseUrl!, ...(values.base !== undefined ? { base: values.base } : {}), ...term };
}

export function flagFor(name: string): string {
  return name === DEFAULT_PROFILE ? '' : ` --profile ${name}`;
}

interface ConfigShape {
  profiles?: Record<string, StoredProfile>;
  [key: string]: unknown;
}

/** The profiles file of a config dir. Construct with `openProfiles`. */
export class ProfileStore {
  /** The config file's path. */
  readonly file: string;

  constructor(
    private config: ConfigShape,
    readonly dir: string,
  ) {
    this.file = path.join(dir, CONFIG_FILE);
  }

  all(): Record<string, StoredProfile> {
    const p = this.config.profiles;
    return p && typeof p === 'object' ? { ...p } : {};
  }

  stored(name: string): StoredProfile {
    const p = this.all()[name];
    return p && typeof p === 'object' ? { ...p } : {};
  }

  /** Sets a key (the value checked and normalised with `checkValue`); returns the stored value. */
  async set(name: string, key: string, value: string, cwd: string): Promise<string> {
    return (await this.setMany(name, [[key, value]], cwd))[0]![1];
  }

  /**
   * Sets several keys at once (creating the profile when it does not exist): every value is checked first, then
   * one write; a bad key or value (or a key given twice) is a usage error and nothing is written. Returns the
   * stored pairs, in order.
   */
  async setMany(name: string, pairs: [string, string][], cwd: string): Promise<[ProfileKey, string][]> {
    const seen = new Set<string>();
    const checked: [ProfileKey, string][] = [];
    for (const [key, value] of pairs) {
      const v = checkValue(key, value, cwd);
      if (seen.has(key)) throw new ClientError('usage', `${key} is given twice`);
      seen.add(key);
      checked.push([key as ProfileKey, v]);
      if (key === 'emulatorFaults') await checkFaultFile(v);
    }
    const all = this.all();
    all[name] = { ...(all[name] ?? {}), ...Object.fromEntries(checked) };
    await this.write(all);
    return checked;
  }

  /** Whether a profile exists: "default" always does (implicitly local), any other once `config set` stored it. */
  exists(name: string): boolean {
    return name === DEFAULT_PROFILE || Object.hasOwn(this.all(), name);
  }

  /** The names of the existing profiles ("default" first, then sorted). */
  names(): string[] {
    return [DEFAULT_PROFILE, ...Object.keys(this.all()).filter((n) => n !== DEFAULT_PROFILE).sort()];
  }

  /** Throws the usage error of an unknown profile (with the closest existing name) unless `name` exists. */
  requireExisting(name: string, from: ProfileSource): void {
    if (!this.exists(name)) throw new ClientError('usage', unknownProfileMessage(name, from, this.names()));
  }

  /** Removes a key; true when it was set. */
  async unset(name: string, key: string): Promise<boolean> {
    if (!(PROFILE_KEYS as string[]).includes(key)) throw new ClientError('usage', `unknown key "${key}" (keys: ${PROFILE_KEYS.join(', ')})`);
    const all = this.all();
    const p = all[name];
    if (!p || !(key in p)) return false;
    const { [key as ProfileKey]: _gone, ...rest } = p;
    all[name] = rest;
    await this.write(all);
    return true;
  }

  private async write(all: Record<string, StoredProfile>): Promise<void> {
    const { default: Conf } = await import('conf');
    try {
      const conf = new Conf<ConfigShape>({ cwd: this.dir, configName: 'config', accessPropertiesByDotNotation: false, configFileMode: 0o600 });
      conf.set('profiles', all);
      this.config = { ...this.config, profiles: all };
    } catch (e) {
      if (e instanceof SyntaxError) throw new ClientError('error', `${this.file}: invalid JSON (${e.message}); fix or remove it`);
      const code = (e as NodeJS.ErrnoException).code;
      if (code) throw new ClientError('error', `${this.file}: cannot write (${code})`);
      throw e;
    }
  }

  resolve(name: string): Profile {
    return resolveProfile(name, this.stored(name));
  }
}

const CONFIG_FILE = 'config.json';

/** A fault file is checked when set: its findings (`reject[0].codigo: …`) refuse it, nothing is written. */
async function checkFaultFile(file: string): Promise<void> {
  const { readFaultFile, FaultFileError } = await import('../emulator/faults.js');
  try {
    readFaultFile(file);
  } catch (e) {
    if (!(e instanceof FaultFileError)) throw e;
    throw new ClientError('usage', `emulatorFaults: ${[e.message, ...e.findings.map((f) => `${f.path}: ${f.message}`)].join('; ')}`);
  }
}

/** Opens the profiles of the config dir of `env` (creating nothing until the first write). */
export async function openProfiles(env: Record<string, string | undefined>): Promise<ProfileStore> {
  const dir = configDir(env);
  const file = path.join(dir, CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return new ProfileStore({}, dir);
    throw new ClientError('error', `${file}: cannot read (${code ?? 'error'})`);
  }
  // conf treats an empty file as an empty config.
  if (text.trim() === '') return new ProfileStore({}, dir);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ClientError('error', `${file}: invalid JSON (${(e as Error).message}); fix or remove it`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ClientError('error', `${file}: not a JSON object; fix or remove it`);
  return new ProfileStore(parsed as ConfigShape, dir);
}

/** A profile in use: its name, what it says, and the config dir it came from. */
export interface ActiveProfile {
  name: string;
  profile: Profile;
  configDir: string;
}

/**
 * Loads and checks a profile by name. A name that is not in the config file (other than "default") is a usage
 * error with the closest existing name; `from` says where the name came from (--profile, FECR_PROFILE).
 */
export async function loadProfile(env: Record<string, string | undefined>, name: string, from: ProfileSource = '--profile'): Promise<ActiveProfile> {
  const store = await openProfiles(env);
  store.requireExisting(name, from);
  return { name, profile: store.resolve(name), configDir: store.dir };
}
