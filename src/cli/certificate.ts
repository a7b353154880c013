/**
 * What a CLI verb says when a .p12 does not open (core/sign/p12.ts SigningError): one wording per failure, whichever
 * verb opened it (certs show, init --p12, document xml, emisor register|update --p12, the interactive prompt).
 * The service's own refusals (the API's Spanish messages) are not these: they are quoted as the API gives them.
 */

/** The one wording of a wrong PIN. */
export const WRONG_PIN = 'wrong PIN for this certificate';

/** A SigningError (or anything with its `code`) as one lower-case clause; `undefined` when `e` is not one. */
export function certificateFailure(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null || typeof (e as { code?: unknown }).code !== 'string') return undefined;
  const { code, message } = e as { code: string; message?: string };
  if (code === 'WRONG_PIN') return WRONG_PIN;
  if (!['NO_PRIVATE_KEY', 'NO_CERTIFICATE', 'CERT_EXPIRED', 'CERT_NOT_YET_VALID', 'BAD_P12'].includes(code)) return undefined;
  const text = (message ?? code).trim().replace(/\.$/, '');
  return text.charAt(0).toLowerCase() + text.slice(1);
}
