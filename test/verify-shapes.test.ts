// Issue 19: `fecr verify` agrees with `xmlsec1 --verify` on every signature shape Hacienda accepts. The documents
// are signed OUTSIDE fecr: a fecr-built unsigned comprobante (or MensajeHacienda) plus a ds:Signature template in
// the shape under test, signed by `xmlsec1 --sign` with a test .p12's key (test/helpers/xmlsec-sign.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import { parseDocument } from '../src/core/document.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12, testCaCertificatePem } from '../src/core/sign/testcert.js';
import { verifyXades } from '../src/core/sign/verify.js';
import type { VerifyReport } from '../src/core/sign/verify-report.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { buildMensajeHaciendaXml } from '../src/core/xml/mensaje.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { xmlsecVerify } from './helpers/xmlsec.js';
import { templateDocument, xmlsecSign, type Shape } from './helpers/xmlsec-sign.js';
import { analyzeDocument } from '../src/emulator/analyze.js';
import type { Comprobante } from '../src/core/model.js';

const NOW = new Date();
const SIGNED_AT = new Date(NOW.getTime() - 60_000);
const OFFSET_TIME = formatCr(SIGNED_AT); // 2026-…T…-06:00
const UTC_TIME = SIGNED_AT.toISOString().replace(/\.\d{3}Z$/, 'Z');
const CRLIBRE_ROOT_NS = {
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  xsd: 'http://www.w3.org/2001/XMLSchema',
  xsi: 'http://www.w3.org/2001/XMLSchema-instance',
};

interface Case {
  name: string;
  shape: Shape;
  doc: 'comprobante' | 'mensajeHacienda';
  /** Expected notes (substrings), in order. */
  notes: string[];
  form: 'XAdES-EPES' | 'XAdES-BES';
  policyVersion?: string;
}

const base = { keyInfoReference: false, certDigest: 'sha256', signingTime: OFFSET_TIME, policy: 'v4.4' } as const;

const CASES: Case[] = [
  {
    name: 'exclusive C14N, enveloped transform, 3 references (fecr\'s own shape)',
    shape: { ...base, c14n: 'exc', docTransform: 'enveloped', keyInfoReference: true, keyValue: true },
    doc: 'comprobante',
    notes: [],
    form: 'XAdES-EPES',
    policyVersion: '4.4',
  },
  {
    name: 'inclusive C14N, enveloped transform alone, 3 references, KeyValue, ds/xsd/xsi on the root (CRLibre)',
    shape: { ...base, c14n: 'inc', docTransform: 'enveloped', docC14nTransform: false, keyInfoReference: true, keyValue: true, rootNamespaces: CRLIBRE_ROOT_NS },
    doc: 'comprobante',
    notes: [],
    form: 'XAdES-EPES',
    policyVersion: '4.4',
  },
  {
    name: 'exclusive C14N, XPath filter, 2 references, v4.2 policy (accepted by the sandbox, March 2026)',
    shape: { ...base, c14n: 'exc', docTransform: 'xpath', policy: 'v4.2' },
    doc: 'comprobante',
    notes: ['policy: v4.2 identifier (older than v4.4)'],
    form: 'XAdES-EPES',
    policyVersion: '4.2',
  },
  {
    name: 'inclusive C14N, XPath filter, 2 references',
    shape: { ...base, c14n: 'inc', docTransform: 'xpath' },
    doc: 'comprobante',
    notes: [],
    form: 'XAdES-EPES',
    policyVersion: '4.4',
  },
  {
    name: 'inclusive C14N, enveloped, 3 references, KeyValue, v4.2 policy (a 2026 production FE)',
    shape: { ...base, c14n: 'inc', docTransform: 'enveloped', keyInfoReference: true, keyValue: true, policy: 'v4.2', rootNamespaces: CRLIBRE_ROOT_NS },
    doc: 'comprobante',
    notes: ['policy: v4.2 identifier (older than v4.4)'],
    form: 'XAdES-EPES',
    policyVersion: '4.2',
  },
  {
    name: 'SHA-1 CertDigest, SigningTime in UTC',
    shape: { ...base, c14n: 'exc', docTransform: 'xpath', certDigest: 'sha1', signingTime: UTC_TIME },
    doc: 'comprobante',
    notes: ['certDigest: SHA-1'],
    form: 'XAdES-EPES',
    policyVersion: '4.4',
  },
  {
    name: 'v4.1 policy, inclusive C14N, 3 references',
    shape: { ...base, c14n: 'inc', docTransform: 'enveloped', keyInfoReference: true, policy: 'v4.1' },
    doc: 'comprobante',
    notes: ['policy: v4.1 identifier (older than v4.4)'],
    form: 'XAdES-EPES',
    policyVersion: '4.1',
  },
  {
    name: 'v4.3 policy, exclusive C14N, SHA-512 CertDigest',
    shape: { ...base, c14n: 'exc', docTransform: 'enveloped', policy: 'v4.3', certDigest: 'sha512' },
    doc: 'comprobante',
    notes: ['policy: v4.3 identifier (older than v4.4)'],
    form: 'XAdES-EPES',
    policyVersion: '4.3',
  },
  {
    name: 'inclusive C14N #WithComments, a comment in SignedInfo, 3 references',
    shape: { ...base, c14n: 'incWithComments', docTransform: 'enveloped', keyInfoReference: true, keyValue: true, signedInfoComment: ' firmado ', rootNamespaces: CRLIBRE_ROOT_NS },
    doc: 'comprobante',
    notes: [],
    form: 'XAdES-EPES',
    policyVersion: '4.4',
  },
  {
    name: 'exclusive C14N #WithComments, XPath filter, a comment in SignedInfo',
    shape: { ...base, c14n: 'excWithComments', docTransform: 'xpath', signedInfoComment: ' firmado ' },
    doc: 'comprobante',
    notes: [],
    form: 'XAdES-EPES',
    policyVersion: '4.4',
  },
  {
    name: 'inclusive C14N, unprefixed Signature in its own default namespace (.NET SignedXml style), 3 references',
    shape: { ...base, c14n: 'inc', docTransform: 'enveloped', keyInfoReference: true, keyValue: true, unprefixed: true, rootNamespaces: { xsd: CRLIBRE_ROOT_NS.xsd, xsi: CRLIBRE_ROOT_NS.xsi } },
    doc: 'comprobante',
    notes: [],
    form: 'XAdES-EPES',
    policyVersion: '4.4',
  },
  {
    name: 'MensajeHacienda: XAdES-BES, no policy, exc C14N, XPath filter, SHA-1 CertDigest, UTC, chain in KeyInfo',
    shape: {
      ...base,
      c14n: 'exc',
      docTransform: 'xpath',
      certDigest: 'sha1',
      signingTime: UTC_TIME,
      policy: 'none',
      chain: true,
      haciendaIds: true,
    },
    doc: 'mensajeHacienda',
    notes: ['certDigest: SHA-1', 'form: XAdES-BES'],
    form: 'XAdES-BES',
  },
];

let t: TestIssuer;
let trustedPem: string;
let comprobante: string;
let mensajeHacienda: string;
let doc: Comprobante;
const signed = new Map<string, string>();

function sign(c: Case): string {
  const unsigned = c.doc === 'comprobante' ? comprobante : mensajeHacienda;
  return xmlsecSign(templateDocument(unsigned, c.shape, t.creds), t.creds);
}

beforeAll(() => {
  t = makeTestIssuer(NOW);
  trustedPem = testCaCertificatePem();
  const body = JSON.parse(readFileSync(new URL('../fixtures/documents/01-fe-servicios-13.json', import.meta.url), 'utf8'));
  const parsed = parseDocument(body, t.issuer, { securityCode: '12345678' });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));
  comprobante = buildComprobanteXml(parsed.doc, parsed.totals);
  doc = parsed.doc;
  mensajeHacienda = buildMensajeHaciendaXml({
    clave: parsed.doc.clave,
    nombreEmisor: parsed.doc.emisor.nombre,
    tipoIdentificacionEmisor: parsed.doc.emisor.identificacion.tipo,
    numeroCedulaEmisor: parsed.doc.emisor.identificacion.numero,
    mensaje: 1,
    detalleMensaje: 'Este comprobante fue recibido en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios.',
    montoTotalImpuesto: '0',
    totalFactura: '2470.00000',
  });
  for (const c of CASES) signed.set(c.name, sign(c));
});

function failedChecks(r: VerifyReport): string[] {
  return r.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
}

/** One byte changed in the document body, in SignedProperties and in KeyInfo: [where, tampered XML, the check that must fail]. */
function tamperings(xml: string, c: Case): Array<[string, string, RegExp]> {
  const out: Array<[string, string, RegExp]> = [];
  const refIndex = (uri: string) => [...xml.matchAll(/<(?:ds:)?Reference [^>]*URI="([^"]*)"/g)].findIndex((m) => m[1]!.startsWith(uri));
  const after = (tag: RegExp) => {
    const m = tag.exec(xml)!;
    return m.index + m[0].length;
  };
  const replaceAt = (s: string, i: number, ch: string) => s.slice(0, i) + ch + s.slice(i + 1);
  const flip = (ch: string) => (ch === 'A' ? 'B' : ch === '0' ? '1' : /[0-9]/.test(ch) ? '0' : 'A');
  // Document body: the last digit of the Clave.
  const clave = xml.indexOf('</Clave>') - 1;
  out.push(['document body (Clave)', replaceAt(xml, clave, flip(xml[clave]!)), /^reference\[0\]$/]);
  // SignedProperties: a digit of the SigningTime (seconds).
  const st = xml.indexOf('</xades:SigningTime>');
  const sec = c.shape.signingTime.endsWith('Z') ? st - 2 : st - 7;
  out.push(['SignedProperties (SigningTime)', replaceAt(xml, sec, flip(xml[sec]!)), new RegExp(`^reference\\[${refIndex('#xades-')}\\]$`)]);
  // KeyInfo: a character in the middle of the certificate's base64.
  const cert = after(/<(?:ds:)?X509Certificate>/) + 600;
  out.push(['KeyInfo (X509Certificate)', replaceAt(xml, cert, flip(xml[cert]!)), /^xades\.signingCertificate$|^certificate\.present$/]);
  // KeyInfo: a character of the RSA modulus (covered only by the KeyInfo reference).
  if (c.shape.keyValue && c.shape.keyInfoReference) {
    const mod = after(/<(?:ds:)?Modulus>/) + 40;
    out.push(['KeyInfo (Modulus)', replaceAt(xml, mod, flip(xml[mod]!)), new RegExp(`^reference\\[${refIndex('#KeyInfoId-')}\\]$`)]);
  }
  // SignedInfo's comment, signed under #WithComments.
  if (c.shape.signedInfoComment) {
    out.push(['SignedInfo (comment)', xml.replace(`<!--${c.shape.signedInfoComment}-->`, '<!-- firmadO -->'), /^signature\.value$/]);
  }
  return out;
}

describe('documents signed by xmlsec1 in every shape Hacienda accepts', () => {
  for (const c of CASES) {
    describe(c.name, () => {
      it('xmlsec1 and verifyXades both accept it, with the expected notes', () => {
        const xml = signed.get(c.name)!;
        const xs = xmlsecVerify(xml, { trustedPem });
        expect(xs.ok, xs.output).toBe(true);
        const report = verifyXades(xml, NOW);
        expect(failedChecks(report)).toEqual([]);
        expect(report.ok).toBe(true);
        expect(report.form).toBe(c.form);
        expect(report.policy?.version).toBe(c.policyVersion);
        expect(report.notes).toHaveLength(c.notes.length);
        c.notes.forEach((n, i) => expect(report.notes[i]).toContain(n));
        expect(report.signer?.identificacion).toBe(t.issuer.identificacion);
      });

      it('one byte changed → both fail', () => {
        const xml = signed.get(c.name)!;
        for (const [where, tampered, check] of tamperings(xml, c)) {
          expect(tampered, where).not.toBe(xml);
          expect(xmlsecVerify(tampered, { trustedPem }).ok, `xmlsec1, ${where}`).toBe(false);
          const report = verifyXades(tampered, NOW);
          expect(report.ok, `verifyXades, ${where}`).toBe(false);
          expect(report.checks.filter((k) => !k.ok).map((k) => k.name), where).toContainEqual(expect.stringMatching(check));
        }
      });
    });
  }
});

describe('the emulator on the same documents (its signature, signer, clave and totals checks)', () => {
  const emulatorVerdict = (xml: string) =>
    analyzeDocument(Buffer.from(xml, 'utf8'), {
      clave: doc.clave,
      fecha: doc.fechaEmision,
      emisor: { tipoIdentificacion: doc.emisor.identificacion.tipo, numeroIdentificacion: doc.emisor.identificacion.numero },
      environment: 'sandbox',
      username: 'test',
      now: NOW,
    }).result;
  for (const c of CASES.filter((x) => x.doc === 'comprobante')) {
    it(`accepts: ${c.name}; refuses it with one byte changed`, () => {
      const xml = signed.get(c.name)!;
      const r = emulatorVerdict(xml);
      expect(r.errors).toEqual([]);
      expect(r.accepted).toBe(true);
      for (const [where, tampered] of tamperings(xml, c)) {
        const bad = emulatorVerdict(tampered);
        expect(bad.accepted, where).toBe(false);
        expect(bad.errors.some((e) => e.sinCodigo && e.mensaje.startsWith('La firma del comprobante electrónico no es válida')), where).toBe(true);
      }
    });
  }
});

describe('what verify reports beyond xmlsec1', () => {
  it('a comprobante signed without a policy is XAdES-BES, not XAdES-EPES: a failure with Hacienda\'s sentence', () => {
    const shape: Shape = { ...base, c14n: 'exc', docTransform: 'xpath', policy: 'none' };
    const xml = xmlsecSign(templateDocument(comprobante, shape, t.creds), t.creds);
    // The XMLDSig core is intact: xmlsec1 (which knows nothing of XAdES) accepts it.
    expect(xmlsecVerify(xml, { trustedPem }).ok).toBe(true);
    const report = verifyXades(xml, NOW);
    expect(report.ok).toBe(false);
    expect(report.form).toBe('XAdES-BES');
    expect(report.policy).toBeUndefined();
    const failed = report.checks.filter((c) => !c.ok);
    expect(failed.map((c) => c.name)).toEqual(['xades.policy']);
    expect(failed[0]!.detail).toContain('La firma del documento no tiene el Policy Id');
  });

  it('inclusive C14N renders the root\'s default namespace on the apex of SignedInfo, KeyInfo and SignedProperties', () => {
    const xml = signed.get(CASES[1]!.name)!;
    const report = verifyXades(xml, NOW);
    expect(report.checks.filter((c) => /^reference\[[12]\]$|^signature\.value$/.test(c.name)).map((c) => c.ok)).toEqual([true, true, true]);
  });
});

describe('fecr verify (CLI) on documents signed outside fecr', () => {
  it('prints the notes and exits 0 for a v4.2-policy, inclusive, 3-reference comprobante; 1 when tampered', async () => {
    const dir = tempDir();
    const xml = signed.get(CASES[4]!.name)!;
    writeFileSync(join(dir, 'fe.xml'), xml);
    const r = await runCli(['verify', 'fe.xml'], { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('note  policy: v4.2 identifier (older than v4.4)');
    expect(r.stdout).toContain('ok    xsd: valid against FE v4.4');
    expect(r.stdout).not.toContain('FAIL');
    const j = await runCli(['verify', 'fe.xml', '--json'], { cwd: dir });
    expect(j.code).toBe(0);
    const out = JSON.parse(j.stdout);
    expect(out).toMatchObject({ ok: true, form: 'XAdES-EPES', policy: { version: '4.2', current: false } });
    expect(out.notes).toEqual([expect.stringContaining('policy: v4.2 identifier (older than v4.4)')]);

    writeFileSync(join(dir, 'tampered.xml'), tamperings(xml, CASES[4]!)[1]![1]); // SigningTime
    const bad = await runCli(['verify', 'tampered.xml'], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/FAIL {2}reference\[2\]: URI="#xades-/);
  });

  it('a MensajeHacienda signed XAdES-BES verifies as what it is', async () => {
    const dir = tempDir();
    // Issue 37.3: a MensajeHacienda must be signed by Hacienda's seal chained to a trust anchor. Signed by a seal-named
    // certificate under fecr's test root, it verifies with --env local (the local emulator's anchor); signed by the
    // test issuer (a taxpayer), it does not (signer.party): that is the forgery of issue 37.3.
    const c = CASES[CASES.length - 1]!;
    const seal = loadP12(createTestP12({ id: '2100042005', type: '02', pin: 'p', name: 'MINISTERIO DE HACIENDA (SELLO ELECTRONICO) (PRUEBAS FECR)' }), 'p', NOW);
    writeFileSync(join(dir, 'mh.xml'), xmlsecSign(templateDocument(mensajeHacienda, c.shape, seal), seal));
    const r = await runCli(['verify', 'mh.xml', '--json', '--no-xsd', '--env', 'local'], { cwd: dir });
    expect(r.code, r.stdout).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, form: 'XAdES-BES', policy: null, anchor: { source: 'fecr test root (env local)' } });
    writeFileSync(join(dir, 'taxpayer.xml'), signed.get(c.name)!);
    const t = await runCli(['verify', 'taxpayer.xml', '--json', '--no-xsd', '--env', 'local'], { cwd: dir });
    expect(t.code).toBe(1);
    expect(JSON.parse(t.stdout).checks.filter((k: { ok: boolean }) => !k.ok).map((k: { name: string }) => k.name)).toEqual(['signer.party']);
  });
});
