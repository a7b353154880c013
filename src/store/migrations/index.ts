/** Every migration, in order. The same list runs on SQLite and PostgreSQL. */
import type { Migration, MigrationProvider } from 'kysely';
import { initial } from './0001-initial.js';
import { queueWorkers } from './0002-queue-workers.js';
import { pgXmlCompression } from './0003-pg-xml-compression.js';
import { documentParties } from './0004-document-parties.js';
import { recibidos } from './0005-recibidos.js';
import { emailDelivery } from './0006-email-delivery.js';
import { jobsByType } from './0007-jobs-by-type.js';
import { mailPolicy } from './0009-mail-policy.js';
import { recibidosOnePerDocument } from './0010-recibidos-one-per-document.js';
import { issuerCredentialsRefused } from './0011-issuer-credentials-refused.js';
import { recibidosRespuestas } from './0012-recibidos-respuestas.js';
import { documentNumbering } from './0013-document-numbering.js';
import { exchangeRates } from './0014-exchange-rates.js';
import { documentReferences } from './0015-document-references.js';
import { contingency } from './0016-contingency.js';
import { accountMailboxes } from './0017-account-mailboxes.js';
import { jobsByDocument } from './0018-jobs-by-document.js';
import { dropJobsDue } from './0019-drop-jobs-due.js';
import { idempotencyKeys } from './0020-idempotency-keys.js';
import { issuerOneAccount } from './0021-issuer-one-account.js';
import { provisionalReplacedOnce } from './0022-provisional-replaced-once.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-queue-workers': queueWorkers,
  '0003-pg-xml-compression': pgXmlCompression,
  '0004-document-parties': documentParties,
  '0005-recibidos': recibidos,
  '0006-email-delivery': emailDelivery,
  '0007-jobs-by-type': jobsByType,
  '0009-mail-policy': mailPolicy,
  '0010-recibidos-one-per-document': recibidosOnePerDocument,
  '0011-issuer-credentials-refused': issuerCredentialsRefused,
  '0012-recibidos-respuestas': recibidosRespuestas,
  '0013-document-numbering': documentNumbering,
  '0014-exchange-rates': exchangeRates,
  '0015-document-references': documentReferences,
  '0016-contingency': contingency,
  '0017-account-mailboxes': accountMailboxes,
  '0018-jobs-by-document': jobsByDocument,
  '0019-drop-jobs-due': dropJobsDue,
  '0020-idempotency-keys': idempotencyKeys,
  '0021-issuer-one-account': issuerOneAccount,
  '0022-provisional-replaced-once': provisionalReplacedOnce,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
