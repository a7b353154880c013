/**
 * `fecr send`'s idempotency key of a body without numeroReferencia (issue 36), as `fecr batch` keys its rows: the issuer
 * and the body's content hash (client/batch/journal.ts bodyHash, the service's canonical hash), with the --situacion
 * asked for (which goes into the body). The same body sent again within 24 h, locally or to a hosted service, gets the
 * document it made instead of a second one under the next number; `fecr send --new` sends without it.
 */
import { createHash } from 'node:crypto';
import { bodyHash, isUnnumbered } from './batch/journal.js';

/** The key of an unnumbered body (`send:` + sha256), or undefined for a numbered one (its number is its identity). */
export function sendKeyOf(body: unknown, situacion?: string): string | undefined {
  if (!isUnnumbered(body)) return undefined;
  const emisor = String((body as { emisor?: unknown }).emisor ?? '').trim();
  return `send:${createHash('sha256').update(`${emisor}\n${situacion ?? ''}\n${bodyHash(body)}`).digest('hex')}`;
}
