/**
 * The one error type the client-API use cases throw for a client mistake or a missing resource. Transport-free:
 * the HTTP app maps `status`/`code`/`message` (+ `details`) 1:1 onto the spec's error body; the CLI prints them.
 */
import type { Finding } from '../core/model.js';

/** `conflict` (409, issue 36): an Idempotency-Key used before with another body; not in the spec's table, whose catalogue is "not shown". */
export type ServiceErrorCode = 'bad_request' | 'not_found' | 'unauthorized' | 'service_unavailable' | 'conflict';

/** The spec's message for a validation failure (Errors table). */
export const MISSING_FIELDS = 'Campos requeridos faltantes';

export class ServiceError extends Error {
  readonly status: number;
  readonly code: ServiceErrorCode;
  /** Additive `details: [{path, message}]` (validation failures). */
  readonly details?: Finding[];

  constructor(status: number, code: ServiceErrorCode, message: string, details?: Finding[]) {
    super(message);
    this.name = 'ServiceError';
    this.status = status;
    this.code = code;
    if (details !== undefined) this.details = details;
  }

  /** 400 bad_request "Campos requeridos faltantes" with the findings as details. */
  static validation(findings: Finding[]): ServiceError {
    return new ServiceError(400, 'bad_request', MISSING_FIELDS, findings);
  }

  static badRequest(message: string, details?: Finding[]): ServiceError {
    return new ServiceError(400, 'bad_request', message, details);
  }

  static notFound(message: string): ServiceError {
    return new ServiceError(404, 'not_found', message);
  }
}
