/**
 * Opening the service on a data dir: the SQLite store, the master key, the logger and, in env local,
 * the embedded Hacienda emulator (its state kept in the same data dir, so a restart finds it again).
 * Used by `fecr serve` and by the CLI's local mode.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import envPaths from 'env-paths';
import pino, { type Logger } from 'pino';
import { resolveEndpoints, startEmulator, type HaciendaEndpoints, type RunningEmulator } from '../hacienda/index.js';
import { openSqliteStore } from '../store/index.js';
import type { HaciendaEnvironment, ServiceContext } from './context.js';
import { loadMasterKey, SecretBox } from './secrets.js';

/** fecr's data dir: --data-dir, else FECR_DATA_DIR, else the platform's data dir for "fecr". */
export function resolveDataDir(env: Record<string, string | undefined>, flag?: string): string {
  if (flag) return path.resolve(flag);
  if (env.FECR_DATA_DIR) return path.resolve(env.FECR_DATA_DIR);
  return envPaths('fecr', { suffix: '' }).data;
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
  env: Record<string, string | undefined>;
  environment?: HaciendaEnvironment;
  /** Overrides of the Hacienda URLs (sandbox/production), e.g. from config. */
  endpoints?: Partial<HaciendaEndpoints>;
  /** Start the embedded emulator when environment is local (default true). */
  startLocalEmulator?: boolean;
  /** Emulator processing delay (ms) in env local. */
  emulatorDelayMs?: number;
  logger?: Logger;
  warn?: (message: string) => void;
  now?: () => number;
}

export interface OpenedService {
  ctx: ServiceContext;
  emulator?: RunningEmulator;
  close(): Promise<void>;
}

export async function openService(opts: OpenServiceOptions): Promise<OpenedService> {
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const logger = opts.logger ?? pino({ level: opts.env.FECR_LOG_LEVEL ?? 'info', redact: REDACT }, pino.destination(2));
  const environment = opts.environment ?? 'local';
  const { key } = await loadMasterKey({ dataDir: opts.dataDir, env: opts.env, warn: opts.warn });
  const store = await openSqliteStore({ file: path.join(opts.dataDir, 'fecr.db') });
  let emulator: RunningEmulator | undefined;
  let endpoints: HaciendaEndpoints;
  try {
    if (environment === 'local') {
      if (opts.startLocalEmulator !== false) {
        emulator = await startEmulator({
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
