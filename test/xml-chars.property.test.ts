// Issue 12, defect 3: a character XML 1.0 cannot carry (C0 controls but TAB, LF, CR; U+FFFE, U+FFFF; lone
// surrogates) in any string field of a document body or of an issuer record is a finding at that field's path,
// found by the input schema, never an exception of the XML writer. Every string path of every fixture body, of
// test/helpers/bodies.ts's invoice and of its ISSUER is enumerated; for each, fast-check injects forbidden
// characters at any position.
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { issueComprobante } from '../src/core/comprobante.js';
import { parseDocument, parseIssuer } from '../src/core/document.js';
import { formatPath } from '../src/core/input/findings.js';
import type { IssuerRecord } from '../src/core/input/schema.js';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { makeTestIssuer } from './helpers/issuer.js';

type Key = string | number;

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const bodies: [string, Record<string, unknown>][] = [
  ...readdirSync(FIXTURES)
    .filter((f) => /^\d\d-.+\.json$/.test(f) && !f.endsWith('.expected.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(new URL(f, FIXTURES), 'utf8'))] as [string, Record<string, unknown>]),
  ['helpers/bodies validInvoice', validInvoice()],
];

/** Every path of `v` whose value is a string. */
function stringPaths(v: unknown, at: Key[] = [], out: Key[][] = []): Key[][] {
  if (typeof v === 'string') out.push(at);
  else if (Array.isArray(v)) v.forEach((x, i) => stringPaths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) stringPaths(x, [...at, k], out);
  return out;
}

function injected<T>(obj: T, path: Key[], char: string, position: number): T {
  const copy = structuredClone(obj) as any;
  let target = copy;
  for (const k of path.slice(0, -1)) target = target[k];
  const last = path[path.length - 1]!;
  const s = target[last] as string;
  const at = Math.min(position, s.length);
  target[last] = s.slice(0, at) + char + s.slice(at);
  return copy;
}

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

/** The characters XML 1.0 cannot carry, as one-unit JS strings (lone surrogates included). */
const forbiddenChar = fc
  .oneof(
    fc.integer({ min: 0x00, max: 0x08 }),
    fc.constantFrom(0x0b, 0x0c),
    fc.integer({ min: 0x0e, max: 0x1f }),
    fc.constantFrom(0xfffe, 0xffff),
    fc.integer({ min: 0xd800, max: 0xdbff }),
    fc.integer({ min: 0xdc00, max: 0xdfff }),
  )
  .map((cp) => ({ cp, char: String.fromCharCode(cp) }));
/** Where the character goes: start, end, or inside (clamped to the string). */
const position = fc.oneof(fc.constant(0), fc.constant(Number.MAX_SAFE_INTEGER), fc.nat({ max: 60 }));

const test = makeTestIssuer();
const issueOpts = { securityCode: '12345678', signingTime: new Date('2026-03-15T16:30:00Z'), newId: () => 'abc123' };

describe('forbidden XML characters in a document body', () => {
  it('the fixtures are valid and have string fields (the base of the property)', () => {
    expect(bodies.length).toBeGreaterThanOrEqual(14);
    for (const [name, body] of bodies) {
      expect(parseDocument(body, ISSUER).findings, name).toEqual([]);
      expect(stringPaths(body).length, name).toBeGreaterThan(10);
    }
  });

  for (const [name, body] of bodies) {
    it(`${name}: every string path → exactly one finding at that path, never an exception`, () => {
      const paths = stringPaths(body);
      for (const path of paths) {
        const where = formatPath(path);
        fc.assert(
          fc.property(forbiddenChar, position, ({ cp, char }, pos) => {
            const bad = injected(body, path, char, pos);
            const expected = [{ path: where, message: `contains ${hex(cp)}, not allowed in XML` }];
            expect(parseDocument(bad, ISSUER).findings, where).toEqual(expected);
            // The whole pipeline (schema, rules, XML writer, signature) answers with the finding too.
            let issued: ReturnType<typeof issueComprobante> | undefined;
            expect(() => (issued = issueComprobante(bad, test.issuer, test.creds, issueOpts))).not.toThrow();
            expect(issued, where).toEqual({ ok: false, findings: expected });
          }),
          { numRuns: 12 },
        );
      }
    });
  }

  it('TAB, LF and CR, and characters outside the BMP, stay allowed in free text', () => {
    const body = validInvoice();
    body.detalleServicio[0].detalle = 'Consultoría\tcon\r\nsaltos 😀 y ñ';
    const r = parseDocument(body, ISSUER);
    expect(r.findings).toEqual([]);
    expect(issueComprobante(body, test.issuer, test.creds, issueOpts).ok).toBe(true);
  });
});

describe('forbidden XML characters in an issuer record', () => {
  const paths = stringPaths(ISSUER);

  it('the issuer record is valid and has string fields', () => {
    expect(parseIssuer(ISSUER)).toMatchObject({ ok: true });
    expect(paths.length).toBeGreaterThanOrEqual(14);
  });

  it('every string path → exactly one finding at that path', () => {
    for (const path of paths) {
      const where = formatPath(path);
      fc.assert(
        fc.property(forbiddenChar, position, ({ cp, char }, pos) => {
          let r: ReturnType<typeof parseIssuer> | undefined;
          expect(() => (r = parseIssuer(injected(ISSUER, path, char, pos)))).not.toThrow();
          expect(r, where).toEqual({ ok: false, findings: [{ path: where, message: `contains ${hex(cp)}, not allowed in XML` }] });
        }),
        { numRuns: 25 },
      );
    }
  });

  it('the XML writer stays defensive: an issuer that skipped the schema is a finding, not an exception', () => {
    // E.g. a record stored before the schema checked it: the writer refuses the character and says where.
    const stored = { ...test.issuer, nombre: 'SOFTWARE\u0007TICO' } as IssuerRecord;
    let r: ReturnType<typeof issueComprobante> | undefined;
    expect(() => (r = issueComprobante(validInvoice(), stored, test.creds, issueOpts))).not.toThrow();
    expect(r).toEqual({ ok: false, findings: [{ path: 'xml', message: 'Emisor/Nombre: contains U+0007, not allowed in XML' }] });
  });
});
