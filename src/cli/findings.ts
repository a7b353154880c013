/**
 * How the CLI shows a validation failure: one headline that says what is invalid and how many findings there are
 * (`error: invalid document: 3 findings`), then one line per finding (`  path: message`), all on stderr.
 */
import type { Finding } from '../core/model.js';
import type { Ctx } from './context.js';
import { writeLine } from './io.js';

/** `invalid document: 3 findings`, `invalid issuer record: 1 finding`. */
export function invalidHeadline(subject: string, count: number): string {
  return `invalid ${subject}: ${count} finding${count === 1 ? '' : 's'}`;
}

/** `error: HEADLINE`, then `  path: message` per finding, on stderr. */
export function printFindings(ctx: Ctx, headline: string, findings: readonly Finding[]): void {
  writeLine(ctx.io.stderr, `error: ${headline}`);
  for (const f of findings) writeLine(ctx.io.stderr, `  ${f.path}: ${f.message}`);
}
