/**
 * What every use case receives. Transport-free: the HTTP apps, the CLI's local mode and the tests all
 * build one of these. Clock and randomness are injected.
 */
import type { Logger } from 'pino';
import type { HaciendaEndpoints } from '../hacienda/index.js';
import type { Store } from '../store/index.js';
import type { HeavyWork } from './heavy-work-types.js';
import type { MailDefaults } from './mail-defaults.js';
import type { SecretBox } from './secrets.js';
import type { WebhookTargetPolicy } from './webhook-targets.js';

export type { HaciendaEnvironment } from '../hacienda/client/endpoints.js';
import type { HaciendaEnvironment } from '../hacienda/client/endpoints.js';

export interface ServiceContext {
  store: Store;
  secrets: SecretBox;
  logger: Logger;
  /** Epoch milliseconds. */
  now: () => number;
  randomBytes: (n: number) => Buffer;
  /** Which Hacienda the worker and the lookups talk to, and its endpoints (the emulator's in env local). */
  hacienda: { environment: HaciendaEnvironment; endpoints: HaciendaEndpoints };
  /**
   * Where account webhooks may point (webhook-targets.ts), checked at registration and at every delivery.
   * `fecr serve` with --env sandbox|production sets publicOnly; absent (the CLI's local mode, env local): anywhere.
   */
  webhookTargets?: WebhookTargetPolicy;
  /**
   * Mail to the receptor of each accepted comprobante (mail-settings.ts): the default SMTP server and sender, and
   * the outbox folder used when no server is set. Absent: the service sends no mail.
   */
  mail?: MailDefaults;
  /**
   * Received comprobantes (service/recibidos/): the size limit of one file in bytes (FECR_RECIBIDOS_MAX_BYTES;
   * absent: core/received/limits.ts RECEIVED_MAX_BYTES, 4 MiB); the operator's CA certificates a supplier's signing
   * certificate may chain to, beside the shipped ones (FECR_RECIBIDOS_TRUST: files and folders, absolute paths;
   * service/recibidos/trust.ts).
   */
  recibidos?: { maxBytes?: number; trust?: readonly string[] };
  /**
   * Received files' checks and documents' PDFs off the event loop (heavy-work.ts: the client API's threads, with the
   * PDFs of final documents kept). Absent: on the caller's thread (the CLI's local mode).
   */
  heavyWork?: HeavyWork;
}
