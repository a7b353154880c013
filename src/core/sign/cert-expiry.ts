/**
 * The end of an issuer's certificate (its llave criptográfica), in one place: how many days are left, from when fecr
 * warns, and the one wording of the warning (`fecr doctor`, `send`, `batch`, and the service's log line and its
 * `emisor.llave_por_vencer` webhook event). Pure: the caller gives the instant.
 */

/** The days before a certificate's end from which fecr warns. */
export const CERT_WARN_DAYS = 30;

const DAY = 86_400_000;

/** Whole days from `now` until `notAfter` (rounded down; negative once it has ended). */
export function daysUntilExpiry(notAfter: Date | number, now: Date | number): number {
  return Math.floor((new Date(notAfter).getTime() - new Date(now).getTime()) / DAY);
}

/** The day a certificate ends, YYYY-MM-DD (UTC, as `fecr certs show` and `doctor` print it). */
export function expiryDay(notAfter: Date | number): string {
  return new Date(notAfter).toISOString().slice(0, 10);
}

/** What to do about a certificate that ends soon (or has ended). */
export const RENEW_ADVICE = "get a new llave criptográfica from Hacienda, put the issuer's .p12 and its PIN in ISSUER.json (fecr emisor update ISSUER.json --p12 FILE --pin-stdin)";

/** Whether a certificate ending at `notAfter` is warned about at `now`: still valid, under CERT_WARN_DAYS days left. */
export function endsSoon(notAfter: Date | number, now: Date | number): boolean {
  return new Date(notAfter).getTime() >= new Date(now).getTime() && daysUntilExpiry(notAfter, now) < CERT_WARN_DAYS;
}

/**
 * The warning (without its `warning: ` prefix) for an issuer whose certificate ends within CERT_WARN_DAYS days, or
 * undefined when it does not (or has ended already: signing refuses it then, with its own error).
 */
export function certificateEndWarning(identificacion: string, notAfter: Date | number, now: Date | number): string | undefined {
  if (!endsSoon(notAfter, now)) return undefined;
  const days = daysUntilExpiry(notAfter, now);
  return `the certificate of issuer ${identificacion} ends on ${expiryDay(notAfter)} (${days} day${days === 1 ? '' : 's'}): renew it (${RENEW_ADVICE})`;
}
