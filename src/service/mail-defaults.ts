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

export interface MailSender {
  /** The From address; absent: the issuer's own address (its correoElectronico). */
  fromAddress?: string;
  /** The From display name; absent: the issuer's name. */
  fromName?: string;
  replyTo?: string;
}

/** The service's defaults (ServiceContext.mail): a default SMTP server and sender, and the outbox folder. */
export interface MailDefaults extends MailSender {
  /** No server: mails go to the outbox. */
  smtp?: SmtpServer;
  /** Where `.eml` files go when no SMTP server is set (`<data dir>/outbox`). */
  outboxDir: string;
}
