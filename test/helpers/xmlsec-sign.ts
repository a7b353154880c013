/**
 * Signs documents OUTSIDE fecr: a ds:Signature template (written here, in the shape asked for) is inserted
 * as the last child of the root and `xmlsec1 --sign` fills in the reference digests and the signature
 * value (and an empty ds:KeyValue with the RSA key value; a filled-in one makes xmlsec1 1.2 write a signature
 * that it does not verify itself). The XAdES QualifyingProperties are filled in here (SigningTime, CertDigest
 * over the certificate DER with node:crypto, IssuerSerial, the policy), as any third-party signer does.
 *
 * Command line:
 *   xmlsec1 --sign --privkey-pem key.pem,cert.pem \
 *     --id-attr:Id http://www.w3.org/2000/09/xmldsig#:KeyInfo \
 *     --id-attr:Id http://uri.etsi.org/01903/v1.3.2#:SignedProperties --output signed.xml template.xml
 */
import { spawnSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SigningCredentials } from '../../src/core/sign/p12.js';
import { POLICY_V44_DIGEST, POLICY_V44_URL } from '../../src/core/sign/policy.js';
import { XMLSEC_ID_ARGS } from './xmlsec.js';

export const C14N = {
  exc: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  excWithComments: 'http://www.w3.org/2001/10/xml-exc-c14n#WithComments',
  inc: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  incWithComments: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments',
} as const;
export type C14nName = keyof typeof C14N;

const DIGEST = {
  sha1: 'http://www.w3.org/2000/09/xmldsig#sha1',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha512: 'http://www.w3.org/2001/04/xmlenc#sha512',
} as const;

/** Policy identifiers seen in signatures Hacienda accepted (NOTES §3.1, §6.3) and in CR signers' code. */
export const POLICIES = {
  'v4.4': { identifier: POLICY_V44_URL, hash: POLICY_V44_DIGEST },
  'v4.3': {
    identifier: 'https://www.hacienda.go.cr/ATV/ComprobanteElectronico/docs/esquemas/2016/v4.3/ResolucionComprobantesElectronicosDGT-R-48-2016_4.3.pdf',
    hash: 'NmI5Njk1ZThkNzI0MmIzMGJmZDAyNDc4YjUwNzkzODM2NTBiOWUxNTBkMmI2YjgzYzZjM2I5NTZlNDQ4OWQzMQ==',
  },
  'v4.2': {
    identifier: 'https://www.hacienda.go.cr/ATV/ComprobanteElectronico/docs/esquemas/2016/v4.2/ResolucionComprobantesElectronicosDGT-R-48-2016_4.2.pdf',
    hash: 'NmI5Njk1ZThkNzI0MmIzMGJmZDAyNDc4YjUwNzkzODM2NTBiOWUxNTBkMmI2YjgzYzZjM2I5NTZlNDQ4OWQzMQ==',
  },
  'v4.1': {
    identifier: 'https://tribunet.hacienda.go.cr/docs/esquemas/2016/v4.1/Resolucion_Comprobantes_Electronicos_DGT-R-48-2016.pdf',
    hash: 'NmI5Njk1ZThkNzI0MmIzMGJmZDAyNDc4YjUwNzkzODM2NTBiOWUxNTBkMmI2YjgzYzZjM2I5NTZlNDQ4OWQzMQ==',
  },
} as const;
export type PolicyName = keyof typeof POLICIES;

export interface Shape {
  /** CanonicalizationMethod of SignedInfo and the c14n transform of every reference. */
  c14n: C14nName;
  /** How the document reference (URI="") leaves the signature out. */
  docTransform: 'enveloped' | 'xpath';
  /** Write the c14n transform after the enveloped/XPath one (CRLibre writes the enveloped transform alone). */
  docC14nTransform?: boolean;
  /** A third reference, to KeyInfo. */
  keyInfoReference: boolean;
  /** ds:KeyValue/RSAKeyValue beside the certificate (written by xmlsec1). */
  keyValue?: boolean;
  /** The CA certificate after the signer's in KeyInfo (Hacienda's own answers carry the chain). */
  chain?: boolean;
  certDigest: keyof typeof DIGEST;
  /** xades:SigningTime exactly as written, e.g. `2026-03-11T16:07:33-06:00` or `2026-03-11T22:07:33Z`. */
  signingTime: string;
  /** `none`: XAdES-BES, no SignaturePolicyIdentifier. */
  policy: PolicyName | 'none';
  /** Namespace declarations added to the root start tag (CRLibre declares ds, xsd and xsi there). */
  rootNamespaces?: Record<string, string>;
  /** Hacienda's Reference Id="r-id-1" Type="" on the document reference. */
  haciendaIds?: boolean;
  /** A comment written at the start of SignedInfo. */
  signedInfoComment?: string;
  /** ds:Signature and its ds children unprefixed, in a default namespace (as .NET's SignedXml writes them). */
  unprefixed?: boolean;
}

const NS_DS = 'http://www.w3.org/2000/09/xmldsig#';
const NS_XADES = 'http://uri.etsi.org/01903/v1.3.2#';

/** The signature template for `shape` (empty DigestValue and SignatureValue for xmlsec1 to fill). */
export function signatureTemplate(shape: Shape, creds: SigningCredentials, id = 'a1b2c3'): string {
  // A comment in SignedInfo: signed only under a #WithComments CanonicalizationMethod.
  const comment = shape.signedInfoComment ? `<!--${shape.signedInfoComment}-->` : '';
  const c14n = C14N[shape.c14n];
  const t = (alg: string, inner = '') => `<ds:Transform Algorithm="${alg}">${inner}</ds:Transform>`;
  const docTransforms = [
    shape.docTransform === 'enveloped'
      ? t('http://www.w3.org/2000/09/xmldsig#enveloped-signature')
      : t('http://www.w3.org/TR/1999/REC-xpath-19991116', '<ds:XPath>not(ancestor-or-self::ds:Signature)</ds:XPath>'),
    ...(shape.docC14nTransform === false ? [] : [t(c14n)]),
  ].join('');
  const reference = (attrs: string, transforms: string) =>
    `<ds:Reference ${attrs}><ds:Transforms>${transforms}</ds:Transforms>` +
    `<ds:DigestMethod Algorithm="${DIGEST.sha256}"></ds:DigestMethod><ds:DigestValue></ds:DigestValue></ds:Reference>`;
  const docRefId = shape.haciendaIds ? 'r-id-1' : `Reference-${id}`;
  const references = [
    reference(shape.haciendaIds ? `Id="${docRefId}" Type="" URI=""` : `Id="${docRefId}" URI=""`, docTransforms),
    ...(shape.keyInfoReference ? [reference(`Id="ReferenceKeyInfo-${id}" URI="#KeyInfoId-${id}"`, t(c14n))] : []),
    reference(`Type="http://uri.etsi.org/01903#SignedProperties" URI="#xades-${id}"`, t(c14n)),
  ].join('');

  const certs = [creds.certificateBase64, ...(shape.chain ? creds.chain.map((c) => c.toString('base64')) : [])];
  const keyInfo =
    `<ds:KeyInfo Id="KeyInfoId-${id}"><ds:X509Data>${certs.map((c) => `<ds:X509Certificate>${c}</ds:X509Certificate>`).join('')}</ds:X509Data>` +
    (shape.keyValue
      ? '<ds:KeyValue></ds:KeyValue>'
      : '') +
    '</ds:KeyInfo>';

  const x509 = new X509Certificate(creds.certificateDer);
  const certDigest = createHash(shape.certDigest).update(creds.certificateDer).digest('base64');
  const issuerName = x509.issuer.split('\n').reverse().join(', ');
  const serial = BigInt(`0x${x509.serialNumber}`).toString(10);
  const policy =
    shape.policy === 'none'
      ? ''
      : '<xades:SignaturePolicyIdentifier><xades:SignaturePolicyId><xades:SigPolicyId>' +
        `<xades:Identifier>${POLICIES[shape.policy].identifier}</xades:Identifier><xades:Description></xades:Description></xades:SigPolicyId>` +
        `<xades:SigPolicyHash><ds:DigestMethod Algorithm="${DIGEST.sha256}"></ds:DigestMethod><ds:DigestValue>${POLICIES[shape.policy].hash}</ds:DigestValue></xades:SigPolicyHash>` +
        '</xades:SignaturePolicyId></xades:SignaturePolicyIdentifier>';
  const qualifyingProperties =
    `<xades:QualifyingProperties xmlns:xades="${NS_XADES}" Target="#Signature-${id}">` +
    `<xades:SignedProperties Id="xades-${id}"><xades:SignedSignatureProperties>` +
    `<xades:SigningTime>${shape.signingTime}</xades:SigningTime>` +
    '<xades:SigningCertificate><xades:Cert>' +
    `<xades:CertDigest><ds:DigestMethod Algorithm="${DIGEST[shape.certDigest]}"></ds:DigestMethod><ds:DigestValue>${certDigest}</ds:DigestValue></xades:CertDigest>` +
    `<xades:IssuerSerial><ds:X509IssuerName>${escapeText(issuerName)}</ds:X509IssuerName><ds:X509SerialNumber>${serial}</ds:X509SerialNumber></xades:IssuerSerial>` +
    '</xades:Cert></xades:SigningCertificate>' +
    policy +
    '</xades:SignedSignatureProperties>' +
    `<xades:SignedDataObjectProperties><xades:DataObjectFormat ObjectReference="#${docRefId}"><xades:MimeType>text/xml</xades:MimeType><xades:Encoding>UTF-8</xades:Encoding></xades:DataObjectFormat></xades:SignedDataObjectProperties>` +
    '</xades:SignedProperties></xades:QualifyingProperties>';

  const signature =
    `<ds:Signature xmlns:ds="${NS_DS}" Id="Signature-${id}">` +
    `<ds:SignedInfo>${comment}<ds:CanonicalizationMethod Algorithm="${c14n}"></ds:CanonicalizationMethod>` +
    '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"></ds:SignatureMethod>' +
    references +
    '</ds:SignedInfo>' +
    `<ds:SignatureValue Id="value-id-${id}"></ds:SignatureValue>` +
    keyInfo +
    `<ds:Object>${qualifyingProperties}</ds:Object>` +
    '</ds:Signature>';
  return shape.unprefixed ? signature.replace(/<(\/?)ds:/g, '<$1').replace(` xmlns:ds="${NS_DS}"`, ` xmlns="${NS_DS}"`) : signature;
}

/** The unsigned document with the template as the last child of the root (and extra root namespaces). */
export function templateDocument(unsignedXml: string, shape: Shape, creds: SigningCredentials, id?: string): string {
  const body = unsignedXml.replace(/^\uFEFF?\s*(<\?xml[^?]*\?>)?\s*/, '');
  const close = body.lastIndexOf('</');
  const startEnd = body.indexOf('>');
  const extra = Object.entries(shape.rootNamespaces ?? {})
    .map(([p, uri]) => ` xmlns:${p}="${uri}"`)
    .join('');
  return (
    '<?xml version="1.0" encoding="utf-8"?>' +
    body.slice(0, startEnd) +
    extra +
    body.slice(startEnd, close) +
    signatureTemplate(shape, creds, id) +
    body.slice(close)
  );
}

/** Runs `xmlsec1 --sign` on a template document with the credentials' key and certificate. */
export function xmlsecSign(templateXml: string, creds: SigningCredentials): string {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-xmlsec-sign-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    const tmpl = join(dir, 'template.xml');
    const out = join(dir, 'signed.xml');
    writeFileSync(key, creds.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(cert, new X509Certificate(creds.certificateDer).toString());
    writeFileSync(tmpl, templateXml, 'utf8');
    const r = spawnSync('xmlsec1', ['--sign', '--privkey-pem', `${key},${cert}`, ...XMLSEC_ID_ARGS, '--output', out, tmpl], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`xmlsec1 --sign failed (${r.status}): ${r.stderr}${r.error ? String(r.error) : ''}`);
    return readFileSync(out, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
