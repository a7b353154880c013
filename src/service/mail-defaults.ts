/**
 * The shapes of mail delivery's settings: an SMTP server, a sender, and the service's defaults (ServiceContext.mail).
 * Types only, so that the service's context names them without importing the settings' use cases
 * (mail-settings.ts), which import the context.
 */

export type SmtpSecurity = 'tls' | 'starttls' | 'none';

export interface SmtpServer {
  host: string;
  port: number;
  /** tls: TLS from the first byte; starttls: STARTTLS required; none: STARTTLS when the server offers it. */
  security: SmtpSecurity;
  user?: string;
  password?: string;
  /** Extra trusted CA certificates (PEM) for the server's certificate (tests, private CAs). */
  ca?: string;
}

/** The operator's sender (an account's own, else the service's): never an address a tenant wrote. */
export interface MailSender {
  /**
   * The From address (and the SMTP envelope's MAIL FROM). Absent: a mail through an SMTP server is refused, unless
   * the service is the CLI's local mode (MailDefaults.issuerAsSender) or the mail goes to the outbox, where the
   * issuer's own address stands in (delivery/email-policy.ts).
   */
  fromAddress?: string;
  /** The From display name; absent: the issuer's name. */
  fromName?: string;
  /** Absent: the issuer's address (its correoElectronico). */
  replyTo?: string;
}

/**
 * How many mails the client API (`POST /api/enviar/correo`) may ask for: at most `perDocument` queued for one
 * document within 24 h, and `perAccount` requests of one account (queued or refused) within an hour. Beyond, 429
 * with Retry-After. The automatic mail after aceptado, and the operator's own resends (the CLI's local mode), are
 * not counted.
 */
export interface MailApiLimits {
  perDocument: number;
  perAccount: number;
}

export const MAIL_LIMIT_WINDOWS = { documentMs: 24 * 3600_000, accountMs: 3600_000 } as const;

/**
 * The defaults (`fecr serve --mail-resends-per-document`, `--mail-resends-per-account`): a receptor who lost the mail
 * needs one resend, maybe one to its accountant: 5 a day per document leaves room for that and caps what one accepted
 * comprobante can throw at its receptor; 60 an hour per account (one a minute) covers the resends a person or an
 * integration asks for on its customers' demand, and caps an account's whole output through the operator's server.
 */
export const DEFAULT_MAIL_LIMITS: MailApiLimits = { perDocument: 5, perAccount: 60 };

/** The service's defaults (ServiceContext.mail): a default SMTP server and sender, and the outbox folder. */
export interface MailDefaults extends MailSender {
  /** No server: mails go to the outbox. */
  smtp?: SmtpServer;
  /** Where `.eml` files go when no SMTP server is set (`<data dir>/outbox`). */
  outboxDir: string;
  /** The client API's limits; absent: DEFAULT_MAIL_LIMITS. */
  limits?: MailApiLimits;
  /**
   * The CLI's local mode: the data dir's account is its own operator, so without a configured sender the issuer's
   * own address is the From. Never set by `fecr serve`.
   */
  issuerAsSender?: boolean;
}
