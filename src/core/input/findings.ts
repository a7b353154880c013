/** Turning schema issues into findings `{path, message}` with paths like `detalleServicio[2].impuesto[0].tarifa`. */
import type { z } from 'zod';
import type { Finding } from '../model.js';

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out || '(body)';
}

export function findingsFromZod(error: z.ZodError): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    // Unions report one issue per branch; keep the most useful, one per path.
    for (const leaf of flattenUnion(issue)) {
      const path = formatPath(leaf.path);
      if (seen.has(path)) continue;
      seen.add(path);
      out.push({ path, message: messageOf(leaf) });
    }
  }
  return out;
}

type Issue = z.core.$ZodIssue;

function flattenUnion(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
  // The branch whose type matched got inside the value: its issues have deeper paths. Use it.
  let best: Issue[] | undefined;
  let bestDepth = 0;
  for (const branch of issue.errors) {
    const depth = Math.max(0, ...branch.map((i) => i.path.length));
    if (depth > bestDepth) {
      bestDepth = depth;
      best = branch;
    }
  }
  // Else a branch of the right type that failed a refinement (format, range) says the most.
  best ??= issue.errors.find((b) => b.length > 0 && b.every((i) => i.code !== 'invalid_type' && i.code !== 'invalid_value'));
  if (best) return best.flatMap((i) => flattenUnion({ ...i, path: [...issue.path, ...i.path] } as Issue));
  const leaves = issue.errors.flat();
  if (leaves.length > 0 && leaves.every((i) => /received undefined/.test(i.message))) return [{ ...issue, message: 'is required' } as Issue];
  // A branch with a message of our own (e.g. "must be an integer") explains the failure best.
  const own = leaves.find((i) => !i.message.startsWith('Invalid input'));
  if (own && !issue.message.startsWith('must')) return [{ ...own, path: issue.path } as Issue];
  return [issue];
}

function messageOf(issue: Issue): string {
  if (issue.code === 'invalid_type') {
    if (/received undefined/.test(issue.message)) return 'is required';
    if (!issue.message.startsWith('Invalid input')) return issue.message;
    return `must be ${article(issue.expected)}`;
  }
  if (issue.code === 'invalid_union') {
    if (/received undefined/.test(issue.message)) return 'is required';
    return issue.message.startsWith('Invalid input') ? 'has the wrong type' : issue.message;
  }
  return issue.message;
}

function article(expected: string): string {
  if (expected === 'array' || expected === 'object' || expected === 'integer') return `an ${expected}`;
  return `a ${expected}`;
}
