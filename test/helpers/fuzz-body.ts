/**
 * The property both bad-input suites check: replacing any field of a valid body (at any depth) with any JSON
 * value never makes parseDocument throw, and a refusal always names at least one finding.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { parseDocument } from '../../src/core/document.js';
import type { IssuerRecord } from '../../src/core/input/schema.js';

export function assertAnyFieldAnyValueNeverThrows(base: () => Record<string, unknown>, issuer: IssuerRecord, numRuns: number): void {
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, p: (string | number)[]) => {
    paths.push(p);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...p, i]));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...p, k]);
  };
  walk(base(), []);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: paths.length - 1 }), fc.jsonValue(), (i, value) => {
      const body = base();
      const path = paths[i]!;
      let target: any = body;
      for (const k of path.slice(0, -1)) target = target[k];
      target[path[path.length - 1]!] = value;
      const r = parseDocument(body, issuer);
      if (!r.ok) expect(r.findings.length).toBeGreaterThan(0);
    }),
    { numRuns },
  );
}
