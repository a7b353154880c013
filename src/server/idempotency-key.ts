/**
 * The `Idempotency-Key` header of `POST /api/enviar/items` (issue 36; Stripe's contract, service/idempotency.ts): at
 * most 255 printable ASCII characters; the same key and body within 24 h answer the first result (the same status and
 * body, with `Idempotent-Replayed: true`), the same key with another body is a 409 `conflict` naming the key. With a key,
 * a body may leave numeroReferencia out: the service takes the series' next free number (a retry cannot take a second).
 */
import { ERROR_CODES, HttpError } from './errors.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Set on an answer replayed from an earlier request under the same key. */
export const REPLAYED_HEADER = 'idempotent-replayed';
const MAX_LENGTH = 255;

/** The request's key (undefined without the header); a malformed one is a 400 naming the header. */
export function idempotencyKeyOf(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const bad = (message: string) => new HttpError(400, ERROR_CODES.badRequest, `El encabezado Idempotency-Key no es válido: ${message}`, [{ path: 'Idempotency-Key', message }]);
  if (Array.isArray(value)) throw bad('debe enviarse una sola vez');
  if (value.length === 0 || value.length > MAX_LENGTH) throw bad(`debe tener de 1 a ${MAX_LENGTH} caracteres`);
  if (!/^[\x20-\x7e]+$/.test(value)) throw bad('solo admite caracteres ASCII imprimibles');
  return value;
}

/** For /openapi.json (src/server/openapi.ts): the header parameter of POST /api/enviar/items. */
export const IDEMPOTENCY_PARAMETER: Record<string, unknown> = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: MAX_LENGTH, pattern: '^[\\x20-\\x7E]+$' },
  description:
    'fecr extension (Stripe\'s contract): one key per intended document, kept 24 h per account. The same key with the same ' +
    'body answers the first result (the same status and body, with the response header Idempotent-Replayed: true) and ' +
    'makes nothing new, also when two requests under it arrive at once; the same key with another body is a 409 conflict ' +
    'naming the key. A refused body (400) keeps no key. With a key, numeroReferencia may be left out: the series\' next ' +
    'free number is taken, once. Longer than 255 characters, or not printable ASCII: 400 naming the header.',
  'x-fecr-extension': true,
};
