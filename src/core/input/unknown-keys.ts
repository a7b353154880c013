/**
 * Unknown keys of an input object are findings: `receptorr: unknown field; did you mean "receptor"?`. A key that a
 * schema does not name would otherwise be dropped in silence, and with it the value the client meant to send.
 */
import { z } from 'zod';

/**
 * An object schema that refuses the keys it does not name. Its `unrecognized_keys` issue carries one message line per
 * key, in the key order; `findingsFromZod` turns each line into a finding at the key's path.
 */
export function strictObject<const S extends z.core.$ZodLooseShape>(shape: S) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? iss.keys.map((k) => unknownFieldMessage(k, known)).join('\n') : undefined),
  });
}

/** `unknown field; did you mean "receptor"?`, or `unknown field` when no known name is close. */
export function unknownFieldMessage(key: string, known: readonly string[]): string {
  const near = closestName(key, known);
  return near === undefined ? 'unknown field' : `unknown field; did you mean "${near}"?`;
}

/**
 * The known name closest to `name`: the fewest edits (insertions, deletions, substitutions, swaps of two neighbours;
 * letter case ignored), at most a third of the name's length (at least 1); else the one known name that begins
 * with it (`precio` → `precioUnitario`, at least 4 characters).
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  // No field name is this long: no typo of one (and no edit distance over megabytes).
  if (name.length > 64) return undefined;
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  if (best !== undefined || lower.length < 4) return best;
  const prefixed = known.filter((k) => k.toLowerCase().startsWith(lower));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/**
 * Optimal string alignment distance (Levenshtein plus the swap of two neighbours), case-sensitive; any value ≥ `limit`
 * is returned as `limit`. The one edit distance of fecr (unknown fields, CSV columns, profile names).
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin >= limit) return limit;
    prev2 = prev;
    prev = row;
  }
  return Math.min(prev[b.length]!, limit);
}
