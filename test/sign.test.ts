import { spawnSync } from 'node:child_process';
import { createHash, randomBytes, sign as cryptoSign, verify as cryptoVerify, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { ExclusiveCanonicalization, SignedXml } from 'xml-crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { el, serialize } from '../src/core/xml/canonical.js';
import { loadP12, type SigningCredentials } from '../src/core/sign/p12.js';
import { NS_DS, NS_XADES, POLICY_V44_DIGEST, POLICY_V44_URL } from '../src/core/sign/policy.js';
import { createTestP12, testCaCertificatePem } from '../src/core/sign/testcert.js';
import { verifyXades } from '../src/core/sign/verify.js';
import { addCheck } from '../src/core/sign/verify-report.js';
import { formatCr as crDateTime } from '../src/core/dates.js';
import { signCanonical, signXmlDocument, XML_DECLARATION } from '../src/core/sign/xades.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

const NS_FE = 'https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica';
const NOW = new Date();
const SIGNING_TIME = new Date(NOW.getTime() - 60_000);
const PIN = '12345678901234';
const newId = () => randomBytes(16).toString('hex');

function invoice(): string {
  return serialize(
    el(
      'FacturaElectronica',
      { xmlns: NS_FE },
      el('Clave', '50601092500310112345600100001010000000001100000001'),
      el('ProveedorSistemas', '3101123456'),
      el('CodigoActividadEmisor', '472101'),
      el('NumeroConsecutivo', '00100001010000000001'),
      el('FechaEmision', '2025-09-01T10:15:00-06:00'),
      el('Emisor', {}, el('Nombre', 'Panadería Ñandú & Hijos <S.A.>'), el('Identificacion', {}, el('Tipo', '02'), el('Numero', '3101123456'))),
      el(
        'DetalleServicio',
        {},
        [1, 2, 3].map((n) =>
          el(
            'LineaDetalle',
            {},
            el('NumeroLinea', String(n)),
            el('Detalle', `Café con leche n.º ${n} — ₡1 500 > ₡1 000 "tamaño" 'grande'`),
            el('MontoTotal', '1500.00000'),
          ),
        ),
      ),
      el('Otros', {}, el('OtroTexto', { codigo: 'A&B <x> "q"' }, 'Gracias por su compra ✓')),
    ),
  );
}

let self: SigningCredentials;
let caSigned: SigningCredentials;
let selfPem: string;

beforeAll(() => {
  self = loadP12(createTestP12({ id: '3101123456', type: '02', pin: PIN, selfSigned: true }), PIN, NOW);
  caSigned = loadP12(createTestP12({ id: '114560789', type: '01', pin: PIN, algorithm: 'aes256' }), PIN, NOW);
  selfPem = new X509Certificate(self.certificateDer).toString();
});

function xmlCryptoVerifies(xml: string, pem: string): boolean {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const sig = doc.getElementsByTagNameNS(NS_DS, 'Signature')[0]!;
  const sx = new SignedXml({ publicCert: pem, getCertFromKeyInfo: () => null });
  sx.loadSignature(sig);
  try {
    return sx.checkSignature(xml);
  } catch {
    return false;
  }
}

function between(s: string, start: string, end: string): string {
  const a = s.indexOf(start);
  const b = s.indexOf(end, a) + end.length;
  return s.slice(a, b);
}

/** Exclusive C14N of the first element with this name, as a verifier computes it in the document. */
function canonOf(xml: string, ns: string, name: string): string {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  return new ExclusiveCanonicalization().process(doc.getElementsByTagNameNS(ns, name)[0]!, {}).toString();
}

/** Recomputes the KeyInfo and SignedProperties digests and the signature value of a document signed by signCanonical. */
function resign(xml: string, creds: SigningCredentials): string {
  const digest = (part: string) => createHash('sha256').update(part, 'utf8').digest('base64');
  const sp = digest(canonOf(xml, NS_XADES, 'SignedProperties'));
  const ki = digest(canonOf(xml, NS_DS, 'KeyInfo'));
  let out = xml.replace(/(URI="#xades-[^"]+">.*?<ds:DigestValue>)[^<]+/, (_m, a: string) => a + sp);
  out = out.replace(/(URI="#KeyInfoId-[^"]+">.*?<ds:DigestValue>)[^<]+/, (_m, a: string) => a + ki);
  const si = canonOf(out, NS_DS, 'SignedInfo');
  const value = cryptoSign('sha256', Buffer.from(si, 'utf8'), creds.privateKey).toString('base64');
  out = out.replace(/(<ds:SignatureValue[^>]*>)[^<]+/, (_m, a: string) => a + value);
  return out;
}

function failed(xml: string, now = NOW): string[] {
  return verifyXades(xml, now).checks.filter((c) => !c.ok).map((c) => c.name);
}

describe('signCanonical', () => {
  it('produces a document that xmlsec1, xml-crypto and verifyXades accept', () => {
    const unsigned = invoice();
    const signed = signCanonical(unsigned, self, { signingTime: SIGNING_TIME, newId });
    expect(signed.startsWith(XML_DECLARATION + '<FacturaElectronica xmlns="' + NS_FE + '">')).toBe(true);
    // The unsigned document is untouched and the signature is the last child of the root.
    const sigAt = signed.indexOf('<ds:Signature ');
    expect(XML_DECLARATION + unsigned.slice(0, -'</FacturaElectronica>'.length)).toBe(signed.slice(0, sigAt));
    expect(signed.endsWith('</ds:Signature></FacturaElectronica>')).toBe(true);

    const xs = xmlsecVerify(signed);
    expect(xs.output).toMatch(/SignedInfo References \(ok\/all\): 3\/3/);
    expect(xs.ok).toBe(true);
    expect(xmlsecVerify(signed, { trustedPem: selfPem }).ok).toBe(true);
    expect(xmlCryptoVerifies(signed, selfPem)).toBe(true);

    const report = verifyXades(signed, NOW);
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'signature.value', 'reference[0]', 'reference[1]', 'reference[2]', 'references.coverage', 'xmldsig.core',
        'certificate.validNow', 'certificate.validAtSigningTime', 'xades.signingCertificate', 'xades.policy',
        'signature.lastChild', 'signer.identificacion',
      ]),
    );
    expect(report.signer?.identificacion).toBe('3101123456');
    expect(report.signer?.tipoIdentificacion).toBe('02');
    expect(report.signingTime).toBe(crDateTime(SIGNING_TIME));
  });

  it('a certificate issued by the test CA verifies in xmlsec1 against the CA, and not against another anchor', () => {
    const signed = signCanonical(invoice(), caSigned, { signingTime: SIGNING_TIME, newId });
    expect(xmlsecVerify(signed, { trustedPem: testCaCertificatePem() }).ok).toBe(true);
    expect(xmlsecVerify(signed, { trustedPem: selfPem }).ok).toBe(false);
    expect(verifyXades(signed, NOW).ok).toBe(true);
    expect(verifyXades(signed, NOW).signer?.identificacion).toBe('114560789');
  });

  it('is canonical by construction: each digested part equals its exclusive C14N in the signed document', () => {
    const unsigned = invoice();
    const signed = signCanonical(unsigned, self, { signingTime: SIGNING_TIME, newId });
    const doc = new DOMParser().parseFromString(signed, 'text/xml');
    const c14n = new ExclusiveCanonicalization();
    const canon = (n: Element) => c14n.process(n, {}).toString();
    const signedInfo = doc.getElementsByTagNameNS(NS_DS, 'SignedInfo')[0]!;
    const keyInfo = doc.getElementsByTagNameNS(NS_DS, 'KeyInfo')[0]!;
    const signedProps = doc.getElementsByTagNameNS(NS_XADES, 'SignedProperties')[0]!;
    // Each digested part, canonicalized in place by xml-crypto, hashes to the digest we wrote; SignedInfo verifies.
    const digestFor = (uri: string) => new RegExp(`URI="${uri}[^"]*">.*?<ds:DigestValue>([^<]+)<`).exec(signed)![1];
    const sha = (x: string) => createHash('sha256').update(x, 'utf8').digest('base64');
    expect(sha(canon(keyInfo))).toBe(digestFor('#KeyInfoId-'));
    expect(sha(canon(signedProps))).toBe(digestFor('#xades-'));
    const value = Buffer.from(/<ds:SignatureValue>([^<]+)</.exec(signed)![1]!, 'base64');
    expect(cryptoVerify('sha256', Buffer.from(canon(signedInfo), 'utf8'), self.privateKey, value)).toBe(true);
    // The signed document as a whole is in exclusive canonical form: no redundant declarations.
    const whole = mkdtempSync(join(tmpdir(), 'fecr-c14n-'));
    try {
      writeFileSync(join(whole, 's.xml'), signed);
      const r = spawnSync('xmllint', ['--exc-c14n', join(whole, 's.xml')], { encoding: 'utf8' });
      expect(r.stdout).toBe(signed.slice(signed.indexOf('?>') + 2));
    } finally {
      rmSync(whole, { recursive: true, force: true });
    }
    expect(signed.match(/xmlns:ds=/g)).toHaveLength(1);
    expect(signed.match(/xmlns:xades=/g)).toHaveLength(1);
    expect(between(signed, '<ds:SignedInfo', '</ds:SignedInfo>')).not.toBe(canon(signedInfo)); // declared on ds:Signature instead
    // The document digest is SHA-256 of the unsigned bytes, and libxml2's exclusive C14N agrees.
    const docDigest = /<ds:Reference Id="Reference-[^"]+" URI=""><ds:Transforms>.*?<ds:DigestValue>([^<]+)</.exec(signed)![1];
    expect(docDigest).toBe(createHash('sha256').update(unsigned, 'utf8').digest('base64'));
    const dir = mkdtempSync(join(tmpdir(), 'fecr-c14n-'));
    try {
      writeFileSync(join(dir, 'u.xml'), unsigned);
      const r = spawnSync('xmllint', ['--exc-c14n', join(dir, 'u.xml')], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(unsigned);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes the XAdES-EPES properties Hacienda expects', () => {
    const signingTime = new Date('2025-09-01T03:04:05.678Z');
    const signed = signCanonical(invoice(), self, { signingTime, newId: () => 'abc123' });
    expect(signed).toContain('<xades:SigningTime>2025-08-31T21:04:05-06:00</xades:SigningTime>');
    expect(signed).toContain(`<xades:Identifier>${POLICY_V44_URL}</xades:Identifier>`);
    expect(signed).toContain(`>${POLICY_V44_DIGEST}</ds:DigestValue></xades:SigPolicyHash>`);
    expect(signed).toContain('<xades:DataObjectFormat ObjectReference="#Reference-abc123"><xades:MimeType>text/xml</xades:MimeType><xades:Encoding>UTF-8</xades:Encoding>');
    expect(signed).toContain('<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="Signature-abc123"><ds:SignedInfo>');
    expect(signed).toContain('<ds:KeyInfo Id="KeyInfoId-abc123">');
    expect(signed).toContain('<ds:Reference Id="ReferenceKeyInfo-abc123" URI="#KeyInfoId-abc123">');
    expect(signed).toContain('<ds:Reference Type="http://uri.etsi.org/01903#SignedProperties" URI="#xades-abc123">');
    expect(signed).toContain('<xades:QualifyingProperties xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" Target="#Signature-abc123">');
    const certDigest = createHash('sha256').update(self.certificateDer).digest('base64');
    expect(signed).toContain(`<xades:CertDigest><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"></ds:DigestMethod><ds:DigestValue>${certDigest}</ds:DigestValue>`);
    expect(signed).toContain(`<ds:X509SerialNumber>${self.certificate.serialNumber}</ds:X509SerialNumber>`);
    expect(signed).toContain(`<ds:X509IssuerName>${self.certificate.issuerRfc4514}</ds:X509IssuerName>`);
    expect(self.certificate.issuerRfc4514).toMatch(/^CN=EMPRESA DE PRUEBA SOCIEDAD ANONIMA,OU=CPJ,O=PERSONA JURIDICA,C=CR,2\.5\.4\.5=#1310/);
  });

  it('computes SigningTime in Costa Rica time whatever the host time zone', () => {
    const saved = process.env.TZ;
    try {
      for (const tz of ['UTC', 'Asia/Tokyo', 'America/Costa_Rica', 'America/New_York']) {
        process.env.TZ = tz;
        expect(crDateTime(new Date('2025-01-01T05:59:59.999Z'))).toBe('2024-12-31T23:59:59-06:00');
        expect(crDateTime(new Date('2025-03-09T12:00:00Z'))).toBe('2025-03-09T06:00:00-06:00');
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  describe('any single-byte change breaks the signature (xmlsec1 and verifyXades)', () => {
    let signed: string;
    beforeAll(() => {
      signed = signCanonical(invoice(), self, { signingTime: SIGNING_TIME, newId });
    });
    const cases: Array<[string, (s: string) => string, string]> = [
      ['a text character', (s) => s.replace('Panadería', 'Panaderia'), 'reference[0]'],
      ['an escaped character', (s) => s.replace('&amp; Hijos', '&amp;,Hijos'), 'reference[0]'],
      ['the ₡ sign', (s) => s.replace('₡1 500', '₡1 600'), 'reference[0]'],
      ['an attribute value', (s) => s.replace('codigo="A&amp;B', 'codigo="A&amp;C'), 'reference[0]'],
      ['the SigningTime', (s) => s.replace(/(<xades:SigningTime>\d{4}-\d\d-\d\dT\d\d:\d\d:)(\d)/, (_m, a: string, d: string) => a + ((Number(d) + 1) % 6)), 'reference[2]'],
      ['the policy hash', (s) => s.replace(POLICY_V44_DIGEST, 'E' + POLICY_V44_DIGEST.slice(1)), 'reference[2]'],
      ['the X509SerialNumber', (s) => s.replace(/(<ds:X509SerialNumber[^>]*>\d)(\d)/, (_m, a: string, d: string) => a + ((Number(d) + 1) % 10)), 'reference[2]'],
      ['the KeyInfo modulus', (s) => s.replace(/(<ds:Modulus>.{10})(.)/, (_m, a: string, c: string) => a + (c === 'A' ? 'B' : 'A')), 'reference[1]'],
      ['a document digest', (s) => s.replace(/(<ds:DigestValue>)(.)/, (_m, a: string, c: string) => a + (c === 'A' ? 'B' : 'A')), 'signature.value'],
      ['the SignatureValue', (s) => s.replace(/(<ds:SignatureValue[^>]*>.{20})(.)/, (_m, a: string, c: string) => a + (c === 'A' ? 'B' : 'A')), 'signature.value'],
    ];
    it.each(cases)('%s', (_what, mutate, failingCheck) => {
      const tampered = mutate(signed);
      expect(tampered).not.toBe(signed);
      expect(tampered.length).toBe(signed.length);
      expect(xmlsecVerify(tampered).ok).toBe(false);
      const report = verifyXades(tampered, NOW);
      expect(report.ok).toBe(false);
      expect(failed(tampered, NOW)).toContain(failingCheck);
      expect(failed(tampered, NOW)).toContain('xmldsig.core');
    });
    it('the untouched document still passes', () => {
      expect(xmlsecVerify(signed).ok).toBe(true);
      expect(verifyXades(signed, NOW).ok).toBe(true);
    });
  });

  it('rejects input that is not canonical by construction', () => {
    const bad = [
      XML_DECLARATION + '<A xmlns="urn:a"><B>x</B></A>',
      '<A xmlns="urn:a"><B xmlns="urn:b">x</B></A>',
      '<A xmlns="urn:a" xmlns:p="urn:p"><B>x</B></A>',
      '<p:A xmlns:p="urn:p"><p:B>x</p:B></p:A>',
      '<A><!-- c --><B>x</B></A>',
      '<A><B/></A>',
      "<A><B c='1'>x</B></A>",
      '<A><B>x</B></A><C></C>',
      '<A><B c="x>y" xmlns:q="urn:q">x</B></A>',
      '<A>\n<B\nc="1">x</B></A>',
    ];
    for (const xml of bad) expect(() => signCanonical(xml, self, { signingTime: NOW, newId }), xml).toThrow(/not a canonical/);
    expect(() => signCanonical('<A xmlns="urn:a"><B c="x>y">x</B></A>', self, { signingTime: NOW, newId })).not.toThrow();
    expect(() => signCanonical(invoice(), self, { signingTime: NOW, newId: () => 'a b' })).toThrow(/invalid signature id/);
  });
});

describe('signXmlDocument (arbitrary XML via xml-crypto)', () => {
  const foreign =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<fe:MensajeReceptor xmlns:fe="urn:mr" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
    '  <fe:Clave   b="2" a="1">506&#x31;</fe:Clave>\n  <!-- comment -->\n  <fe:Detalle><![CDATA[Café & <pan>]]></fe:Detalle>\n' +
    '  <fe:Vacio/>\n</fe:MensajeReceptor>\n';

  it('signs with the same structure and verifies everywhere', () => {
    const signed = signXmlDocument(foreign, self, { signingTime: SIGNING_TIME, newId });
    expect(signed.startsWith(XML_DECLARATION + '<fe:MensajeReceptor')).toBe(true);
    expect(xmlsecVerify(signed).ok).toBe(true);
    expect(xmlCryptoVerifies(signed, selfPem)).toBe(true);
    const report = verifyXades(signed, NOW);
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.checks.filter((c) => c.name.startsWith('reference['))).toHaveLength(3);
    expect(signed).toMatch(/<ds:Reference URI="#KeyInfoId-[0-9a-f]+" Id="ReferenceKeyInfo-/);
    expect(signed).toContain(`<xades:Identifier>${POLICY_V44_URL}</xades:Identifier>`);
    expect(signed.trimEnd().endsWith('</ds:Signature></fe:MensajeReceptor>')).toBe(true);
  });

  it('tampering is detected', () => {
    const signed = signXmlDocument(foreign, self, { signingTime: SIGNING_TIME, newId });
    for (const tampered of [signed.replace('b="2"', 'b="3"'), signed.replace('Café', 'Cafe'), signed.replace(POLICY_V44_DIGEST, 'X' + POLICY_V44_DIGEST.slice(1))]) {
      expect(tampered).not.toBe(signed);
      expect(xmlsecVerify(tampered).ok).toBe(false);
      expect(verifyXades(tampered, NOW).ok).toBe(false);
    }
    // Comments are not signed (same-document references drop them).
    const commentChanged = signed.replace('<!-- comment -->', '<!-- other -->');
    expect(verifyXades(commentChanged, NOW).ok).toBe(true);
    expect(xmlsecVerify(commentChanged).ok).toBe(true);
  });
});

describe('verifyXades', () => {
  it('reports certificate validity at now and at SigningTime separately', () => {
    const day = 86_400_000;
    const creds = loadP12(
      createTestP12({ id: '3101123456', type: '02', pin: PIN, selfSigned: true, notBefore: new Date(NOW.getTime() - 30 * day), notAfter: new Date(NOW.getTime() + day) }),
      PIN,
      NOW,
    );
    const signed = signCanonical(invoice(), creds, { signingTime: NOW, newId });
    expect(verifyXades(signed, NOW).ok).toBe(true);
    // Checked later, after the certificate expired: the signature is intact but the certificate is not valid now.
    expect(failed(signed, new Date(NOW.getTime() + 2 * day))).toEqual(['certificate.validNow']);
    // Signed with a SigningTime outside the certificate's validity.
    const backdated = signCanonical(invoice(), creds, { signingTime: new Date(NOW.getTime() - 60 * day), newId });
    expect(failed(backdated, NOW)).toEqual(['certificate.validAtSigningTime']);
    // xmlsec1 also checks the validity period when given a trust anchor and a time.
    const pem = new X509Certificate(creds.certificateDer).toString();
    expect(xmlsecVerify(signed, { trustedPem: pem, verificationTime: NOW }).ok).toBe(true);
    expect(xmlsecVerify(signed, { trustedPem: pem, verificationTime: new Date(NOW.getTime() + 2 * day) }).ok).toBe(false);
  });

  it('flags a signature that is not the last child of the root', () => {
    const signed = signCanonical(invoice(), self, { signingTime: NOW, newId });
    const moved = signed.replace('</ds:Signature></FacturaElectronica>', '</ds:Signature><Extra></Extra></FacturaElectronica>');
    expect(failed(moved)).toContain('signature.lastChild');
    expect(failed(moved)).toContain('reference[0]');
    // Whitespace after the signature is tolerated for placement but changes the signed document.
    const ws = signed.replace('</ds:Signature></FacturaElectronica>', '</ds:Signature>\n</FacturaElectronica>');
    expect(failed(ws)).not.toContain('signature.lastChild');
  });

  it('flags a KeyInfo certificate other than the signed one', () => {
    const other = loadP12(createTestP12({ id: '3101999999', type: '02', pin: PIN, selfSigned: true }), PIN, NOW);
    const signed = signCanonical(invoice(), self, { signingTime: NOW, newId });
    const swapped = signed.replace(self.certificateBase64, other.certificateBase64);
    const f = failed(swapped);
    expect(f).toContain('xades.signingCertificate');
    expect(f).toContain('signature.value');
    expect(f).toContain('reference[1]');
  });

  it('flags a foreign policy even when every digest and the signature value are consistent', () => {
    const signed = signCanonical(invoice(), self, { signingTime: NOW, newId });
    const foreignPolicy = resign(
      signed.replace(POLICY_V44_URL, 'https://example.invalid/policy.pdf').replace(POLICY_V44_DIGEST, 'Ohixl6upD6av8N7pEvDABhEL6hM='),
      self,
    );
    expect(xmlsecVerify(foreignPolicy).ok).toBe(true);
    expect(failed(foreignPolicy)).toEqual(['xades.policy']);
    const detail = verifyXades(foreignPolicy, NOW).checks.find((c) => c.name === 'xades.policy')!.detail;
    expect(detail).toMatch(/policy identifier/);
    expect(detail).toMatch(/policy hash/);
  });

  it('verifies signatures using Hacienda\'s XPath transform instead of enveloped-signature', () => {
    const signed = signCanonical(invoice(), self, { signingTime: NOW, newId });
    const enveloped = '<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></ds:Transform>';
    const xpath = (expr: string) =>
      `<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath>${expr}</ds:XPath></ds:Transform>`;
    expect(signed).toContain(enveloped);
    const hacienda = resign(signed.replace(enveloped, xpath('not(ancestor-or-self::ds:Signature)')), self);
    expect(xmlsecVerify(hacienda).ok).toBe(true);
    expect(verifyXades(hacienda, NOW).checks.filter((c) => !c.ok)).toEqual([]);
    const other = resign(signed.replace(enveloped, xpath('true()')), self);
    expect(failed(other)).toContain('signature.transforms');
  });

  it('picks the signing certificate out of a chain in KeyInfo', () => {
    const signed = signCanonical(invoice(), caSigned, { signingTime: NOW, newId });
    const caB64 = caSigned.chain[0]!.toString('base64');
    const withChain = resign(signed.replace('<ds:X509Data><ds:X509Certificate>', `<ds:X509Data><ds:X509Certificate>${caB64}</ds:X509Certificate><ds:X509Certificate>`), caSigned);
    expect(withChain.match(/<ds:X509Certificate>/g)).toHaveLength(2);
    const report = verifyXades(withChain, NOW);
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.signer?.identificacion).toBe('114560789');
    expect(xmlsecVerify(withChain, { trustedPem: testCaCertificatePem() }).ok).toBe(true);
  });

  it('never throws on malformed input', () => {
    const signed = signCanonical(invoice(), self, { signingTime: NOW, newId });
    const inputs = [
      '',
      'not xml',
      '<a>',
      '<a></b>',
      invoice(),
      signed.slice(0, signed.length / 2),
      signed.replace(/<ds:X509Certificate>[^<]+/, '<ds:X509Certificate>!!!notbase64'),
      signed.replace(/<ds:SignedInfo[\s\S]*<\/ds:SignedInfo>/, ''),
      signed.replace(/<ds:KeyInfo[\s\S]*<\/ds:KeyInfo>/, ''),
      signed.replace(/<ds:Object>[\s\S]*<\/ds:Object>/, ''),
      signed.replace('URI="#xades-', 'URI="#nothing-'),
      signed.replace(/Algorithm="http:\/\/www.w3.org\/2001\/04\/xmldsig-more#rsa-sha256"/, 'Algorithm="urn:nope"'),
      signed.replace(/http:\/\/www.w3.org\/2001\/10\/xml-exc-c14n#/g, 'urn:c14n'),
    ];
    for (const xml of inputs) {
      const r = verifyXades(xml, NOW);
      expect(r.ok, xml.slice(0, 60)).toBe(false);
      expect(r.checks.length).toBeGreaterThan(0);
      expect(r.checks.every((c) => typeof c.detail === 'string')).toBe(true);
    }
    expect(failed(invoice())).toEqual(['signature.present']);
    expect(failed('not xml')).toEqual(['xml.wellFormed']);
  });

  it('lets other modules append checks', () => {
    const report = verifyXades(signCanonical(invoice(), self, { signingTime: NOW, newId }), NOW);
    expect(report.ok).toBe(true);
    addCheck(report, { name: 'xsd', ok: false, detail: 'example' });
    expect(report.ok).toBe(false);
  });
});
