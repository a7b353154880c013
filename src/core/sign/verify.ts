/**
 * Verification of XAdES-EPES signed comprobantes: the XMLDSig core checks (every reference digest and the
 * signature value, via xml-crypto's canonicalizers on an @xmldom/xmldom tree) plus the Costa Rica profile (policy,
 * SigningCertificate, certificate validity, placement of the signature). Never throws: malformed input
 * yields a report with failed checks. Other modules (e.g. XSD validation) append checks with `addCheck`.
 *
 * It agrees with `xmlsec1 --verify` on every shape Hacienda accepts (test/verify-shapes.test.ts): inclusive or
 * exclusive C14N (and their #WithComments variants), the enveloped-signature transform or Hacienda's XPath
 * `not(ancestor-or-self::ds:Signature)` filter, two or three references (± KeyInfo), KeyValue beside the
 * certificate, a SHA-1/SHA-256/SHA-512 CertDigest, SigningTime with an offset or in UTC. Beyond XMLDSig: a
 * comprobante must be XAdES-EPES (v4.4 policy; a v4.1–v4.3 identifier passes with a note); a MensajeHacienda is
 * XAdES-BES, as Hacienda signs it. `notes` carry what is worth knowing but not a failure. With `trust` (received
 * documents), the signing certificate must also chain to a trust anchor (./chain.ts, check `certificate.chain`).
 */
import { createHash, type X509Certificate } from 'node:crypto';
import { ALG_XPATH, XPATH_NOT_SIGNATURE } from './c14n.js';
import type { CertificateInfo } from './cert.js';
import { verifyChain, type TrustStore } from './chain.js';
import { validityAt } from './p12.js';
import { ALG_ENVELOPED, NS_DS, NS_XADES, TYPE_SIGNED_PROPERTIES } from './policy.js';
import { policyCheck } from './policy-check.js';
import { checkReferencesAndValue, newSignedXml, strictBase64 } from './references.js';
import { readCertificate, signedPropsCertDigests, signingCertificateCheck } from './signer-certificate.js';
import { addCheck, errorText, type VerifyReport } from './verify-report.js';
import { childElements, firstChild, firstDescendant, isDs, parseXmlDocument, withXml10LineEnds } from './xml-dom.js';

/** ANEXOS Anexo 2: RSA with SHA-256 or SHA-512, digests SHA-256 or SHA-512. */
const ALLOWED_SIGNATURES = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
]);
const ALLOWED_DIGESTS = new Set(['http://www.w3.org/2001/04/xmlenc#sha256', 'http://www.w3.org/2001/04/xmlenc#sha512']);

/** Verifies the (last top-level) XAdES signature of a document at instant `now`. */
export interface VerifyOptions {
  /**
   * Also run xml-crypto's own core validation as a second opinion (check `xmldsig.core`). On by default;
   * the emulator turns it off for speed (the same references and signature value are checked anyway).
   */
  crossCheck?: boolean;
  /**
   * Also check that the signing certificate chains to one of these trust anchors (check `certificate.chain`,
   * ./chain.ts), at `now` and at the SigningTime. Absent: not checked (a signature that verifies, by any key).
   */
  trust?: TrustStore;
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
  const report: VerifyReport = { ok: false, checks: [], notes: [] };
  try {
    // xml-crypto's own parses (the cross-check, an unusual transform chain) read line ends as the signer did.
    withXml10LineEnds(() => verifyInto(report, xml, doc, now, opts.crossCheck ?? true, opts.trust));
  } catch (e) {
    addCheck(report, { name: 'verify', ok: false, detail: `unexpected error: ${errorText(e)}` });
  }
  report.ok = report.checks.length > 0 && report.checks.every((c) => c.ok);
  return report;
}

function verifyInto(report: VerifyReport, xml: string, parsedDoc: Document | undefined, now: Date, crossCheck: boolean, trust: TrustStore | undefined): void {
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
  const signedProps = firstDescendant(signature, NS_XADES, 'SignedProperties');
  const policyId = signedProps ? firstDescendant(signedProps, NS_XADES, 'SignaturePolicyId') : undefined;
  report.form = !signedProps ? 'XMLDSig' : policyId ? 'XAdES-EPES' : 'XAdES-BES';

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
      check('certificate.present', false, `unreadable certificate: ${errorText(e)}`);
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
        check('xmldsig.core', false, `xml-crypto: ${errorText(e)}`);
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
    if (trust && certDer) {
      const others = certTexts.filter((t) => t !== certText).map((t) => strictBase64(t) ?? Buffer.alloc(0));
      const chain = verifyChain(certDer, others, trust, st ? [now, st] : [now]);
      check('certificate.chain', chain.ok, chain.detail);
      if (chain.anchor) report.anchor = chain.anchor;
    }
  }

  // --- XAdES SigningCertificate --------------------------------------------------------------------------------
  if (!signedProps) {
    check('xades.signingCertificate', false, 'no xades:SignedProperties');
    check('xades.policy', false, 'no xades:SignedProperties');
  } else {
    if (certDer && certInfo) check(...signingCertificateCheck(signedProps, certDer, certInfo, report));
    check(...policyCheck(policyId, root, report));
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
