/**
 * Errors of the Hacienda client. Each failure mode has its own class and a stable `code`, so callers
 * (CLI, service) can tell bad credentials from an expired session, a permission problem, an IdP outage,
 * a validation error of the request, or an outcome that is not known yet.
 * Verdicts on documents (aceptado/rechazado) are data, never errors.
 */

export type HaciendaErrorCode =
  | 'HACIENDA_BAD_CREDENTIALS'
  | 'HACIENDA_IDP_CLIENT'
  | 'HACIENDA_IDP_UNAVAILABLE'
  | 'HACIENDA_IDP_ERROR'
  | 'HACIENDA_UNAUTHORIZED'
  | 'HACIENDA_FORBIDDEN'
  | 'HACIENDA_VALIDATION'
  | 'HACIENDA_RATE_LIMITED'
  | 'HACIENDA_UNAVAILABLE'
  | 'HACIENDA_AMBIGUOUS'
  | 'HACIENDA_HTTP'
  | 'HACIENDA_BAD_RESPONSE'
  | 'HACIENDA_INVALID_QUERY';

export class HaciendaError extends Error {
  readonly code: HaciendaErrorCode;
  /** HTTP status that caused it, when there was one. */
  readonly status?: number;
  /** Server-provided detail (X-Error-Cause, IdP error_description, ...). */
  readonly detail?: string;

  constructor(code: HaciendaErrorCode, message: string, opts: { status?: number; detail?: string; cause?: unknown } = {}) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = new.target.name;
    this.code = code;
    if (opts.status !== undefined) this.status = opts.status;
    if (opts.detail !== undefined) this.detail = opts.detail;
  }
}

/** The IdP refused the username/password (`invalid_grant` on the password grant). */
export class BadCredentialsError extends HaciendaError {
  readonly username: string;
  constructor(username: string, environment: string, detail?: string, status?: number) {
    super(
      'HACIENDA_BAD_CREDENTIALS',
      `Hacienda's IdP rejected the credentials of "${username}" in ${environment}` +
        (detail ? ` (${detail})` : '') +
        '. Check usuarioHacienda/claveHacienda: they are issued per environment (sandbox and production differ).',
      { status, detail },
    );
    this.username = username;
  }
}

/** The IdP does not know the client id for this realm: the environment/URL configuration is wrong. */
export class IdpClientError extends HaciendaError {
  constructor(clientId: string, tokenUrl: string, detail?: string, status?: number) {
    super(
      'HACIENDA_IDP_CLIENT',
      `Hacienda's IdP does not accept client "${clientId}" at ${tokenUrl}` +
        (detail ? ` (${detail})` : '') +
        '. The token URL, realm and client id must belong to the same environment.',
      { status, detail },
    );
  }
}

/** The IdP could not be reached or kept failing (network error, 5xx, 429) after retries. */
export class IdpUnavailableError extends HaciendaError {
  constructor(tokenUrl: string, detail: string, opts: { status?: number; cause?: unknown } = {}) {
    super('HACIENDA_IDP_UNAVAILABLE', `Hacienda's IdP is unavailable at ${tokenUrl}: ${detail}`, { ...opts, detail });
  }
}

/** Any other unexpected IdP answer. */
export class IdpError extends HaciendaError {
  constructor(message: string, opts: { status?: number; detail?: string } = {}) {
    super('HACIENDA_IDP_ERROR', message, opts);
  }
}

/** 401 from the reception API even after renewing the token once. */
export class UnauthorizedError extends HaciendaError {
  constructor(url: string, detail?: string) {
    super(
      'HACIENDA_UNAUTHORIZED',
      `Hacienda answered 401 Unauthorized at ${url} even with a freshly renewed token` +
        (detail ? ` (${detail})` : '') +
        '. The token is not accepted by this API: check that the IdP and the reception URL belong to the same environment.',
      { status: 401, detail },
    );
  }
}

/** 403 from the reception API: the token is valid but may not do this. */
export class ForbiddenError extends HaciendaError {
  constructor(url: string, detail?: string) {
    super(
      'HACIENDA_FORBIDDEN',
      `Hacienda answered 403 Forbidden at ${url}` +
        (detail ? ` (${detail})` : '') +
        ': the user is authenticated but has no permission for this operation or environment.',
      { status: 403, detail },
    );
  }
}

/** 400 from the reception API: the request was refused; `detail` is Hacienda's X-Error-Cause. */
export class ReceptionValidationError extends HaciendaError {
  readonly validationException: boolean;
  constructor(clave: string, cause: string, validationException: boolean) {
    super('HACIENDA_VALIDATION', `Hacienda refused comprobante ${clave}: ${cause || '(no X-Error-Cause)'}`, { status: 400, detail: cause });
    this.validationException = validationException;
  }
}

/** 429 with a wait longer than the client is allowed to sleep, or still 429 after every attempt. */
export class RateLimitedError extends HaciendaError {
  /** Epoch ms after which the server said to retry, when known. */
  readonly retryAt?: number;
  constructor(url: string, retryAt?: number) {
    super(
      'HACIENDA_RATE_LIMITED',
      `Hacienda is rate limiting requests to ${url}` + (retryAt ? `; retry after ${new Date(retryAt).toISOString()}` : ''),
      { status: 429 },
    );
    if (retryAt !== undefined) this.retryAt = retryAt;
  }
}

/** Hacienda kept failing (5xx / network) and the request surely had no effect. */
export class ServiceUnavailableError extends HaciendaError {
  constructor(url: string, detail: string, opts: { status?: number; cause?: unknown } = {}) {
    super('HACIENDA_UNAVAILABLE', `Hacienda is unavailable at ${url}: ${detail}`, { ...opts, detail });
  }
}

/**
 * A submission whose outcome is unknown: a POST may have reached Hacienda but neither its answer nor a
 * status query could confirm it. Do not re-submit blindly; query the status later (`getStatus`).
 */
export class AmbiguousSubmissionError extends HaciendaError {
  readonly clave: string;
  constructor(clave: string, detail: string, opts: { cause?: unknown } = {}) {
    super(
      'HACIENDA_AMBIGUOUS',
      `Comprobante ${clave} may or may not have been received by Hacienda (${detail}); query its status before sending it again.`,
      { ...opts, detail },
    );
    this.clave = clave;
  }
}

/** An HTTP status the client has no rule for. */
export class HaciendaHttpError extends HaciendaError {
  constructor(method: string, url: string, status: number, detail?: string) {
    super('HACIENDA_HTTP', `${method} ${url} answered HTTP ${status}` + (detail ? `: ${detail}` : ''), { status, detail });
  }
}

/** A 2xx answer whose body is not what the API documents. */
export class BadResponseError extends HaciendaError {
  constructor(url: string, detail: string) {
    super('HACIENDA_BAD_RESPONSE', `Unexpected response from ${url}: ${detail}`, { detail });
  }
}

/** 400 from a public query: the identification / code / authorization is malformed. */
export class InvalidQueryError extends HaciendaError {
  constructor(url: string, detail?: string) {
    super('HACIENDA_INVALID_QUERY', `Hacienda rejected the query ${url} as invalid (HTTP 400)` + (detail ? `: ${detail}` : ''), {
      status: 400,
      detail,
    });
  }
}
