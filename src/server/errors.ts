/**
 * The error body of the spec (`{error, message}`, plus an additive `details: [{path, message}]` for validation),
 * its exact Spanish messages, and the Fastify wiring that turns every client mistake (malformed JSON, wrong
 * content type, body over 1 MiB, unknown route) into that body with a 4xx status. Anything unexpected becomes
 * 500 `internal_error`, logged with its stack and never shown to the client.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { storeFaultOf } from '../store/faults.js';

/** Maximum request body (bytes): 1 MiB. Pass it as Fastify's `bodyLimit`. */
export const BODY_LIMIT = 1024 * 1024;

/** Error codes used by the apps (the spec's, plus a few for transport-level failures). */
export const ERROR_CODES = {
  badRequest: 'bad_request',
  invalidCredentials: 'invalid_credentials',
  unauthorized: 'unauthorized',
  notFound: 'not_found',
  /** 409: an Idempotency-Key used within 24 h with another body (issue 36; fecr's, the spec's catalogue is "not shown"). */
  conflict: 'conflict',
  payloadTooLarge: 'payload_too_large',
  tooManyRequests: 'too_many_requests',
  serviceUnavailable: 'service_unavailable',
  internal: 'internal_error',
} as const;

/** Messages. The first eight are the spec's Errors table, verbatim. */
export const MESSAGES = {
  /** 400 bad_request on login. */
  loginFieldsRequired: 'Los campos base y password son requeridos',
  /** 400 bad_request on the client API (submission, issuer registration, validation). */
  requiredFields: 'Campos requeridos faltantes',
  /** 401 invalid_credentials on login (unknown account, wrong password, disabled account). */
  invalidCredentials: 'Base o contraseña incorrectos',
  /** 401 unauthorized on every client-API endpoint (and /logout). */
  unauthorized: 'Token inválido o expirado',
  issuerNotFound: 'Emisor no encontrado',
  exonerationNotFound: 'Documento de exoneración no encontrado',
  fileNotFound: 'Archivo no encontrado para la clave proporcionada',
  identificationNotFound: 'Identificación no encontrada',
  // Not in the spec (its catalogue is "not shown"); ours.
  routeNotFound: 'Recurso no encontrado',
  internal: 'Error interno',
  payloadTooLarge: 'El cuerpo de la solicitud excede el tamaño máximo de 1 MiB',
  tooManyRequests: 'Demasiados intentos fallidos; intente de nuevo más tarde',
  logoutOk: 'Sesión cerrada',
  /** 503: the store's disk is full (nothing was written; the same request can be repeated). */
  storageFull: 'El almacenamiento del servicio está lleno; intente de nuevo más tarde',
  /** 503: the database connection was lost or refused (nothing was written; the same request can be repeated). */
  storeUnavailable: 'Servicio no disponible temporalmente; intente de nuevo más tarde',
} as const;

/** Texts of `details[].message` for transport-level 400s (the top-level message stays the spec's). */
export const DETAIL_MESSAGES = {
  malformedJson: 'El cuerpo de la solicitud no es JSON válido',
  unsupportedMediaType: 'El Content-Type debe ser application/json',
  badRequest: 'Solicitud inválida',
} as const;

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: string;
  message: string;
  details?: ErrorDetail[];
}

/** `{error, message}` plus `details` when given and non-empty. */
export function errorBody(error: string, message: string, details?: readonly ErrorDetail[]): ErrorBody {
  return details && details.length > 0 ? { error, message, details: [...details] } : { error, message };
}

/** Sends the error body with a status and returns the reply (for `return sendError(...)` in handlers). */
export function sendError(reply: FastifyReply, statusCode: number, error: string, message: string, details?: readonly ErrorDetail[]): FastifyReply {
  return reply.code(statusCode).type('application/json; charset=utf-8').send(errorBody(error, message, details));
}

/**
 * A client error a handler can throw; `installErrorHandling` answers it with its status and body.
 * E.g. `throw new HttpError(404, 'not_found', MESSAGES.issuerNotFound)`.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: readonly ErrorDetail[],
    /** Extra response headers (e.g. Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'HttpError';
  }

  body(): ErrorBody {
    return errorBody(this.code, this.message, this.details);
  }
}

export interface ErrorHandlingOptions {
  /** Top-level `message` of a transport-level 400 (malformed JSON, wrong content type): the app's spec message. */
  badRequestMessage: string;
}

// Structural so that any Fastify instance (whatever its logger or type provider) fits.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyFastify = FastifyInstance<any, any, any, any, any>;

/**
 * Installs, on the root instance (call it before registering routes):
 * - JSON as the only body type: the text/plain parser is removed, so any other content type is a 400;
 *   an empty body with `Content-Type: application/json` parses to `undefined` (the handler's own
 *   validation answers it), and `__proto__`/`constructor` poisoning is a 400;
 * - the error handler: Fastify's client errors → 400 bad_request (413 for a body over `bodyLimit`), a thrown
 *   `HttpError` → its status and body, schema validation → 400 with `details`, a store fault (full disk, lost
 *   database connection) → 503 service_unavailable with Retry-After, anything else → 500
 *   internal_error, logged (never a stack to the client);
 * - the not-found handler: 404 `{error: 'not_found', message: 'Recurso no encontrado'}`.
 */
export function installErrorHandling(app: AnyFastify, opts: ErrorHandlingOptions): void {
  if (app.hasContentTypeParser('text/plain')) app.removeContentTypeParser('text/plain');
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    defaultJson(req, text, done);
  });

  app.setNotFoundHandler((_request, reply) => {
    void sendError(reply, 404, ERROR_CODES.notFound, MESSAGES.routeNotFound);
  });

  app.setErrorHandler((err: FastifyError | HttpError | Error, request, reply) => {
    if (err instanceof HttpError) {
      if (err.headers) void reply.headers(err.headers);
      return sendError(reply, err.statusCode, err.code, err.message, err.details);
    }
    const fe = err as FastifyError;
    const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
    if (fe.validation) {
      const details = fe.validation.map((v) => ({
        path: (v.instancePath || '/').replace(/^\//, '').replace(/\//g, '.') || '(body)',
        message: v.message ?? 'inválido',
      }));
      return sendError(reply, 400, ERROR_CODES.badRequest, opts.badRequestMessage, details);
    }
    if (status === 413 || fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(reply, 413, ERROR_CODES.payloadTooLarge, MESSAGES.payloadTooLarge);
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) {
      return sendError(reply, 400, ERROR_CODES.badRequest, opts.badRequestMessage, [{ path: '(content-type)', message: DETAIL_MESSAGES.unsupportedMediaType }]);
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError) {
      return sendError(reply, 400, ERROR_CODES.badRequest, opts.badRequestMessage, [{ path: '(body)', message: DETAIL_MESSAGES.malformedJson }]);
    }
    if (status === 404) return sendError(reply, 404, ERROR_CODES.notFound, MESSAGES.routeNotFound);
    if (status === 429) return sendError(reply, 429, ERROR_CODES.tooManyRequests, MESSAGES.tooManyRequests);
    if (status >= 400 && status < 500) {
      request.log.info({ code: fe.code, statusCode: status }, 'client error');
      return sendError(reply, status, ERROR_CODES.badRequest, opts.badRequestMessage, [{ path: '(request)', message: DETAIL_MESSAGES.badRequest }]);
    }
    // A full disk or a lost database connection is not the client's mistake nor a bug: 503, try again.
    const fault = storeFaultOf(err);
    if (fault) {
      request.log.warn({ fault: fault.kind, code: fault.code }, 'store unavailable');
      void reply.header('retry-after', fault.kind === 'full' ? '30' : '1');
      return sendError(reply, 503, ERROR_CODES.serviceUnavailable, fault.kind === 'full' ? MESSAGES.storageFull : MESSAGES.storeUnavailable);
    }
    request.log.error({ err }, 'unhandled error');
    return sendError(reply, 500, ERROR_CODES.internal, MESSAGES.internal);
  });
}
