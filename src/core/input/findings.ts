/** Turning schema issues into findings `{path, message}` with paths like `detalleServicio[2].impuesto[0].tarifa`. */
import type { z } from 'zod';
import { echo } from '../echo.js';
import type { Finding } from '../model.js';
import { unknownFieldMessage } from './unknown-keys.js';

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${echo(String(p))}` : echo(String(p));
  }
  return out || '(body)';
}

export function findingsFromZod(error: z.ZodError): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    // Unions report one issue per branch; keep the most useful, one per path.
    for (const leaf of leafIssues(issue)) {
      const path = formatPath(leaf.path);
      if (seen.has(path)) continue;
      seen.add(path);
      out.push({ path, message: messageOf(leaf) });
    }
  }
  return out;
}

/**
 * Parses with a schema whose objects refuse unknown keys (./unknown-keys.ts). A strict object reports its unknown
 * keys along with every other issue, so a failed parse's findings are all of them; when unknown keys are the only
 * problem, they are left out and the rest parsed again, so `data` comes back with them in `unknownKeys`, and a
 * caller that goes on (cross-field rules, figures) reports them with its own findings.
 */
export function parseReportingUnknownKeys<S extends z.ZodType>(
  schema: S,
  input: unknown,
): { success: true; data: z.output<S>; unknownKeys: Finding[] } | { success: false; findings: Finding[] } {
  const first = schema.safeParse(input);
  if (first.success) return { success: true, data: first.data, unknownKeys: [] };
  const leaves = first.error.issues.flatMap(leafIssues);
  if (leaves.some((i) => i.code !== 'unrecognized_keys')) return { success: false, findings: findingsFromZod(first.error) };
  let stripped = input;
  // Each leaf names one key, its path ending with that key.
  for (const leaf of leaves) if (leaf.code === 'unrecognized_keys') stripped = withoutKeys(stripped, leaf.path.slice(0, -1), leaf.keys);
  const second = schema.safeParse(stripped);
  if (!second.success) return { success: false, findings: findingsFromZod(first.error) };
  return { success: true, data: second.data, unknownKeys: findingsFromZod(first.error) };
}

/** A copy of `value` without `keys` in the object at `path` (only the containers along the path are copied). */
export function withoutKeys(value: unknown, path: readonly PropertyKey[], keys: readonly string[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (path.length === 0) {
    if (Array.isArray(value)) return value;
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const k of keys) delete copy[k];
    return copy;
  }
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...value }) as Record<PropertyKey, unknown>;
  if (head === undefined || !(head in copy)) return value;
  copy[head] = withoutKeys(copy[head], rest, keys);
  return copy;
}

type Issue = z.core.$ZodIssue;

/** One issue per unknown key (path ending with the key, message from its line of the issue's message); unions flattened. */
export function leafIssues(issue: Issue): Issue[] {
  return flattenUnion(issue).flatMap((leaf): Issue[] => {
    if (leaf.code !== 'unrecognized_keys') return [leaf];
    const lines = leaf.message.split('\n');
    return leaf.keys.map((key, i) => ({
      ...leaf,
      path: [...leaf.path, key],
      keys: [key],
      message: lines.length === leaf.keys.length ? lines[i]! : unknownFieldMessage(key, []),
    }));
  });
}

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
