// Every fixture → signed v4.4 XML that passes the official XSD (xmllint), xmlsec1 and xml-crypto;
// any one-byte change breaks verification.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueComprobante } from '../src/core/comprobante.js';
import { parseDocument } from '../src/core/document.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { verifyXades } from '../src/core/sign/verify.js';
import { KINDS } from '../src/core/xml/kinds.js';
import { tempDir } from './helpers/cli.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const names = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && !f.endsWith('.expected.json'));
const signed = new Map<string, { xml: string; kind: keyof typeof KINDS; clave: string }>();
let t: TestIssuer;

beforeAll(() => {
  t = makeTestIssuer();
  for (const name of names) {
    const body = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8'));
    const r = issueComprobante(body, t.issuer, t.creds, {
      securityCode: '12345678',
      signingTime: new Date(),
      newId: () => randomBytes(8).toString('hex'),
    });
    if (!r.ok) throw new Error(`${name}: ${JSON.stringify(r.findings)}`);
    signed.set(name, { xml: r.xml, kind: r.doc.kind, clave: r.doc.clave });
  }
});

describe('signed fixtures', () => {
  it('covers every kind of v4.4, at least three fixtures for each new one (ND, FEC, FEE, REP)', () => {
    expect(names.length).toBeGreaterThanOrEqual(24);
    const kinds = [...signed.values()].map((s) => s.kind);
    expect([...new Set(kinds)].sort()).toEqual(['FE', 'FEC', 'FEE', 'NC', 'ND', 'REP', 'TE']);
    for (const k of ['ND', 'FEC', 'FEE', 'REP']) expect(kinds.filter((x) => x === k).length, k).toBeGreaterThanOrEqual(3);
  });

  it('every fixture validates against the official v4.4 XSD (xmllint --schema)', () => {
    const dir = tempDir();
    for (const kind of ['FE', 'ND', 'NC', 'TE', 'FEC', 'FEE', 'REP'] as const) {
      const files = [...signed].filter(([, s]) => s.kind === kind).map(([name, s]) => {
        const f = join(dir, name.replace('.json', '.xml'));
        writeFileSync(f, s.xml);
        return f;
      });
      const xsd = new URL(`../schemas/xsd/${KINDS[kind].xsdFile}`, import.meta.url).pathname;
      expect(files.length, kind).toBeGreaterThan(0);
      const r = spawnSync('xmllint', ['--noout', '--schema', xsd, ...files], { encoding: 'utf8' });
      expect(r.stderr.trim().split('\n').filter((l) => !l.endsWith(' validates')), r.stderr).toEqual([]);
      expect(r.status).toBe(0);
    }
  });

  it('every fixture verifies with xmlsec1 and with xml-crypto', () => {
    for (const [name, s] of signed) {
      const x = xmlsecVerify(s.xml);
      expect(x.ok, `${name}: ${x.output}`).toBe(true);
      const report = verifyXades(s.xml, new Date());
      expect(report.checks.find((c) => c.name === 'xmldsig.core')?.ok, name).toBe(true);
      expect(report.ok, `${name}: ${JSON.stringify(report.checks.filter((c) => !c.ok))}`).toBe(true);
    }
  });

  it('a one-byte change anywhere after the XML declaration fails verification', () => {
    const s = signed.get(names[0]!)!;
    const xml = s.xml;
    const start = xml.indexOf('?>') + 2;
    let tried = 0;
    const flip = (c: string) =>
      /[0-9]/.test(c) ? String((Number(c) + 1) % 10)
      : /[a-y]/i.test(c) ? String.fromCharCode(c.charCodeAt(0) + 1)
      : /[zZ]/.test(c) ? 'a'
      : c === '<' ? '{' : c === '>' ? '}' : 'x';
    // Evenly spread positions, plus every attribute value and namespace declaration of the signature.
    const positions = new Set<number>();
    for (let pos = start; pos < xml.length; pos += Math.max(1, Math.floor((xml.length - start) / 300))) positions.add(pos);
    const sigAt = xml.indexOf('<ds:Signature');
    for (const m of xml.slice(sigAt).matchAll(/="([^"]*)"/g)) {
      positions.add(sigAt + m.index! + 2);
      positions.add(sigAt + m.index! + m[0].length - 2);
    }
    for (const pos of positions) {
      const c = xml[pos]!;
      const replacement = flip(c);
      const tampered = xml.slice(0, pos) + replacement + xml.slice(pos + 1);
      expect(verifyXades(tampered, new Date()).ok, `byte ${pos} '${c}'→'${replacement}' in …${xml.slice(pos - 30, pos + 10)}…`).toBe(false);
      tried++;
    }
    expect(tried).toBeGreaterThan(300);
    // And xmlsec1 agrees on a change in the content and in the SignedProperties.
    const amount = xml.replace('<TotalComprobante>', '<TotalComprobante>9');
    expect(xmlsecVerify(amount).ok).toBe(false);
    const when = xml.replace(/<xades:SigningTime>(\d)/, (_m, d: string) => `<xades:SigningTime>${(Number(d) + 1) % 10}`);
    expect(when).not.toBe(xml);
    expect(xmlsecVerify(when).ok).toBe(false);
  });

  it('the clave written in the XML is the one returned, and the Signature is the last child of the root', () => {
    for (const s of signed.values()) {
      expect(s.xml).toContain(`<Clave>${s.clave}</Clave>`);
      expect(s.xml.trimEnd()).toMatch(new RegExp(`</ds:Signature></${KINDS[s.kind].rootName}>$`));
    }
  });

  it('the unsigned document is canonical by construction (xmllint --exc-c14n leaves it unchanged)', () => {
    const dir = tempDir();
    for (const name of names) {
      const body = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8'));
      const parsed = parseDocument(body, t.issuer);
      if (!parsed.ok) throw new Error(name);
      const unsigned = buildComprobanteXml(parsed.doc, parsed.totals);
      const f = join(dir, name.replace('.json', '.xml'));
      writeFileSync(f, unsigned);
      expect(execFileSync('xmllint', ['--exc-c14n', f], { encoding: 'utf8' }), name).toBe(unsigned);
    }
  });
});
