/**
 * Verification of XAdES-EPES signed comprobantes: the XMLDSig core checks (every reference digest and the
 * signature value, via xml-crypto on an @xmldom/xmldom tree) plus the Costa Rica profile (v4.4 policy,
 * SigningCertificate, certificate validity, placement of the signature). Never throws: malformed input
 * yields a report with failed checks. Other modules (e.g. XSD validation) append checks with `addCheck`.
 */
import { createHash, createVerify, X509Certificate } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { XMLValidator } from '#fast-xml-parser';
import { C14nCanonicalization, ExclusiveCanonicalization, SignedXml } from 'xml-crypto';
import { certificateInfo, type CertificateInfo } from './cert.js';
import { validityAt } from './p12.js';
import {
  ALG_ENVELOPED,
  ALG_EXC_C14N,
  NS_DS,
  NS_XADES,
  POLICY_V44_DIGEST,
  POLICY_V44_DIGEST_METHOD,
  POLICY_V44_URL,
  TYPE_SIGNED_PROPERTIES,
} from './policy.js';

export interface VerifyCheck {
  /** Stable identifier, e.g. `signature.value`, `reference[0]`, `xades.policy`. */
  name: string;
  ok: boolean;
  /** Human-readable explanation (what was found / expected). */
  detail: string;
}

export interface VerifyReport {
  /** True when every check passed. Keep in sync through `addCheck` when appending checks. */
  ok: boolean;
  checks: VerifyCheck[];
  /** The signing certificate (from KeyInfo), including the signer's identification. */
  signer?: CertificateInfo;
  /** xades:SigningTime as written in the document. */
  signingTime?: string;
}

/** Appends a check and updates `report.ok`. */
export function addCheck(report: VerifyReport, check: VerifyCheck): void {
  report.checks.push(check);
  report.ok = report.checks.every((c) => c.ok);
}

const ALG_XPATH = 'http://www.w3.org/TR/1999/REC-xpath-19991116';
const XPATH_NOT_SIGNATURE = 'not(ancestor-or-self::ds:Signature)';

const HASHES: Record<string, string> = {
  'http://www.w3.org/2000/09/xmldsig#sha1': 'sha1',
  'http://www.w3.org/2001/04/xmldsig-more#sha224': 'sha224',
  'http://www.w3.org/2001/04/xmlenc#sha256': 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512': 'sha512',
};
const RSA_SIGNATURES: Record<string, string> = {
  'http://www.w3.org/2000/09/xmldsig#rsa-sha1': 'RSA-SHA1',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': 'RSA-SHA256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384': 'RSA-SHA384',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': 'RSA-SHA512',
};
/** ANEXOS Anexo 2: RSA with SHA-256 or SHA-512, digests SHA-256 or SHA-512. */
const ALLOWED_SIGNATURES = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
]);
const ALLOWED_DIGESTS = new Set(['http://www.w3.org/2001/04/xmlenc#sha256', 'http://www.w3.org/2001/04/xmlenc#sha512']);

/**
 * The XPath transform Hacienda's own signer uses (`not(ancestor-or-self::ds:Signature)`, as in the Anexo 2
 * example): drops every ds:Signature. Registered only after checking each XPath transform has exactly that
 * expression.
 */
class XPathNotSignatureTransform {
  includeComments = false;
  process(node: Node): Node {
    const el = node as Element;
    const found = el.getElementsByTagNameNS ? Array.from(el.getElementsByTagNameNS(NS_DS, 'Signature')) : [];
    for (const s of found) s.parentNode?.removeChild(s);
    return node;
  }
  getAlgorithmName(): string {
    return ALG_XPATH;
  }
}

/** Verifies the (last top-level) XAdES signature of a document at instant `now`. */
export interface VerifyOptions {
  /**
   * Also run xml-crypto's own core validation as a second opinion (check `xmldsig.core`). On by default;
   * the emulator turns it off for speed (the same references and signature value are checked anyway).
   */
  crossCheck?: boolean;
}

export function verifyXades(xml: string, now: Date, opts: VerifyOptions = {}): VerifyReport {
  return runVerify(xml, undefined, now, opts);
}

/**
 * `verifyXades` on a document already parsed with `parseXmlDocument(xml)` (so that one parse serves other
 * checks too). `xml` must be the text it was parsed from. The DOM is modified: comments are removed.
 */
export function verifyXadesDocument(doc: Document, xml: string, now: Date, opts: VerifyOptions = {}): VerifyReport {
  return runVerify(xml, doc, now, opts);
}

function runVerify(xml: string, doc: Document | undefined, now: Date, opts: VerifyOptions): VerifyReport {
  const report: VerifyReport = { ok: false, checks: [] };
  try {
    verifyInto(report, xml, doc, now, opts.crossCheck ?? true);
  } catch (e) {
    addCheck(report, { name: 'verify', ok: false, detail: `unexpected error: ${message(e)}` });
  }
  report.ok = report.checks.length > 0 && report.checks.every((c) => c.ok);
  return report;
}

function verifyInto(report: VerifyReport, xml: string, parsedDoc: Document | undefined, now: Date, crossCheck: boolean): void {
  const check = (name: string, ok: boolean, detail: string) => addCheck(report, { name, ok, detail });

  // --- Parse -------------------------------------------------------------------------------------
  const parsed = parsedDoc ?? parseXmlDocument(xml);
  if (typeof parsed === 'string') {
    check('xml.wellFormed', false, parsed);
    return;
  }
  const doc = parsed;
  const root = doc.documentElement!;
  check('xml.wellFormed', true, `root element ${root.nodeName}`);

  // --- Locate the signature ------------------------------------------------------------------------
  const topLevel = childElements(root).filter((e) => isDs(e, 'Signature'));
  const signature = topLevel[topLevel.length - 1] ?? (doc.getElementsByTagNameNS(NS_DS, 'Signature')[0] as Element | undefined);
  if (!signature) {
    check('signature.present', false, 'no ds:Signature element');
    return;
  }
  check('signature.present', true, `${topLevel.length || 1} signature(s); checking Id=${signature.getAttribute('Id') ?? '(none)'}`);
  check('signature.lastChild', isLastChildOfRoot(root, signature), 'ds:Signature must be the last child of the root element');

  const signedInfo = firstChild(signature, NS_DS, 'SignedInfo');
  const signatureValue = firstChild(signature, NS_DS, 'SignatureValue');
  const keyInfo = firstChild(signature, NS_DS, 'KeyInfo');
  if (!signedInfo || !signatureValue) {
    check('signature.structure', false, 'ds:SignedInfo or ds:SignatureValue missing');
    return;
  }
  checkQualifyingProperties(signature, check);

  // --- Certificate from KeyInfo (with a chain, the one SigningCertificate names; else the first) ---------
  const certTexts = keyInfo
    ? Array.from(keyInfo.getElementsByTagNameNS(NS_DS, 'X509Certificate')).map((c) => (c.textContent ?? '').replace(/\s+/g, ''))
    : [];
  const certDigests = signedPropsCertDigests(signature);
  const certText =
    certTexts.find((t) => certDigests.some((d) => d.hash && createHash(d.hash).update(Buffer.from(t, 'base64')).digest('base64') === d.value)) ??
    certTexts[0];
  let certDer: Buffer | undefined;
  let certInfo: CertificateInfo | undefined;
  let x509: X509Certificate | undefined;
  if (!certText) {
    check('certificate.present', false, 'no ds:KeyInfo/ds:X509Data/ds:X509Certificate');
  } else {
    try {
      const cert = readCertificate(certText);
      certDer = cert.der;
      x509 = cert.x509;
      certInfo = { ...cert.info };
      report.signer = certInfo;
      check('certificate.present', true, certInfo.subject);
    } catch (e) {
      certDer = undefined;
      x509 = undefined;
      check('certificate.present', false, `unreadable certificate: ${message(e)}`);
    }
  }

  // --- Algorithms ------------------------------------------------------------------------------------
  const sigMethod = firstChild(signedInfo, NS_DS, 'SignatureMethod')?.getAttribute('Algorithm') ?? '';
  const c14nMethod = firstChild(signedInfo, NS_DS, 'CanonicalizationMethod')?.getAttribute('Algorithm') ?? '';
  const refNodes = childElements(signedInfo).filter((e) => isDs(e, 'Reference'));
  const digestMethods = refNodes.map((r) => firstChild(r, NS_DS, 'DigestMethod')?.getAttribute('Algorithm') ?? '');
  const badAlgs = [
    ...(ALLOWED_SIGNATURES.has(sigMethod) ? [] : [`SignatureMethod ${sigMethod || '(none)'}`]),
    ...digestMethods.filter((d) => !ALLOWED_DIGESTS.has(d)).map((d) => `DigestMethod ${d || '(none)'}`),
  ];
  check(
    'signature.algorithms',
    badAlgs.length === 0,
    badAlgs.length === 0 ? `${sigMethod}; C14N ${c14nMethod}` : `not allowed by the v4.4 rules (RSA, SHA-256/512): ${badAlgs.join(', ')}`,
  );

  // XPath transforms: only Hacienda's `not(ancestor-or-self::ds:Signature)` is understood.
  const xpathTransforms = refNodes.flatMap((r) =>
    childElements(firstChild(r, NS_DS, 'Transforms'))
      .filter((t) => t.getAttribute('Algorithm') === ALG_XPATH)
      .map((t) => (firstChild(t, NS_DS, 'XPath')?.textContent ?? '').trim()),
  );
  const xpathOk = xpathTransforms.every((x) => x === XPATH_NOT_SIGNATURE);
  if (!xpathOk) check('signature.transforms', false, `unsupported XPath transform: ${xpathTransforms.join(' | ')}`);

  // --- Reference coverage ------------------------------------------------------------------------------
  const signedProps = firstDescendant(signature, NS_XADES, 'SignedProperties');
  const spId = signedProps?.getAttribute('Id') ?? '';
  const docRef = refNodes.find((r) => r.getAttribute('URI') === '');
  const docRefTransforms = docRef
    ? childElements(firstChild(docRef, NS_DS, 'Transforms')).map((t) => t.getAttribute('Algorithm') ?? '')
    : [];
  const docRefEnveloped = docRefTransforms.includes(ALG_ENVELOPED) || docRefTransforms.includes(ALG_XPATH);
  const spRef = refNodes.find((r) => r.getAttribute('URI') === `#${spId}` && spId !== '');
  const coverage: string[] = [];
  if (!docRef) coverage.push('no reference to the whole document (URI="")');
  else if (!docRefEnveloped) coverage.push('the document reference does not exclude the signature (enveloped transform)');
  if (!signedProps) coverage.push('no xades:SignedProperties');
  else if (!spRef) coverage.push(`no reference to the SignedProperties (#${spId})`);
  else if (spRef.getAttribute('Type') !== TYPE_SIGNED_PROPERTIES) coverage.push(`SignedProperties reference Type is not ${TYPE_SIGNED_PROPERTIES}`);
  check('references.coverage', coverage.length === 0, coverage.length === 0 ? 'document and SignedProperties are signed' : coverage.join('; '));

  // --- Reference digests and signature value (our own pass, for per-item detail) --------------------------
  if (xpathOk) {
    checkReferencesAndValue(report, doc, certDer, x509, sigMethod);
    // --- xml-crypto's own core validation, as a second opinion -------------------------------------------
    if (x509 && crossCheck) {
      try {
        const sx = newSignedXml(x509);
        sx.loadSignature(signature);
        const ok = sx.checkSignature(xml);
        check('xmldsig.core', ok, ok ? 'xml-crypto: signature valid' : 'xml-crypto: a reference digest does not match');
      } catch (e) {
        check('xmldsig.core', false, `xml-crypto: ${message(e)}`);
      }
    }
  }

  // --- Certificate validity ------------------------------------------------------------------------------
  const signingTimeText = signedProps ? firstDescendant(signedProps, NS_XADES, 'SigningTime')?.textContent?.trim() : undefined;
  if (signingTimeText) report.signingTime = signingTimeText;
  if (certInfo) {
    const v = validityAt(certInfo, now);
    check(
      'certificate.validNow',
      v === 'valid',
      `${v} at ${now.toISOString()} (valid ${certInfo.notBefore.toISOString()} – ${certInfo.notAfter.toISOString()})`,
    );
    const st = signingTimeText ? parseXsDateTime(signingTimeText) : undefined;
    if (!st) {
      check('certificate.validAtSigningTime', false, signingTimeText ? `unreadable SigningTime ${signingTimeText}` : 'no xades:SigningTime');
    } else {
      const vs = validityAt(certInfo, st);
      check('certificate.validAtSigningTime', vs === 'valid', `${vs} at SigningTime ${signingTimeText}`);
    }
  }

  // --- XAdES SigningCertificate --------------------------------------------------------------------------------
  if (!signedProps) {
    check('xades.signingCertificate', false, 'no xades:SignedProperties');
    check('xades.policy', false, 'no xades:SignedProperties');
  } else {
    if (certDer && certInfo) check(...signingCertificateCheck(signedProps, certDer, certInfo));
    check(...policyCheck(signedProps));
  }

  // --- Signer identification ---------------------------------------------------------------------------------
  if (certInfo) {
    check(
      'signer.identificacion',
      certInfo.identificacion !== undefined,
      certInfo.identificacion !== undefined
        ? `${certInfo.tipoIdentificacion ?? '??'} ${certInfo.identificacion} (subject serialNumber ${certInfo.subjectSerialNumber})`
        : 'the certificate subject has no serialNumber with an identification',
    );
  }
}

function checkReferencesAndValue(
  report: VerifyReport,
  doc: Document,
  certDer: Buffer | undefined,
  x509: X509Certificate | undefined,
  sigMethod: string,
): void {
  const check = (name: string, ok: boolean, detail: string) => addCheck(report, { name, ok, detail });
  // Same-document references exclude comments (the earlier checks do not look at comments).
  removeComments(doc);
  const root = doc.documentElement!;
  const topLevel = childElements(root).filter((e) => isDs(e, 'Signature'));
  const signature = topLevel[topLevel.length - 1] ?? (doc.getElementsByTagNameNS(NS_DS, 'Signature')[0] as Element);
  // xml-crypto (loadSignature: XPath over the signature) is only needed for unusual transform chains.
  let loaded: SignedXml | undefined;
  const generic = (): SignedXml => {
    if (!loaded) {
      loaded = newSignedXml(x509);
      loaded.loadSignature(signature);
    }
    return loaded;
  };
  let idx: Map<string, Element[]> | undefined;
  const ids = () => (idx ??= idIndex(doc));
  const signedInfoEl = firstChild(signature, NS_DS, 'SignedInfo');
  const refs = (signedInfoEl ? childElements(signedInfoEl) : [])
    .filter((e) => isDs(e, 'Reference'))
    .map((r) => ({
      uri: r.getAttribute('URI'),
      transforms: childElements(firstChild(r, NS_DS, 'Transforms'))
        .filter((t) => isDs(t, 'Transform'))
        .map((t) => t.getAttribute('Algorithm') ?? ''),
      digestAlgorithm: firstChild(r, NS_DS, 'DigestMethod')?.getAttribute('Algorithm') ?? '',
      digestValue: firstChild(r, NS_DS, 'DigestValue')?.textContent ?? '',
    }));
  refs.forEach((ref, i) => {
    const label = `reference[${i}]`;
    const uri = ref.uri ?? '';
    const where = uri === '' ? 'URI="" (document)' : `URI="${uri}"`;
    try {
      const target = resolveUri(doc, uri, ids);
      if (typeof target === 'string') {
        check(label, false, `${where}: ${target}`);
        return;
      }
      const hash = HASHES[ref.digestAlgorithm];
      if (!hash) {
        check(label, false, `${where}: unsupported digest ${ref.digestAlgorithm}`);
        return;
      }
      const canon = canonicalizeDirect(ref.transforms, target, signature) ?? generic().getCanonXml(ref.transforms, target);
      const digest = createHash(hash).update(canon, 'utf8').digest('base64');
      const expected = String(ref.digestValue ?? '').replace(/\s+/g, '');
      check(label, digest === expected, digest === expected ? `${where}: digest matches` : `${where}: digest mismatch (computed ${digest}, signed ${expected})`);
    } catch (e) {
      check(label, false, `${where}: ${message(e)}`);
    }
  });

  // Signature value over the canonical SignedInfo.
  if (!certDer || !x509) {
    check('signature.value', false, 'no usable certificate to verify with');
    return;
  }
  const rsaAlg = RSA_SIGNATURES[sigMethod];
  if (!rsaAlg) {
    check('signature.value', false, `unsupported SignatureMethod ${sigMethod}`);
    return;
  }
  try {
    const signedInfo = firstChild(signature, NS_DS, 'SignedInfo')!;
    const c14n = firstChild(signedInfo, NS_DS, 'CanonicalizationMethod')?.getAttribute('Algorithm') ?? '';
    const canon = canonicalizeDirect([c14n], signedInfo, signature) ?? generic().getCanonXml([c14n], signedInfo);
    const value = strictBase64(firstChild(signature, NS_DS, 'SignatureValue')?.textContent ?? '');
    if (!value) {
      check('signature.value', false, 'SignatureValue is not valid base64');
      return;
    }
    const ok = createVerify(rsaAlg).update(canon, 'utf8').verify(x509.publicKey, value);
    check('signature.value', ok, ok ? `${rsaAlg} signature over SignedInfo verifies with the KeyInfo certificate` : 'SignatureValue does not verify with the KeyInfo certificate');
  } catch (e) {
    check('signature.value', false, message(e));
  }
}

const ALG_C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';

interface ReadCertificate {
  der: Buffer;
  x509: X509Certificate;
  info: CertificateInfo;
}

/**
 * Parsed certificates by their base64 text. A verifier sees the same few certificates again and again
 * (one per issuer); parsing one (node:crypto and node-forge) costs more than the rest of the certificate
 * checks. The entries are immutable; validity is still judged per document.
 */
const certCache = new Map<string, ReadCertificate>();
const CERT_CACHE_SIZE = 256;

function readCertificate(certText: string): ReadCertificate {
  const hit = certCache.get(certText);
  if (hit) return hit;
  const der = strictBase64(certText) ?? Buffer.alloc(0);
  const cert: ReadCertificate = { der, x509: new X509Certificate(der), info: certificateInfo(der) };
  if (certCache.size >= CERT_CACHE_SIZE) certCache.delete(certCache.keys().next().value!);
  certCache.set(certText, cert);
  return cert;
}

/**
 * The common transform chains, run directly on the DOM: [enveloped-signature?, exc-c14n | c14n]. xml-crypto's
 * generic path deep-clones the document and runs XPath for every reference, which dominates the cost of a
 * verification; here the enveloped signature is detached for the duration instead. Other chains
 * (e.g. Hacienda's XPath transform) return undefined and take the generic path.
 */
function canonicalizeDirect(transforms: readonly string[], node: Node, signature: Element): string | undefined {
  let chain = [...transforms];
  const enveloped = chain[0] === ALG_ENVELOPED;
  if (enveloped) chain = chain.slice(1);
  if (chain.length === 0) chain = [ALG_C14N]; // a node-set left at the end is converted with inclusive C14N
  if (chain.length !== 1) return undefined;
  const exclusive = chain[0] === ALG_EXC_C14N;
  if (!exclusive && chain[0] !== ALG_C14N) return undefined;
  const element = node as Element;
  if (enveloped && signature.parentNode !== element) return undefined; // only a signature directly under the target
  const next = signature.nextSibling;
  const parent = signature.parentNode;
  if (enveloped) parent!.removeChild(signature);
  try {
    const options = { defaultNsForPrefix: {}, ancestorNamespaces: exclusive ? [] : ancestorNamespaces(element) };
    const algorithm = exclusive ? new ExclusiveCanonicalization() : new C14nCanonicalization();
    return String(algorithm.process(element, options as never));
  } finally {
    if (enveloped) parent!.insertBefore(signature, next);
  }
}

/** Namespace declarations in scope from the ancestors of an element (for inclusive C14N of a subtree). */
function ancestorNamespaces(element: Element): { prefix: string; namespaceURI: string }[] {
  const seen = new Map<string, string>();
  for (let p = element.parentNode as Element | null; p && p.nodeType === 1; p = p.parentNode as Element | null) {
    for (let i = 0; i < p.attributes.length; i++) {
      const a = p.attributes[i]!;
      if (a.name.startsWith('xmlns:') && !seen.has(a.localName)) seen.set(a.localName, a.value);
    }
  }
  return [...seen].map(([prefix, namespaceURI]) => ({ prefix, namespaceURI }));
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes base64 strictly (whitespace allowed): Node's decoder ignores junk after the padding. */
function strictBase64(text: string): Buffer | undefined {
  const t = text.replace(/\s+/g, '');
  return BASE64.test(t) ? Buffer.from(t, 'base64') : undefined;
}

/** The CertDigest values of the signature's SigningCertificate (hash name undefined when unsupported). */
function signedPropsCertDigests(signature: Element): Array<{ hash: string | undefined; value: string }> {
  const sc = firstDescendant(signature, NS_XADES, 'SigningCertificate') ?? firstDescendant(signature, NS_XADES, 'SigningCertificateV2');
  if (!sc) return [];
  return childElements(sc)
    .filter((e) => e.namespaceURI === NS_XADES && e.localName === 'Cert')
    .map((c) => {
      const cd = firstChild(c, NS_XADES, 'CertDigest');
      const alg = cd ? firstChild(cd, NS_DS, 'DigestMethod')?.getAttribute('Algorithm') ?? '' : '';
      return { hash: HASHES[alg], value: (cd ? firstChild(cd, NS_DS, 'DigestValue')?.textContent ?? '' : '').replace(/\s+/g, '') };
    });
}

function signingCertificateCheck(signedProps: Element, certDer: Buffer, certInfo: CertificateInfo): [string, boolean, string] {
  const name = 'xades.signingCertificate';
  const sc = firstDescendant(signedProps, NS_XADES, 'SigningCertificate') ?? firstDescendant(signedProps, NS_XADES, 'SigningCertificateV2');
  if (!sc) return [name, false, 'no xades:SigningCertificate'];
  const certs = childElements(sc).filter((e) => e.namespaceURI === NS_XADES && e.localName === 'Cert');
  if (certs.length === 0) return [name, false, 'no xades:Cert'];
  const problems: string[] = [];
  for (const c of certs) {
    const cd = firstChild(c, NS_XADES, 'CertDigest');
    const alg = cd ? firstChild(cd, NS_DS, 'DigestMethod')?.getAttribute('Algorithm') ?? '' : '';
    const value = (cd ? firstChild(cd, NS_DS, 'DigestValue')?.textContent ?? '' : '').replace(/\s+/g, '');
    const hash = HASHES[alg];
    if (!hash) {
      problems.push(`unsupported CertDigest method ${alg || '(none)'}`);
      continue;
    }
    const computed = createHash(hash).update(certDer).digest('base64');
    if (computed !== value) {
      problems.push('CertDigest does not match the KeyInfo certificate');
      continue;
    }
    const issuerSerial = firstChild(c, NS_XADES, 'IssuerSerial');
    const serial = issuerSerial ? firstChild(issuerSerial, NS_DS, 'X509SerialNumber')?.textContent?.trim() : undefined;
    if (serial !== undefined && serial !== certInfo.serialNumber) {
      problems.push(`IssuerSerial X509SerialNumber ${serial} differs from the certificate's ${certInfo.serialNumber}`);
      continue;
    }
    return [name, true, `CertDigest (${hash}) matches the KeyInfo certificate, serial ${certInfo.serialNumber}`];
  }
  return [name, false, problems.join('; ')];
}

function policyCheck(signedProps: Element): [string, boolean, string] {
  const name = 'xades.policy';
  const policyId = firstDescendant(signedProps, NS_XADES, 'SignaturePolicyId');
  if (!policyId) return [name, false, 'no xades:SignaturePolicyIdentifier/xades:SignaturePolicyId (XAdES-EPES requires it)'];
  const identifier = firstDescendant(policyId, NS_XADES, 'Identifier')?.textContent?.trim() ?? '';
  const hashEl = firstDescendant(policyId, NS_XADES, 'SigPolicyHash');
  const method = hashEl ? firstChild(hashEl, NS_DS, 'DigestMethod')?.getAttribute('Algorithm') ?? '' : '';
  const value = (hashEl ? firstChild(hashEl, NS_DS, 'DigestValue')?.textContent ?? '' : '').replace(/\s+/g, '');
  const problems: string[] = [];
  if (identifier !== POLICY_V44_URL) problems.push(`policy identifier is ${JSON.stringify(identifier)}, expected the v4.4 resolution URL`);
  if (method !== POLICY_V44_DIGEST_METHOD) problems.push(`policy hash method is ${JSON.stringify(method)}, expected sha256`);
  if (value !== POLICY_V44_DIGEST) problems.push(`policy hash is ${JSON.stringify(value)}, expected ${POLICY_V44_DIGEST}`);
  return [name, problems.length === 0, problems.length === 0 ? 'v4.4 policy identifier and hash' : problems.join('; ')];
}

// --- helpers -------------------------------------------------------------------------------------------

function newSignedXml(x509: X509Certificate | undefined): SignedXml {
  const sx = new SignedXml({
    publicCert: x509?.toString(),
    getCertFromKeyInfo: () => null,
  });
  sx.CanonicalizationAlgorithms[ALG_XPATH] = XPathNotSignatureTransform as never;
  return sx;
}

/**
 * The unsigned wrapper of the XAdES properties must still be right: QualifyingProperties in the
 * XAdES v1.3.2 namespace, targeting this signature. (Its content, SignedProperties, is signed.)
 */
function checkQualifyingProperties(signature: Element, check: (name: string, ok: boolean, detail: string) => void): void {
  const objects = childElements(signature).filter((e) => isDs(e, 'Object'));
  const qps = objects.flatMap((o) => childElements(o)).filter((e) => e.localName === 'QualifyingProperties');
  if (qps.length !== 1) {
    check('xades.qualifyingProperties', false, `expected one QualifyingProperties in ds:Object, found ${qps.length}`);
    return;
  }
  const qp = qps[0]!;
  const sigId = signature.getAttribute('Id');
  const target = qp.getAttribute('Target');
  const problems: string[] = [];
  if (qp.namespaceURI !== NS_XADES) problems.push(`namespace is ${qp.namespaceURI ?? '(none)'}, not ${NS_XADES}`);
  if (!sigId) problems.push('ds:Signature has no Id for QualifyingProperties to target');
  else if (target !== `#${sigId}`) problems.push(`Target="${target ?? ''}" does not name the signature (#${sigId})`);
  check('xades.qualifyingProperties', problems.length === 0, problems.length ? problems.join('; ') : `targets #${sigId}`);
}

/**
 * Parses XML for signature verification: a strict well-formedness check (fast-xml-parser's validator),
 * then an @xmldom/xmldom tree. Returns the reason as a string when the text is not well-formed.
 */
export function parseXmlDocument(xml: string): Document | string {
  // xmldom forgives mismatched end tags and similar faults (as warnings); a signed document must be
  // well-formed, so a strict validator decides first.
  const strict = XMLValidator.validate(xml);
  if (strict !== true) return `not well-formed XML: ${strict.err.msg} (line ${strict.err.line}, column ${strict.err.col})`;
  const errors: string[] = [];
  let doc: Document;
  try {
    doc = withCloseTagIndex(() =>
      new DOMParser({
        errorHandler: {
          warning: () => undefined,
          error: (m: string) => errors.push(m),
          fatalError: (m: string) => errors.push(m),
        },
        normalizeLineEndings: (source: string) => (closeTags.source = normalizeLineEndings(source)),
      } as ConstructorParameters<typeof DOMParser>[0]).parseFromString(xml, 'text/xml'),
    );
  } catch (e) {
    return `not well-formed XML: ${message(e)}`;
  }
  if (errors.length > 0) return `not well-formed XML: ${errors[0]}`;
  if (!doc || !doc.documentElement) return 'not well-formed XML: no root element';
  return doc;
}

/** xmldom's own line-end normalization (XML 1.1 §2.11, as @xmldom/xmldom 0.8 applies it), which it does not export. */
function normalizeLineEndings(input: string): string {
  return input.replace(/\r[\n\u0085]/g, '\n').replace(/[\r\u0085\u2028]/g, '\n');
}

/**
 * xmldom 0.8 looks, for every distinct element name, for the LAST `</name>` in the whole source
 * (`fixSelfClosed`, an HTML leniency, with `String.prototype.lastIndexOf`): one backward scan of the document
 * per element name, ≈ 40 % of parsing a 14 KB comprobante. During a parse (synchronous, nothing else runs on
 * this thread) `lastIndexOf` on the source being parsed, for a `</name>` needle, answers from an index of the
 * last position of every `</…>` built in one forward pass; any other call goes to the built-in. The answers are
 * identical: an occurrence of `</name>` at i is exactly a `</` at i whose next `>` closes `name`.
 */
const closeTags: { source: string | undefined; last: Map<string, number> | undefined } = { source: undefined, last: undefined };
const builtinLastIndexOf = String.prototype.lastIndexOf;

function indexedLastIndexOf(this: string, search: string, position?: number): number {
  const source = closeTags.source;
  if (
    source !== undefined &&
    position === undefined &&
    typeof search === 'string' &&
    search.startsWith('</') &&
    search.indexOf('>') === search.length - 1 &&
    // `this` is the primitive string in strict code; the same string as the source being parsed
    this === source
  ) {
    let last = closeTags.last;
    if (!last) {
      last = new Map();
      for (let i = source.indexOf('</'); i >= 0; i = source.indexOf('</', i + 1)) {
        const end = source.indexOf('>', i + 2);
        if (end < 0) break;
        last.set(source.slice(i, end + 1), i);
      }
      closeTags.last = last;
    }
    return last.get(search) ?? -1;
  }
  return builtinLastIndexOf.call(this, search, position);
}

function withCloseTagIndex<T>(parse: () => T): T {
  if (String.prototype.lastIndexOf !== builtinLastIndexOf) return parse(); // someone else's patch: leave it
  String.prototype.lastIndexOf = indexedLastIndexOf;
  try {
    return parse();
  } finally {
    String.prototype.lastIndexOf = builtinLastIndexOf;
    closeTags.source = undefined;
    closeTags.last = undefined;
  }
}

function resolveUri(doc: Document, uri: string, ids: () => Map<string, Element[]>): Node | string {
  if (uri === '') return doc.documentElement!;
  if (!uri.startsWith('#')) return 'only same-document references are supported';
  const id = uri.slice(1);
  let matches: Element[];
  if (id !== '') matches = ids().get(id) ?? [];
  else {
    matches = [];
    const all = doc.getElementsByTagName('*');
    for (let i = 0; i < all.length; i++) {
      const e = all[i]!;
      if (e.getAttribute('Id') === id || e.getAttribute('ID') === id || e.getAttribute('id') === id) matches.push(e);
    }
  }
  if (matches.length === 0) return `no element with Id ${id}`;
  if (matches.length > 1) return `${matches.length} elements with Id ${id} (possible signature wrapping)`;
  return matches[0]!;
}

/**
 * Every element by each non-empty value of its Id, ID or id attribute (an element counts once per value),
 * in one walk. xmldom's getAttribute gives "" for a missing attribute; an empty id is looked up by `resolveUri`
 * the slow way.
 */
function idIndex(doc: Document): Map<string, Element[]> {
  const index = new Map<string, Element[]>();
  const add = (v: string | null, e: Element): void => {
    if (!v) return;
    const list = index.get(v);
    if (!list) index.set(v, [e]);
    else if (list[list.length - 1] !== e) list.push(e);
  };
  const visit = (e: Element): void => {
    add(e.getAttribute('Id'), e);
    add(e.getAttribute('ID'), e);
    add(e.getAttribute('id'), e);
    for (let ch = e.firstChild; ch; ch = ch.nextSibling) if (ch.nodeType === 1) visit(ch as Element);
  };
  if (doc.documentElement) visit(doc.documentElement);
  return index;
}

function removeComments(node: Node): void {
  for (let c = node.firstChild; c; ) {
    const next = c.nextSibling;
    if (c.nodeType === 8) node.removeChild(c);
    else if (c.nodeType === 1) removeComments(c);
    c = next;
  }
}

function childElements(parent: Element | undefined): Element[] {
  const out: Element[] = [];
  if (!parent) return out;
  for (let c = parent.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) out.push(c as Element);
  return out;
}

function isDs(e: Element, local: string): boolean {
  return e.namespaceURI === NS_DS && e.localName === local;
}

function firstChild(parent: Element | undefined, ns: string, local: string): Element | undefined {
  return childElements(parent).find((e) => e.namespaceURI === ns && e.localName === local);
}

function firstDescendant(parent: Element, ns: string, local: string): Element | undefined {
  return (parent.getElementsByTagNameNS(ns, local)[0] as Element | undefined) ?? undefined;
}

function isLastChildOfRoot(root: Element, signature: Element): boolean {
  if (signature.parentNode !== root) return false;
  for (let n = signature.nextSibling; n; n = n.nextSibling) {
    if (n.nodeType === 1) return false;
    if ((n.nodeType === 3 || n.nodeType === 4) && (n.nodeValue ?? '').trim() !== '') return false;
  }
  return true;
}

/** xs:dateTime → Date; without an offset the time is taken as UTC. */
function parseXsDateTime(s: string): Date | undefined {
  const m = /^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.exec(s);
  if (!m) return undefined;
  const d = new Date(s + (m[8] ? '' : 'Z'));
  return Number.isNaN(d.getTime()) ? undefined : d;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
