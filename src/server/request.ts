/**
 * What every client-API handler does around its use case: parse the body with its zod schema (400 "Campos
 * requeridos faltantes" with a detail per field otherwise) and run the use case, its ServiceError becoming the HTTP
 * error body with the same status, code and details.
 */
import type { z } from 'zod';
import { ServiceError } from '../service/service-error.js';
import { findingsFromZod } from './api-schemas.js';
import { ERROR_CODES, HttpError, MESSAGES } from './errors.js';

/** Parses a small request body with its zod schema; 400 "Campos requeridos faltantes" + details otherwise. */
export function valid<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const r = schema.safeParse(body);
  if (!r.success) throw new HttpError(400, ERROR_CODES.badRequest, MESSAGES.requiredFields, findingsFromZod(r.error));
  return r.data;
}

/** Runs a use case; its ServiceError becomes the HTTP error body with the same status, code and details. */
export async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ServiceError) throw new HttpError(e.status, e.code, e.message, e.details);
    throw e;
  }
}
