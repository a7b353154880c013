/**
 * Opening the service on a data dir: the SQLite store, the master key, the logger and, in env local,
 * the embedded Hacienda emulator (its state kept in the same data dir, so a restart finds it again).
 * Used by `fecr serve` and by the CLI's local mode.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { platformDirs } from '../adapters/platform-dirs.js';
import { RECEIVED_MAX_BYTES_VAR, receivedMaxBytes } from '../core/received/limits.js';
import { startEmulatorThread, type EmulatorThread } from '../emulator/thread.js';
import { resolveEndpoints, type HaciendaEndpoints } from '../hacienda/index.js';
import { openSqliteStore, openStore, redactDatabaseUrl, type Store } from '../store/index.js';
import type { HaciendaEnvironment, ServiceContext } from './context.js';
import { secureDataDir } from './data-dir.js';
import type { MailDefaults } from './mail-defaults.js';
import { loadMasterKey, SecretBox } from './secrets.js';
import type { WebhookTargetPolicy } from './webhook-targets.js';

/** fecr's data dir: --data-dir, else FECR_DATA_DIR, else the platform's data dir for "fecr" (from the given environment). */
export function resolveDataDir(env: Record<string, string | undefined>, flag?: string): string {
  if (flag) return path.resolve(flag);
  if (env.FECR_DATA_DIR) return path.resolve(env.FECR_DATA_DIR);
  return platformDirs(env).data;
}

/** Where the receptor mails go when no SMTP server is set. */
export function outboxDir(dataDir: string): string {
  return path.join(dataDir, 'outbox');
}

/** Log fields that must never be written. */
export const REDACT = [
  'password',
  '*.password',
  'claveHacienda',
  '*.claveHacienda',
  'pinCertificado',
  '*.pinCertificado',
  'certificadoHacienda',
  '*.certificadoHacienda',
  'token',
  '*.token',
  'req.headers.authorization',
  'headers.authorization',
];

export interface OpenServiceOptions {
  dataDir: string;
  /**
   * The store: a postgres:// URL (hosted mode: many fecr processes on one PostgreSQL) or a SQLite file.
   * Default: fecr.db in the data dir. Callers take it from --database or FECR_DATABASE_URL.
   */
  database?: string;
  env: Record<string, string | undefined>;
  environment?: HaciendaEnvironment;
  /** Overrides of the Hacienda URLs (sandbox/production), e.g. from config. */
  endpoints?: Partial<HaciendaEndpoints>;
  /** Start the embedded emulator when environment is local (default true). */
  startLocalEmulator?: boolean;
  /** Emulator processing delay (ms) in env local. */
  emulatorDelayMs?: number;
  logger?: Logger;
  /** Without `logger`: the log's JSON lines go to this file (appended, 0600) instead of stderr (`fecr serve --log-file`). */
  logFile?: string;
  warn?: (message: string) => void;
  now?: () => number;
  /** Where account webhooks may point (`fecr serve`: webhookTargetPolicy(environment, …)); default anywhere. */
  webhookTargets?: WebhookTargetPolicy;
  /**
   * The receptor mails' default SMTP server and sender (`fecr serve --smtp-url`, FECR_SMTP_URL, a local profile's
   * smtpUrl); without a server they go to `<data dir>/outbox` as .eml files. `false`: no mail at all.
   */
  mail?: Partial<MailDefaults> | false;
  /**
   * The operator's CAs for received comprobantes (`fecr serve --recibidos-trust`, a local profile's recibidosTrust):
   * the setting's value (paths separated by the path delimiter) and its name for messages. Absent:
   * FECR_RECIBIDOS_TRUST of `env`.
   */
  recibidosTrust?: { value: string; setting: string };
}

export interface OpenedService {
  ctx: ServiceContext;
  /** The embedded emulator (env local), on a thread of its own. */
  emulator?: Pick<EmulatorThread, 'url' | 'close'>;
  close(): Promise<void>;
}

/** The operator's trust setting (service/recibidos/trust.ts) as paths, checked; loaded only when there is one. */
async function checkedTrust(opts: OpenServiceOptions): Promise<string[]> {
  const fromEnv = opts.env.FECR_RECIBIDOS_TRUST?.trim() ? { value: opts.env.FECR_RECIBIDOS_TRUST, setting: 'FECR_RECIBIDOS_TRUST' } : undefined;
  const setting = opts.recibidosTrust ?? fromEnv;
  if (!setting) return [];
  const { checkTrustSetting, trustPaths } = await import('./recibidos/trust.js');
  const paths = trustPaths(setting.value);
  checkTrustSetting(paths, setting.setting);
  return paths;
}

export async function openService(opts: OpenServiceOptions): Promise<OpenedService> {
  // 0700, an existing one closed too (data-dir.ts); the database files are 0600 (store/index.ts).
  secureDataDir(opts.dataDir, opts.warn);
  // A bad FECR_RECIBIDOS_MAX_BYTES or trust setting is said now, not at the first import.
  const recibidosMaxBytes = receivedMaxBytes(opts.env);
  const recibidosTrust = await checkedTrust(opts);
  const destination = opts.logFile ? pino.destination({ dest: opts.logFile, mkdir: true, append: true, sync: true, mode: 0o600 }) : pino.destination(2);
  const logger = opts.logger ?? pino({ level: opts.env.FECR_LOG_LEVEL ?? 'info', redact: REDACT }, destination);
  const environment = opts.environment ?? 'local';
  const hosted = opts.database !== undefined && /^postgres(ql)?:\/\//i.test(opts.database);
  // Every process of a hosted deployment must seal and open secrets with the same key: no per-machine fallback.
  if (hosted && !opts.env.FECR_MASTER_KEY) throw new Error('a PostgreSQL store needs FECR_MASTER_KEY (32 bytes, base64), the same in every fecr process');
  const { key } = await loadMasterKey({ dataDir: opts.dataDir, env: opts.env, warn: opts.warn });
  let store: Store;
  try {
    store = opts.database ? await openStore(opts.database) : await openSqliteStore({ file: path.join(opts.dataDir, 'fecr.db') });
  } catch (e) {
    if (hosted) throw new Error(`cannot open the database ${redactDatabaseUrl(opts.database!)}: ${(e as Error).message}`, { cause: e });
    throw e;
  }
  let emulator: EmulatorThread | undefined;
  let endpoints: HaciendaEndpoints;
  try {
    if (environment === 'local') {
      if (opts.startLocalEmulator !== false) {
        // On a thread of its own (issue 31): its HTTP server, processing and signed answers run beside the service's
        // event loop, not on it (bench:service's end-to-end run had the one event loop busy 98 % of the time).
        emulator = await startEmulatorThread({
          dataFile: path.join(opts.dataDir, 'emulator.db'),
          processingDelayMs: opts.emulatorDelayMs ?? 200,
        });
        endpoints = resolveEndpoints('local', { baseUrl: emulator.url });
      } else {
        endpoints = resolveEndpoints('local', { baseUrl: opts.endpoints?.receptionBaseUrl ?? 'http://127.0.0.1:1', ...opts.endpoints });
      }
    } else {
      endpoints = resolveEndpoints(environment, opts.endpoints ?? {});
    }
  } catch (e) {
    await store.close();
    throw e;
  }
  const ctx: ServiceContext = {
    store,
    secrets: new SecretBox(key),
    logger,
    now: opts.now ?? (() => Date.now()),
    randomBytes: (n) => randomBytes(n),
    hacienda: { environment, endpoints },
    ...(opts.webhookTargets ? { webhookTargets: opts.webhookTargets } : {}),
    ...(opts.mail === false ? {} : { mail: { outboxDir: outboxDir(opts.dataDir), ...opts.mail } }),
    ...(opts.env[RECEIVED_MAX_BYTES_VAR] || recibidosTrust.length > 0
      ? { recibidos: { ...(opts.env[RECEIVED_MAX_BYTES_VAR] ? { maxBytes: recibidosMaxBytes } : {}), ...(recibidosTrust.length > 0 ? { trust: recibidosTrust } : {}) } }
      : {}),
  };
  return {
    ctx,
    emulator,
    async close() {
      await emulator?.close();
      await store.close();
    },
  };
}
