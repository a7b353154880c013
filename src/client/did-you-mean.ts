/**
 * "Did you mean …?": the known name closest to one that is not known, by the optimal string alignment distance
 * (Levenshtein plus the swap of two adjacent letters, "Damerau-Levenshtein" as spell checkers use it), compared
 * without case. No edit-distance library is in the dependency tree; this is the textbook dynamic programme, not a
 * parser.
 */

/** The edit distance between `a` and `b`: insertions, deletions, substitutions and adjacent swaps, each 1. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name closest to `word` (case aside), when it is close enough to be a slip: at most a third of the
 * word's letters apart (and at least 1, at most 3 edits); undefined when none is.
 */
export function closest(word: string, known: Iterable<string>): string | undefined {
  const w = word.trim().toLowerCase();
  const limit = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = editDistance(w, name.toLowerCase());
    if (d <= limit && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}
