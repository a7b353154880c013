/**
 * What the issuer-facing CLI verbs need from fecr, whether the service runs in-process (local mode:
 * embedded SQLite and the local emulator) or on a hosted instance reached over HTTP (remote mode).
 * A script written against local mode runs unchanged against a hosted one because every verb goes
 * through this one interface. Failures are BackendErrors; verdicts of Hacienda are data.
 */
import type { Finding } from '../core/model.js';

export type FileType = 'XML' | 'PDF' | 'RESPUESTA';

/** Where a document stands (the client API's shape, src/api/contract.ts). */
export type { DocumentEstado, DocumentStatus } from '../api/contract.js';
import type { DocumentEstado, DocumentStatus } from '../api/contract.js';

/** A mail of an accepted comprobante to its receptor: estado pendiente (being sent or waiting for a retry), enviado, fallido. */
export type { MailStatus } from '../api/contract.js';
import type { MailStatus } from '../api/contract.js';

export interface DocumentQuery {
  estado?: DocumentEstado;
  /** ISO 8601 date or date-time: documents created at or after it. */
  since?: string;
  limit?: number;
  /** Only this issuer's documents (its identificación). */
  emisor?: string;
}

export type { CabysEntry, ExoneracionSummary, IssuerDetails, IssuerSummary, TaxpayerSummary } from '../api/contract.js';
import type { CabysEntry, ExoneracionSummary, IssuerDetails, IssuerSummary, TaxpayerSummary } from '../api/contract.js';

export type BackendErrorCode =
  /** The input was refused; `findings` say why (exit 1). */
  | 'invalid'
  /** Token missing, invalid or expired; bad credentials (exit 4). */
  | 'auth'
  /** Unknown clave, issuer, … (exit 1). */
  | 'not_found'
  /** The service or Hacienda could not be reached or failed (exit 1). */
  | 'unavailable';

/**
 * What an issuer update did besides saving the record (local mode): its documents held because Hacienda had refused
 * its credentials (`credenciales_invalidas`) were released and sent now; `stillHeld` of them were refused again.
 * A hosted service sends them on its own (remote mode: nothing to report).
 */
export interface IssuerUpdate {
  released: number;
  stillHeld: number;
}

export class BackendError extends Error {
  constructor(
    readonly code: BackendErrorCode,
    message: string,
    readonly findings: Finding[] = [],
  ) {
    super(message);
    this.name = 'BackendError';
  }
}

/** What a submission gave. */
export interface SubmitOutcome {
  clave: string;
  estado?: DocumentEstado;
  /** The same body was sent before under this clave (nothing new stored; remotely: a replay under its idempotency key). */
  alreadySent?: boolean;
  /** The numeroReferencia fecr took for a body without one. */
  assigned?: number;
}

export interface SubmitOptions {
  /**
   * Local mode, a body without numeroReferencia: the key of a batch row (written to its journal first); a document
   * stored under it is returned (alreadySent) instead of a new one with a new number.
   */
  submissionKey?: string;
  /** Local mode: the clave's situación for a body that gives none, not part of its identity (`contingencia: auto`, issue 30). */
  situacion?: '1' | '2' | '3';
  /**
   * The intent's idempotency key (issue 36): the same key and body within 24 h give the document it made (alreadySent).
   * Remote: sent as the Idempotency-Key header; without one a key of this call is made, the same for its retries.
   */
  idempotencyKey?: string;
  /** Sign and send even what Hacienda is known to reject (`--force`; remotely `?forzar=1`): see service/pre-sign-checks.ts. */
  force?: boolean;
}

export type { IssuerNumbers, NumberSeries, StartRequest } from '../service/numbering.js';
import type { IssuerNumbers, StartRequest } from '../service/numbering.js';

export interface NumberingApi {
  list(identificacion: string): Promise<IssuerNumbers>;
  /** Sets where series start; refused (invalid) below a number already used, naming it. */
  set(identificacion: string, starts: readonly StartRequest[]): Promise<IssuerNumbers>;
}

/** An exchange rate and where it came from (`fuente`: the indicator URL; `cached`: from the data dir's cache). */
export interface TipoCambioInfo {
  moneda: string;
  fecha: string;
  venta: string;
  fuente: string;
  cached: boolean;
}

export interface Backend {
  readonly mode: 'local' | 'remote';
  registerIssuer(record: unknown): Promise<void>;
  updateIssuer(record: unknown): Promise<void | IssuerUpdate>;
  getIssuer(identificacion: string): Promise<IssuerSummary | null>;
  /** The account's issuers (or the one with this identificación), records without secrets, by identificación. */
  listIssuers(identificacion?: string): Promise<IssuerDetails[]>;
  /**
   * Validates, signs and queues a document; returns its clave (the same clave for an identical resubmission), and
   * `estado` when the document is held already (local mode: its issuer's credentials were refused by Hacienda).
   */
  submit(body: unknown, opts?: SubmitOptions): Promise<SubmitOutcome>;
  status(clave: string): Promise<DocumentStatus | null>;
  /** Waits until Hacienda decides (aceptado / rechazado / error) or the timeout; returns the last status. */
  waitForVerdict(clave: string, opts: { timeoutMs: number; onProgress?: (s: DocumentStatus) => void }): Promise<DocumentStatus>;
  file(clave: string, type: FileType): Promise<Buffer | null>;
  listDocuments(query: DocumentQuery): Promise<DocumentStatus[]>;
  /**
   * Mails an accepted document to its receptor again (to `to` when given, else to its stored recipients); local mode
   * sends it before returning (or leaves it waiting for a retry). Returns that mail.
   */
  emailDocument(clave: string, to?: string[]): Promise<MailStatus>;
  /**
   * The BCCR selling rate of `moneda` (USD, the default, or EUR: today only) for a Costa Rica day `YYYY-MM-DD` from
   * Hacienda's indicator API (cached per day by the service), and its source. Remotely POST /api/consultar/tipo-cambio.
   */
  tipoCambio?(fecha: string, moneda?: string): Promise<TipoCambioInfo>;
  /** A period's archive streamed into `out` (remote: POST /api/archivo/exportar; local mode opens the data dir itself: client/archive.ts). */
  archive?(out: NodeJS.WritableStream, opts: ArchiveRequest): Promise<import('../service/archive.js').ArchiveExportResult>;
  /** With `impuesto`, also each code's IVA rate (a service that ignores it leaves it out). */
  cabys(text: string, opts?: { impuesto?: boolean }): Promise<CabysEntry[]>;
  /**
   * With `actividades`, also the taxpayer's active economic activities; with `detalle`, those and its régimen and
   * situación (a service that ignores them leaves them out).
   */
  taxpayer(identificacion: string, opts?: { actividades?: boolean; detalle?: boolean }): Promise<TaxpayerSummary | null>;
  exoneracion(numero: string): Promise<ExoneracionSummary | null>;
  /** The account's webhook URL (null: none). */
  webhookUrl(): Promise<string | null>;
  /**
   * Points the account's webhook at `url` (null: nowhere) keeping its signing secret; `secret` is the new
   * `whsec_…` secret when the account had none (shown once), else null.
   */
  setWebhookUrl(url: string | null): Promise<{ secret: string | null }>;
  /**
   * Local mode: runs the service's background work (the worker: sends, polls, webhook deliveries, and the
   * emulator in env local) in this process until close(). Remote mode: nothing (the hosted service does it).
   */
  keepWorking(): Promise<void>;
  /**
   * Local mode: sends the receptor mails still queued (a batch takes its verdicts first, then mails) until each had
   * its attempt or `signal` aborts; `onProgress` hears how many are left. Returns how many are left. Remote mode: 0
   * at once (the hosted service mails).
   */
  deliverQueuedMail(opts?: { signal?: AbortSignal; onProgress?: (left: number) => void }): Promise<number>;
  /**
   * Local mode: the issuer's numbering (`fecr emisor numbers`): the next free number of each series, and where a series
   * starts. A hosted service has none: its bodies carry numeroReferencia.
   */
  numbering?(): NumberingApi;
  /** Local mode: why a pendiente document has not reached Hacienda yet (its last send attempt's cause, one line), else null. */
  unsentCause?(clave: string): Promise<string | null>;
  /** The buyer's side (`fecr recibidos`): suppliers' comprobantes imported, checked and answered. */
  recibidos?(): import('./recibidos.js').RecibidosApi;
  /** The accountant's reports (`fecr report iva`, issue 29). */
  reports?(): import('./reports.js').ReportsApi;
  /** Annul, replace, pay, and who references a comprobante (`fecr documents annul|replace|payment`, `fecr status`; issue 30). */
  corrections?(): CorrectionsApi;
  /** Provisional comprobantes of an outage and what is owed (`fecr contingency`, issue 30). */
  contingency?(): import('./contingency.js').ContingencyApi;
  close(): Promise<void>;
}

/** What `fecr archive export` asks of a backend (the service's export options but the PDF renderer, its own). */
export type ArchiveRequest = Omit<import('../service/archive.js').ArchiveExportOptions, 'renderPdf'>;

/**
 * Issue 30 (client/corrections.ts re-exports it): annul a comprobante (an NC), replace one Hacienda rejected, record a
 * payment against a credit sale (a REP), and who references a comprobante with its balance (`fecr status`).
 */
export interface CorrectionsApi {
  /** Signs and queues the NC that annuls an accepted comprobante in full (as `submit` does a body). */
  annul(clave: string, opts?: { razon?: string }): Promise<SubmitOutcome>;
  /** Signs and queues `body` as the replacement of a rejected comprobante (CodigoReferencia 16, TipoDocIR 10). */
  replace(clave: string, body: unknown, opts?: { razon?: string }): Promise<SubmitOutcome>;
  /** Signs and queues the REP of a payment received against an accepted credit sale. */
  payment(clave: string, p: import('../service/corrections.js').PaymentRequest): Promise<SubmitOutcome>;
  /** The documents that reference a comprobante, and a sale's balance; null for an unknown clave. */
  links(clave: string): Promise<import('../service/corrections.js').DocumentLinks | null>;
}
