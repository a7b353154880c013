/**
 * The tables of the fecr service, as Kysely types. Dialect-neutral on purpose (SQLite now,
 * PostgreSQL later): text, integers and integer timestamps (epoch milliseconds) only; XML and
 * sealed secrets are text. Secrets are never stored in clear: `*_enc` columns hold SecretBox output.
 */
import type { ColumnType, Generated, Selectable } from 'kysely';

/** Epoch milliseconds. */
export type Millis = number;

export interface AccountsTable {
  id: Generated<number>;
  base: string; // the account name (JWT sub/base)
  password_hash: string; // argon2id
  disabled: ColumnType<number, number | undefined, number>; // 0 | 1
  webhook_url: string | null;
  webhook_secret_enc: string | null; // sealed "whsec_…" secret
  created_at: Millis;
  updated_at: Millis;
}

export interface SigningKeysTable {
  kid: string;
  private_key_enc: string; // sealed PKCS#8 PEM
  public_jwk: string; // JSON
  created_at: Millis;
  /** When a newer key took over; the key stays in the JWKS until retired_at + token lifetime. */
  retired_at: Millis | null;
}

export interface RevokedTokensTable {
  jti: string;
  expires_at: Millis;
}

export interface IssuersTable {
  id: Generated<number>;
  account_id: number;
  identificacion: string;
  /** The issuer record without its secrets (JSON of the spec's registration shape). */
  record_json: string;
  /** Sealed JSON {claveHacienda, pinCertificado, certificadoHacienda}. */
  secrets_enc: string;
  created_at: Millis;
  updated_at: Millis;
  /**
   * When Hacienda's IdP refused these credentials (null: not refused); with the IdP's answer. Set by the worker, cleared
   * by every update of the issuer (migration 0011).
   */
  hacienda_refused_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  hacienda_refused_detail: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Document states: ours before Hacienda answers, then Hacienda's ind-estado. */
export type { DocumentState } from '../core/lifecycle.js';
import type { DocumentState } from '../core/lifecycle.js';

export interface DocumentsTable {
  id: Generated<number>;
  account_id: number;
  issuer_id: number;
  clave: string;
  kind: string; // FE | NC | TE | …
  sucursal: number;
  terminal: number;
  numero_referencia: number;
  /** sha256 of the canonical JSON of the body, for idempotent submissions. */
  body_hash: string;
  state: DocumentState;
  xml: string; // the signed comprobante
  response_xml: string | null; // MensajeHacienda
  mensaje: number | null; // 1 | 2 | 3
  detalle_mensaje: string | null;
  fecha_emision: string;
  total_comprobante: string;
  moneda: string;
  receptor_nombre: string | null;
  /** Identificación (tipo, número) of the emisor and receptor, stored at submission (null on rows stored before migration 0004, and for a receptor without one). */
  emisor_tipo: string | null;
  emisor_numero: string | null;
  receptor_tipo: string | null;
  receptor_numero: string | null;
  /** The mail's recipients stored at submission (JSON array; null before migration 0006). */
  correos: ColumnType<string | null, string | null | undefined, string | null>;
  /** A batch row's key when fecr numbered it (migration 0013): a resumed batch finds its document by it. */
  submission_key: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Millis;
  updated_at: Millis;
  decided_at: Millis | null;
}

/** Where a series of numbers starts (`fecr emisor numbers --set`, migration 0013); one row per series that has one. */
export interface DocumentNumberingTable {
  issuer_id: number;
  kind: string;
  sucursal: number;
  terminal: number;
  /** The first number fecr may take in the series (the next free one is never below one after the highest stored). */
  next_numero: number;
  updated_at: Millis;
}

/** Exchange rates fecr took from Hacienda's indicator API, one per currency and Costa Rica day (migration 0014). */
/** One InformacionReferencia of a document fecr issued (migration 0015, issue 30). */
export interface DocumentReferencesTable {
  document_id: number;
  /** Its position among the document's references (0-based). */
  orden: number;
  account_id: number;
  /** The referenced document's clave (the reference's Numero). */
  ref_clave: string;
  tipo_doc_ir: string;
  codigo: string | null;
  /** What the document counts against the referenced one (decimal text), or null. */
  monto: string | null;
}

export interface ExchangeRatesTable {
  moneda: string;
  /** YYYY-MM-DD, America/Costa_Rica. */
  fecha: string;
  /** The selling rate as Hacienda gave it (decimal text, colones per unit). */
  venta: string;
  /** The URL it came from. */
  fuente: string;
  fetched_at: Millis;
}

export type JobType = 'send' | 'poll' | 'webhook' | 'email' | 'mailbox';

/** The outbox and work queue: a job is leased by one worker at a time. */
export interface JobsTable {
  id: Generated<number>;
  type: JobType;
  document_id: number | null;
  delivery_id: number | null;
  /** The mail of an `email` job (email_deliveries.id). */
  email_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The account whose suppliers' mailbox a `mailbox` job reads (migration 0017). */
  account_id: ColumnType<number | null, number | null | undefined, number | null>;
  run_at: Millis;
  attempts: ColumnType<number, number | undefined, number>;
  lease_owner: string | null;
  lease_until: Millis | null;
  last_error: string | null;
  created_at: Millis;
  done_at: Millis | null;
}

export type DeliveryState = 'pendiente' | 'entregado' | 'fallido';

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  account_id: number;
  /** The document the event is about; null for an event about a received document (recibido_id, migration 0005). */
  document_id: ColumnType<number | null, number | null, number | null>;
  recibido_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Standard Webhooks `webhook-id`, stable across retries. */
  message_id: string;
  url: string;
  payload: string; // JSON
  state: DeliveryState;
  attempts: ColumnType<number, number | undefined, number>;
  last_status: number | null;
  last_error: string | null;
  created_at: Millis;
  delivered_at: Millis | null;
}

export type EmailState = 'pendiente' | 'enviado' | 'fallido';

/** One mail of a document to its receptor (migration 0006). */
export interface EmailDeliveriesTable {
  id: Generated<number>;
  account_id: number;
  document_id: number;
  /** RFC 5322 Message-ID, `<…>`: the same for every retry of this mail. */
  message_id: string;
  /** JSON array of addresses. */
  recipients: string;
  /** Why it was sent: `aceptado` (the automatic mail) or `reenvio` (asked again). */
  reason: 'aceptado' | 'reenvio';
  state: EmailState;
  attempts: ColumnType<number, number | undefined, number>;
  /** The last SMTP reply or connection error (or the outbox file). */
  last_reply: string | null;
  created_at: Millis;
  sent_at: Millis | null;
}

/** An account's SMTP server and sender (migration 0006); the password sealed. */
export interface AccountMailTable {
  account_id: number;
  smtp_host: string;
  smtp_port: number;
  smtp_security: 'tls' | 'starttls' | 'none';
  smtp_user: string | null;
  smtp_password_enc: string | null;
  from_name: string | null;
  from_address: string | null;
  reply_to: string | null;
  updated_at: Millis;
}

/** An address an operator registered for an account: the client API may mail it (migrations/0009-mail-policy.ts). */
export interface AccountMailAllowTable {
  account_id: number;
  /** Lower-cased. */
  address: string;
  created_at: Millis;
}

/** The client API's mail requests, queued or refused, counted by its limits (migrations/0009-mail-policy.ts). */
export interface MailRequestsTable {
  id: Generated<number>;
  account_id: number;
  document_id: number;
  /** The mail queued (null: refused). */
  email_id: number | null;
  outcome: 'queued' | 'refused' | 'adicional';
  created_at: Millis;
}

/** Hosted mode: heartbeats of the running workers (see migrations/0002-queue-workers.ts). */
export interface QueueWorkersTable {
  id: string;
  name: string;
  host: string;
  pid: number;
  started_at: Millis;
  seen_at: Millis;
}

/** What the checks and the account said of a received comprobante (migration 0005). */
export type RecibidoEstado = 'invalido' | 'pendiente' | 'aceptado' | 'parcial' | 'rechazado';

/** A supplier's comprobante imported by an account (the buyer's side, migration 0005). */
export interface RecibidosTable {
  id: Generated<number>;
  account_id: number;
  /** The buyer: one of the account's issuers (null when the receptor is not ours, or unreadable). */
  issuer_id: number | null;
  /**
   * sha256 (hex) of the bytes imported: one row per account and file content. A file over the size limit is hashed over
   * the bytes read (its first limit + 1).
   */
  sha256: string;
  /** One row that is not `invalido` per account and clave, and per account and emisor_consecutivo (migration 0010). */
  clave: string | null;
  /** The clave's issuer identificación and consecutivo (its characters 10–41): the document's identity with the clave. */
  emisor_consecutivo: string | null;
  kind: string | null;
  version: string | null;
  estado: RecibidoEstado;
  emisor_tipo: string | null;
  emisor_numero: string | null;
  emisor_nombre: string | null;
  receptor_tipo: string | null;
  receptor_numero: string | null;
  fecha_emision: string | null;
  moneda: string | null;
  tipo_cambio: string | null;
  total_comprobante: string | null;
  total_impuesto: string | null;
  /** JSON [{codigoTarifaIVA, tarifa, base, impuesto}]. */
  iva_json: string;
  /** JSON [{path, message}]: the failed checks (refused when non-empty). */
  hallazgos_json: string;
  /** JSON [{path, message}]: warnings. */
  avisos_json: string;
  /** The bytes as received (UTF-8; latin1 when they are not); empty for a refused file (`invalido`): not kept. */
  xml: string;
  /** Hacienda's ind-estado of the document at import, and its MensajeHacienda when it had one. */
  hacienda_estado: string | null;
  hacienda_xml: string | null;
  /** Our answer: 1 aceptado, 2 parcial, 3 rechazado. */
  mensaje: number | null;
  detalle: string | null;
  condicion_impuesto: string | null;
  iva_acreditable: string | null;
  gasto_aplicable: string | null;
  /** The MensajeReceptor (documents row of kind MR). */
  mensaje_document_id: number | null;
  created_at: Millis;
  updated_at: Millis;
  decided_at: Millis | null;
}

/** An earlier answer to a received comprobante, replaced by a new one after Hacienda rejected it (migration 0012). */
export interface RecibidosRespuestasTable {
  id: Generated<number>;
  recibido_id: number;
  account_id: number;
  /** The buyer's decision then. */
  estado: 'aceptado' | 'parcial' | 'rechazado';
  mensaje: number;
  detalle: string | null;
  condicion_impuesto: string | null;
  iva_acreditable: string | null;
  gasto_aplicable: string | null;
  /** Its MensajeReceptor (documents row of kind MR), which keeps Hacienda's verdict on it. */
  mensaje_document_id: number | null;
  decided_at: Millis | null;
  replaced_at: Millis;
}

/** A provisional (paper) comprobante of an outage (migration 0016), until an electronic one replaces it. */
export interface ContingencyProvisionalsTable {
  id: Generated<number>;
  account_id: number;
  /** The issuer's identificación. */
  emisor: string;
  /** The provisional comprobante's own number (InformacionReferencia Numero of its replacement). */
  numero: string;
  kind: string;
  /** FechaEmision as given, and its instant. */
  fecha_emision: string;
  fecha_ms: Millis;
  receptor: string | null;
  total_comprobante: string;
  moneda: string;
  recorded_at: Millis;
  /** The clave of the electronic document that replaces it (null: still owed). */
  replaced_by: string | null;
  replaced_at: Millis | null;
}

export interface Database {
  recibidos: RecibidosTable;
  recibidos_respuestas: RecibidosRespuestasTable;
  accounts: AccountsTable;
  signing_keys: SigningKeysTable;
  revoked_tokens: RevokedTokensTable;
  issuers: IssuersTable;
  documents: DocumentsTable;
  document_numbering: DocumentNumberingTable;
  exchange_rates: ExchangeRatesTable;
  document_references: DocumentReferencesTable;
  contingency_provisionals: ContingencyProvisionalsTable;
  jobs: JobsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  queue_workers: QueueWorkersTable;
  email_deliveries: EmailDeliveriesTable;
  account_mail: AccountMailTable;
  account_mail_allow: AccountMailAllowTable;
  mail_requests: MailRequestsTable;
  account_mailboxes: AccountMailboxesTable;
  idempotency_keys: IdempotencyKeysTable;
}

/** A submission's idempotency key (issue 36, migration 0020): kept 24 h with the body's hash and what it made. */
export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  /** service/documents.ts hashBody of the body as submitted. */
  body_hash: string;
  document_id: number;
  /** The client API's answer (status and JSON body), replayed as it was; null for an in-process submission. */
  answer_status: number | null;
  answer_json: string | null;
  created_at: Millis;
}

/** An account's suppliers' mailbox (issue 30, migration 0017). */
export interface AccountMailboxesTable {
  account_id: number;
  imap_url: string;
  password_enc: string;
  rules_json: string;
  interval_s: number;
  created_at: Millis;
  updated_at: Millis;
}

export type Account = Selectable<AccountsTable>;
export type Issuer = Selectable<IssuersTable>;
export type DocumentRow = Selectable<DocumentsTable>;
export type Job = Selectable<JobsTable>;
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
export type EmailDelivery = Selectable<EmailDeliveriesTable>;
export type AccountMail = Selectable<AccountMailTable>;
