/**
 * `send` and `batch` warn, one stderr line per issuer, from 30 days before an issuer's certificate ends
 * (core/sign/cert-expiry.ts: the same wording as `fecr doctor` and the service's `emisor.llave_por_vencer`).
 */
import type { Ctx } from '../../cli/context.js';
import { info } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import type { Backend } from '../../client/backend.js';
import { certificateEndWarning } from '../../core/sign/cert-expiry.js';

/** The warnings (without `warning: `) for those of `ids` whose certificate ends soon. Never throws: a warning only. */
export async function certificateWarnings(ctx: Ctx, backend: Pick<Backend, 'listIssuers'>, ids: Iterable<string>): Promise<string[]> {
  const wanted = new Set([...ids].filter((id) => id !== ''));
  if (wanted.size === 0) return [];
  try {
    const issuers = wanted.size === 1 ? await backend.listIssuers([...wanted][0]) : await backend.listIssuers();
    const now = ctx.now();
    return issuers
      .filter((i) => wanted.has(i.identificacion) && i.certificateUntil !== undefined)
      .map((i) => certificateEndWarning(i.identificacion, Date.parse(i.certificateUntil!), now))
      .filter((line): line is string => line !== undefined);
  } catch {
    return [];
  }
}

/** Prints each warning as one `warning: ` line on stderr. */
export function printCertificateWarnings(ctx: Ctx, lines: string[]): void {
  for (const line of lines) info(ctx, `warning: ${safeText(line)}`);
}
