// Issue 25, point 4: text that signs is text that verifies. Every character XML 1.0 allows (NEL U+0085, LINE and
// PARAGRAPH SEPARATOR U+2028/U+2029, CR, CR LF, TAB, astral-plane characters, combining marks, U+FEFF inside text,
// the characters next to the forbidden ranges, C1 controls, noncharacters, markup characters) in every free-text
// field of every fixture body and of the issuer record: fecr signs the document, and fecr's verifier (with
// xml-crypto's second opinion) and `xmlsec1 --verify` both find it valid. Before the fix, fecr's verifier read the
// document with XML 1.1 line ends (NEL and U+2028 as LF) and found a digest mismatch where xmlsec1 found none.
// Also: a signed LF replaced by NEL or U+2028 is a change both verifiers see (XML 1.0: they are not line ends).
import { readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { issueComprobante } from '../src/core/comprobante.js';
import { parseDocument, parseIssuer } from '../src/core/document.js';
import { formatPath } from '../src/core/input/findings.js';
import type { IssuerRecord } from '../src/core/input/schema.js';
import { verifyXades, verifyXadesDocument } from '../src/core/sign/verify.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { parseXmlDocument, withXml10LineEnds, xml10LineEnds } from '../src/core/sign/xml-dom.js';
import { buildMensajeReceptorXml } from '../src/core/xml/mensaje.js';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

type Key = string | number;
type Obj = Record<string, unknown>;

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const bodies: [string, Obj][] = [
  ...readdirSync(FIXTURES)
    .filter((f) => /^\d\d-.+\.json$/.test(f) && !f.endsWith('.expected.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(new URL(f, FIXTURES), 'utf8'))] as [string, Obj]),
  ['helpers/bodies validInvoice', validInvoice()],
];

const test = makeTestIssuer();
const hex = (s: string) => [...s].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`).join(' ');

function stringPaths(v: unknown, at: Key[] = [], out: Key[][] = []): Key[][] {
  if (typeof v === 'string') out.push(at);
  else if (Array.isArray(v)) v.forEach((x, i) => stringPaths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) stringPaths(x, [...at, k], out);
  return out;
}

/** `obj` with `text` inserted into the string at `path`, at `position` (clamped to the string). */
function injected<T>(obj: T, path: Key[], text: string, position: number): T {
  const copy = structuredClone(obj) as any;
  let target = copy;
  for (const k of path.slice(0, -1)) target = target[k];
  const last = path[path.length - 1]!;
  const s = target[last] as string;
  const at = Math.min(position, s.length);
  target[last] = s.slice(0, at) + text + s.slice(at);
  return copy;
}

function issue(body: Obj, issuer: IssuerRecord) {
  return issueComprobante(body, issuer, test.creds, {
    securityCode: '12345678',
    signingTime: new Date(),
    newId: () => randomBytes(8).toString('hex'),
  });
}

/**
 * A free-text field: a probe (as long as the longest generated text, in UTF-16 units) inserted in its middle is
 * accepted and written as it is into the signed XML. Codes, numbers, dates and e-mail addresses are not.
 */
const PROBE = 'ß\u2028\u0085\u2029😀😀ab';
const MAX_UNITS = PROBE.length; // 10
const middle = (obj: unknown, path: Key[]) => Math.floor(((path.reduce((o: any, k) => o[k], obj) as string).length) / 2);

function freeTextPaths(body: Obj): Key[][] {
  return stringPaths(body).filter((p) => {
    const r = issue(injected(body, p, PROBE, middle(body, p)), test.issuer);
    return r.ok && r.xml.includes(PROBE);
  });
}
function freeTextIssuerPaths(body: Obj): Key[][] {
  return stringPaths(test.issuer)
    .filter((p) => p[0] !== 'certificadoHacienda')
    .filter((p) => {
      const parsed = parseIssuer(injected(test.issuer, p, PROBE, middle(test.issuer, p)));
      if (!parsed.ok) return false;
      const r = issue(body, { ...parsed.issuer, certificadoHacienda: test.issuer.certificadoHacienda });
      return r.ok && r.xml.includes(PROBE);
    });
}

/**
 * One unit of text (one or two UTF-16 code units): every class of character XML 1.0 allows, but U+FFFD, which the
 * input schema refuses since issue 26 (what a decoder leaves for a byte it could not read; test/cli-batch-input).
 */
const cp = (n: number) => String.fromCodePoint(n);
const unit = fc.oneof(
  // Line ends of XML 1.0 and the characters XML 1.1 (and xmldom's default) also treats as line ends.
  { weight: 6, arbitrary: fc.constantFrom('\u0085', '\u2028', '\u2029', '\r', '\r\n', '\n', '\t', '\r\u0085', '\u0085\n', '\r\u2028') },
  // Astral plane (surrogate pairs), including its ends and noncharacters.
  { weight: 2, arbitrary: fc.oneof(fc.integer({ min: 0x10000, max: 0x10ffff }), fc.constantFrom(0x10000, 0x1f600, 0x1fffe, 0x1ffff, 0x10fffd, 0x10ffff)).map(cp) },
  // Combining marks after a base letter, and alone.
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('', 'e', 'n'), fc.oneof(fc.integer({ min: 0x300, max: 0x36f }), fc.integer({ min: 0x20d0, max: 0x20ff }), fc.integer({ min: 0xfe20, max: 0xfe2f }))).map(([b, c]) => b + cp(c)) },
  // U+FEFF and other invisible or space characters inside text.
  { weight: 2, arbitrary: fc.constantFrom(0xfeff, 0xa0, 0x200b, 0x200d, 0x202e, 0x3000, 0x1680, 0x180e).map(cp) },
  // Next to the forbidden ranges: after C0, DEL and the C1 controls, around the surrogates, before U+FFFE.
  { weight: 3, arbitrary: fc.oneof(fc.constantFrom(0x20, 0x7e, 0x7f, 0xd7ff, 0xe000, 0xf8ff, 0xfdd0, 0xfdef, 0xfffc), fc.integer({ min: 0x80, max: 0x9f })).map(cp) },
  // What XML escapes.
  { weight: 2, arbitrary: fc.constantFrom('&', '<', '>', '"', "'", ']]>', '&amp;', '&#x2028;') },
  // Anything else of the BMP that XML 1.0 allows.
  { weight: 3, arbitrary: fc.oneof(fc.integer({ min: 0x20, max: 0xd7ff }), fc.integer({ min: 0xe000, max: 0xfffc })).map(cp) },
);
/** A text to insert: at most MAX_UNITS UTF-16 code units. */
const insertion = fc.array(unit, { minLength: 1, maxLength: 8 }).map((units) => {
  let s = '';
  for (const u of units) if (s.length + u.length <= MAX_UNITS) s += u;
  return s;
});
/** Where: the start, the end, or inside. */
const position = fc.oneof(fc.constant(0), fc.constant(Number.MAX_SAFE_INTEGER), fc.nat({ max: 40 }));
/** For each path: nothing, or a text at a position (most paths get one). */
const edits = (n: number) => fc.array(fc.option(fc.tuple(insertion, position), { freq: 5 }), { minLength: n, maxLength: n });

/** fecr's verifier in both its uses (with xml-crypto's cross-check; on a parsed DOM as the emulator and recibidos) and xmlsec1. */
function verdicts(xml: string): { fecr: string[]; fecrDom: string[]; xmlsec: boolean; xmlsecOutput: string } {
  const now = new Date();
  const failed = (r: ReturnType<typeof verifyXades>) => r.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
  const dom = parseXmlDocument(xml);
  const fecrDom = typeof dom === 'string' ? [dom] : failed(verifyXadesDocument(dom, xml, now, { crossCheck: false }));
  const x = xmlsecVerify(xml);
  return { fecr: failed(verifyXades(xml, now)), fecrDom, xmlsec: x.ok, xmlsecOutput: x.ok ? '' : x.output };
}

describe('every character XML 1.0 allows, in every free-text field: fecr signs, fecr and xmlsec1 verify', () => {
  it('the base: free-text paths are found in every body and in the issuer record', () => {
    expect(bodies.length).toBeGreaterThanOrEqual(15);
    const fe = freeTextPaths(validInvoice()).map(formatPath);
    expect(fe).toEqual(expect.arrayContaining(['receptor.nombre', 'detalleServicio[0].detalle', 'detalleServicio[1].detalle']));
    expect(freeTextIssuerPaths(validInvoice()).map(formatPath)).toEqual(expect.arrayContaining(['nombre']));
    for (const [name, body] of bodies) expect(freeTextPaths(body).length, name).toBeGreaterThan(0);
  });

  for (const [name, body] of bodies) {
    it(`${name}: fecr's verifier and xmlsec1 --verify agree (both valid)`, () => {
      const paths = freeTextPaths(body);
      const issuerPaths = freeTextIssuerPaths(body);
      fc.assert(
        fc.property(edits(paths.length), edits(issuerPaths.length), (bodyEdits, issuerEdits) => {
          let b = body;
          const written: string[] = [];
          bodyEdits.forEach((e, i) => {
            if (e) (b = injected(b, paths[i]!, e[0], e[1])), written.push(`${formatPath(paths[i]!)} ← ${hex(e[0])}`);
          });
          let rec: IssuerRecord = test.issuer;
          issuerEdits.forEach((e, i) => {
            if (e) (rec = injected(rec, issuerPaths[i]!, e[0], e[1])), written.push(`issuer.${formatPath(issuerPaths[i]!)} ← ${hex(e[0])}`);
          });
          const parsed = parseIssuer(rec);
          expect(parsed, written.join('\n')).toMatchObject({ ok: true });
          const r = issue(b, { ...(parsed as { issuer: IssuerRecord }).issuer, certificadoHacienda: test.issuer.certificadoHacienda });
          expect(r.ok ? [] : r.findings, written.join('\n')).toEqual([]);
          const v = verdicts((r as { xml: string }).xml);
          expect({ fecr: v.fecr, fecrDom: v.fecrDom, xmlsec: v.xmlsec }, `${written.join('\n')}\n${v.xmlsecOutput}`).toEqual({ fecr: [], fecrDom: [], xmlsec: true });
        }),
        { numRuns: 8 },
      );
    });
  }

  it('one character at a time (each special character alone in a line detail): both valid', () => {
    for (const ch of ['\u0085', '\u2028', '\u2029', '\r', '\r\n', '\r\u0085', '\t', '\uFEFF', '𝄞', 'e\u0301', '\u0080', '\u009F', '\uD7FF', '\uE000', '\uFFFC', '\u{10FFFF}']) {
      const body = validInvoice();
      body.detalleServicio[0].detalle = `Consultoría${ch}en gestión`;
      const r = issue(body, test.issuer);
      expect(r.ok, hex(ch)).toBe(true);
      const v = verdicts((r as { xml: string }).xml);
      expect({ fecr: v.fecr, fecrDom: v.fecrDom, xmlsec: v.xmlsec }, hex(ch)).toEqual({ fecr: [], fecrDom: [], xmlsec: true });
    }
  });

  it('a MensajeReceptor with such characters in DetalleMensaje: both valid', () => {
    fc.assert(
      fc.property(insertion, insertion, (a, b) => {
        const unsigned = buildMensajeReceptorXml({
          clave: '50601092500310112345600100001010000000001100000001',
          numeroCedulaEmisor: '3101123456',
          fechaEmisionDoc: '2026-03-15T10:30:00-06:00',
          mensaje: 2,
          detalleMensaje: `Parte${a}del servicio${b}no fue prestado`,
          totalFactura: '1000.00000',
          numeroCedulaReceptor: '3101123456',
          numeroConsecutivoReceptor: '00100001060000000001',
        });
        const xml = signCanonical(unsigned, test.creds, { signingTime: new Date(), newId: () => randomBytes(8).toString('hex') });
        const v = verdicts(xml);
        // The MensajeReceptor is not XAdES-EPES of a comprobante: only the XMLDSig checks are compared here.
        const core = (xs: string[]) => xs.filter((c) => /^(xml|reference|signature\.value|xmldsig)/.test(c));
        expect({ fecr: core(v.fecr), fecrDom: core(v.fecrDom), xmlsec: v.xmlsec }, `${hex(a)} / ${hex(b)}`).toEqual({ fecr: [], fecrDom: [], xmlsec: true });
      }),
      { numRuns: 25 },
    );
  });
});

describe('a signed LF replaced by NEL, U+2028 or CR NEL is a change to the signed text', () => {
  const body = validInvoice();
  body.detalleServicio[0].detalle = 'Consultoría en gestión\nestratégica, fase 1\n';
  const r = issue(body, test.issuer);
  const signed = (r as { xml: string }).xml;

  it('the original: both valid', () => {
    const v = verdicts(signed);
    expect({ fecr: v.fecr, xmlsec: v.xmlsec }).toEqual({ fecr: [], xmlsec: true });
  });

  for (const [name, replacement] of [
    ['U+2028', '\u2028'],
    ['U+0085', '\u0085'],
    ['CR U+0085', '\r\u0085'],
  ] as const) {
    it(`LF → ${name} in Detalle: both refuse it (a digest mismatch)`, () => {
      const start = signed.indexOf('<Detalle>');
      const end = signed.indexOf('</Detalle>', start);
      expect(signed.slice(start, end)).toContain('\n');
      const tampered = signed.slice(0, start) + signed.slice(start, end).replace(/\n/g, replacement) + signed.slice(end);
      const v = verdicts(tampered);
      expect(v.xmlsec).toBe(false);
      expect(v.fecr.join('\n')).toMatch(/reference\[0\]: URI="" \(document\): digest mismatch/);
      expect(v.fecrDom.join('\n')).toMatch(/reference\[0\]: URI="" \(document\): digest mismatch/);
    });
  }

  it('LF → CR LF (XML 1.0 reads CR LF as LF): both still valid', () => {
    const v = verdicts(signed.replace(/\n/g, '\r\n'));
    expect({ fecr: v.fecr, xmlsec: v.xmlsec }).toEqual({ fecr: [], xmlsec: true });
  });
});

describe('XML 1.0 line ends, and nothing else changed', () => {
  it('CR LF and a lone CR become LF; NEL, U+2028, U+2029 and CR NEL stay', () => {
    expect(xml10LineEnds('a\r\nb\rc\nd\u0085e\u2028f\u2029g\r\u0085h')).toBe('a\nb\nc\nd\u0085e\u2028f\u2029g\n\u0085h');
    const doc = parseXmlDocument('<r a="1\u20282\r\n3">x\u0085y\u2028z\r\nw\rv</r>') as Document;
    expect(doc.documentElement!.textContent).toBe('x\u0085y\u2028z\nw\nv');
    // Attribute values: literal whitespace (TAB, LF, CR) becomes a space; U+2028 is not whitespace in XML 1.0.
    expect(doc.documentElement!.getAttribute('a')).toBe('1\u20282 3');
  });

  it("xml-crypto's parses read XML 1.0 line ends only inside the call; xmldom's default is untouched outside, even after a throw", () => {
    const text = (p: DOMParser) => p.parseFromString('<r>a\u2028b\u0085c\r\nd</r>', 'text/xml').documentElement!.textContent;
    const builtin = DOMParser.prototype.parseFromString;
    expect(text(new DOMParser())).toBe('a\nb\nc\nd'); // xmldom's own default: XML 1.1
    expect(withXml10LineEnds(() => text(new DOMParser()))).toBe('a\u2028b\u0085c\nd');
    expect(withXml10LineEnds(() => withXml10LineEnds(() => text(new DOMParser())))).toBe('a\u2028b\u0085c\nd');
    // A parser given its own line-end option keeps it.
    expect(withXml10LineEnds(() => text(new DOMParser({ normalizeLineEndings: (s: string) => s.toUpperCase() } as never)))).toBe('A\u2028B\u0085C\r\nD');
    expect(() => withXml10LineEnds(() => { throw new Error('boom'); })).toThrow('boom');
    expect(DOMParser.prototype.parseFromString).toBe(builtin);
    verifyXades('<r/>', new Date());
    expect(DOMParser.prototype.parseFromString).toBe(builtin);
    expect(text(new DOMParser())).toBe('a\nb\nc\nd');
  });
});
