// A code field holding a name every JavaScript object inherits (`valueOf`, `__proto__`, `constructor`…) is an
// unknown code like any other: a finding at that field, never a throw. CI's fuzzer found `tipoDoc: "valueOf"` taken
// for a kind (the code tables were ordinary objects) and thrown on in buildConsecutivo.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { ISSUER } from './helpers/bodies.js';

type Body = Record<string, any>;
const dir = new URL('../fixtures/documents/', import.meta.url);
const fixtures = readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith('.expected.json'));
const INHERITED = ['valueOf', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'isPrototypeOf'];

/** Every path of a string value whose name says it holds a code of a table. */
function codePaths(v: unknown, p: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (Array.isArray(v)) v.forEach((x, i) => codePaths(x, [...p, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) codePaths(x, [...p, k], out);
  else if (typeof v === 'string' && /^(tipo|codigo|condicion|moneda|situacion)(?!.*Otros$)/i.test(String(p[p.length - 1]))) out.push(p); // …Otros: free text
  return out;
}

describe('inherited names as codes', () => {
  it('the fuzzer’s counterexample: tipoDoc "valueOf" is refused at tipoDoc', () => {
    const body: Body = JSON.parse(readFileSync(new URL('16-nd-bienes-servicios.json', dir), 'utf8'));
    body.tipoDoc = 'valueOf';
    const r = parseDocument(body, ISSUER);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.findings.map((f) => f.path)).toContain('tipoDoc');
  });

  for (const file of fixtures) {
    it(`${file}: every code field, every inherited name → a finding at that field, no throw`, () => {
      const base = (): Body => JSON.parse(readFileSync(new URL(file, dir), 'utf8'));
      const paths = codePaths(base());
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths)
        for (const name of INHERITED) {
          const body = base();
          let t: any = body;
          for (const k of path.slice(0, -1)) t = t[k];
          t[path[path.length - 1]!] = name;
          const r = parseDocument(body, ISSUER);
          expect(r.ok, `${path.join('.')} = ${name}`).toBe(false);
        }
    });
  }
});
