/**
 * How the CLI shows a validation failure: one headline that says what is invalid and how many findings there are
 * (`error: invalid document: 3 findings`), then one line per finding (`  path: message`), all on stderr.
 */
import type { Finding } from '../core/model.js';
import type { Ctx } from './context.js';
import { writeLine } from './io.js';
import { safeText } from './safe-text.js';

/** `invalid document: 3 findings`, `invalid issuer record: 1 finding`. */
export function invalidHeadline(subject: string, count: number): string {
  return `invalid ${subject}: ${count} finding${count === 1 ? '' : 's'}`;
}

/** `path: message`, through the sanitiser (a path or message may quote a file name or a supplier's XML). */
export function findingText(f: Finding): string {
  return `${safeText(f.path)}: ${safeText(f.message)}`;
}

/** `error: HEADLINE`, then `  path: message` per finding, on stderr; all of it through the sanitiser. */
export function printFindings(ctx: Ctx, headline: string, findings: readonly Finding[]): void {
  writeLine(ctx.io.stderr, `error: ${safeText(headline)}`);
  for (const f of findings) writeLine(ctx.io.stderr, `  ${findingText(f)}`);
}
