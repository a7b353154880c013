/**
 * What a received comprobante may be before anything reads it (issue 25), and what identifies it.
 *
 * Size: a v4.4 comprobante has at most 1 000 LineaDetalle (the XSD's maxOccurs). fecr's own 1 000-line invoice is
 * 0.7 MB; pretty-printed with two commercial codes and a discount a line, as other systems write them, 1.2 MB; with
 * exoneraciones and several taxes a line, about 2 MB. The limit, 4 MiB, is twice that, and bounds the cost of one
 * file: reading and checking takes about 1 s and some 50 MB of memory per MiB. A file over it is refused unread (its
 * finding and the sha256 of the bytes read, never the bytes). FECR_RECIBIDOS_MAX_BYTES changes it (the CLI's bounded
 * read and the service both use it; the client API's upload route fits one document of that size).
 *
 * Identity: a comprobante is its clave, and its issuer and consecutivo (the clave's positions 10–41: the issuer's
 * 12-character identificación and the 20-digit consecutivo). The same document in other bytes (a UTF-8 BOM, a
 * trailing newline, another signature) is the same document.
 */

/** The default limit of one received comprobante, in bytes (4 MiB). */
export const RECEIVED_MAX_BYTES = 4 * 1024 * 1024;

/** The setting's bounds: below 16 KiB no real comprobante fits; above 64 MiB one file costs gigabytes to check. */
const MIN = 16 * 1024;
const MAX = 64 * 1024 * 1024;

export const RECEIVED_MAX_BYTES_VAR = 'FECR_RECIBIDOS_MAX_BYTES';

/** The limit from the environment (FECR_RECIBIDOS_MAX_BYTES, bytes), else the default. Throws on a value out of bounds. */
export function receivedMaxBytes(env: Record<string, string | undefined>): number {
  const raw = env[RECEIVED_MAX_BYTES_VAR]?.trim();
  if (!raw) return RECEIVED_MAX_BYTES;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < MIN || n > MAX) {
    throw new Error(`${RECEIVED_MAX_BYTES_VAR} must be a number of bytes from ${MIN} to ${MAX} (default ${RECEIVED_MAX_BYTES}), not "${raw}"`);
  }
  return n;
}

/** The refusal of a file over the limit (`size`: its size, when known beyond the bytes read). */
export function oversizeFinding(size: number, limit: number): { path: string; message: string } {
  return {
    path: 'archivo',
    message: `${size > limit + 1 ? `${size} bytes` : `more than ${limit} bytes`}: over the limit of ${limit} bytes for a comprobante (${RECEIVED_MAX_BYTES_VAR}); not read`,
  };
}

/**
 * The document's identity beyond its clave: the issuer's identificación and the consecutivo, as the clave writes them
 * (12 + 20 characters). Null for what is not a clave.
 */
export function emisorConsecutivo(clave: string | undefined | null): string | null {
  return clave && /^506\d{6}[A-Za-z0-9]{12}\d{20}[123][A-Za-z0-9]{8}$/.test(clave) ? clave.slice(9, 41) : null;
}
