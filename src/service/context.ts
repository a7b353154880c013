/**
 * What every use case receives. Transport-free: the HTTP apps, the CLI's local mode and the tests all
 * build one of these. Clock and randomness are injected.
 */
import type { Logger } from 'pino';
import type { HaciendaEndpoints } from '../hacienda/index.js';
import type { Store } from '../store/index.js';
import type { SecretBox } from './secrets.js';

export type HaciendaEnvironment = 'local' | 'sandbox' | 'production';

export interface ServiceContext {
  store: Store;
  secrets: SecretBox;
  logger: Logger;
  /** Epoch milliseconds. */
  now: () => number;
  randomBytes: (n: number) => Buffer;
  /** Which Hacienda the worker and the lookups talk to, and its endpoints (the emulator's in env local). */
  hacienda: { environment: HaciendaEnvironment; endpoints: HaciendaEndpoints };
}
