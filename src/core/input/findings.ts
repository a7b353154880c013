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
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // Prefer the branch that got furthest (the deepest path), else the first branch.
    let best: Issue[] | undefined;
    let bestDepth = -1;
    for (const branch of issue.errors) {
      const depth = Math.max(...branch.map((i) => i.path.length));
      const isTypeOnly = branch.every((i) => i.code === 'invalid_type');
      const score = depth * 2 + (isTypeOnly ? 0 : 1);
      if (score > bestDepth) {
        bestDepth = score;
        best = branch;
      }
    }
    if (best && !best.every((i) => i.code === 'invalid_type')) {
      return best.map((i) => ({ ...i, path: [...issue.path, ...i.path] }));
    }
  }
  return [issue];
}

function messageOf(issue: Issue): string {
  if (issue.code === 'invalid_type') {
    if (/received undefined/.test(issue.message)) return 'is required';
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
