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
 * XAdES-BES, as Hacienda signs it. `notes` carry what is worth knowing but not a failure.
 */
import { createHash, createVerify, X509Certificate } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { XMLValidator } from 'fast-xml-parser';
import { SignedXml } from 'xml-crypto';
import { ALG_XPATH, canonicalizeDirect, genericOptions, XPATH_NOT_SIGNATURE, XPathNotSignatureTransform } from './c14n.js';
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
  /**
   * What the signature is: XAdES-EPES (with a SignaturePolicyId), XAdES-BES (QualifyingProperties without a
   * policy, as Hacienda signs its MensajeHacienda) or plain XMLDSig (no XAdES properties). Absent when no
   * signature was found.
   */
  form?: SignatureForm;
  /** The signature policy named in SignedProperties; absent when there is none (XAdES-BES). */
  policy?: PolicyInfo;
  /**
   * Things worth knowing that are not failures (e.g. `policy: v4.2 identifier (older than v4.4)`); `ok` does
   * not depend on them.
   */
  notes: string[];
}

export type SignatureForm = 'XAdES-EPES' | 'XAdES-BES' | 'XMLDSig';

export interface PolicyInfo {
  /** xades:SigPolicyId/xades:Identifier as written. */
  identifier: string;
  /**
   * The comprobantes version the identifier belongs to: `4.4` for the official v4.4 URL (or another v4.4 path on
   * Hacienda's hosts), `4.1`–`4.3` for the earlier resolution's URLs there; undefined for anything else (a
   * foreign policy: the check fails).
   */
  version?: PolicyVersion;
  /**
   * True only for the official v4.4 identifier with its hash. Another identifier of Hacienda's (e.g. v4.2) passes
   * the check with a note; a foreign identifier, or the v4.4 one with a wrong hash, fails it.
   */
  current: boolean;
}

export type PolicyVersion = '4.4' | '4.3' | '4.2' | '4.1';

/** Appends a check and updates `report.ok`. */
export function addCheck(report: VerifyReport, check: VerifyCheck): void {
  report.checks.push(check);
  report.ok = report.checks.every((c) => c.ok);
}

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
  const report: VerifyReport = { ok: false, checks: [], notes: [] };
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

function checkReferencesAndValue(
  report: VerifyReport,
  doc: Document,
  certDer: Buffer | undefined,
  x509: X509Certificate | undefined,
  sigMethod: string,
): void {
  const check = (name: string, ok: boolean, detail: string) => addCheck(report, { name, ok, detail });
  const root = doc.documentElement!;
  const topLevel = childElements(root).filter((e) => isDs(e, 'Signature'));
  const signature = topLevel[topLevel.length - 1] ?? (doc.getElementsByTagNameNS(NS_DS, 'Signature')[0] as Element);
  // Same-document references exclude comments (the earlier checks do not look at comments); SignedInfo keeps
  // its own under a #WithComments CanonicalizationMethod, which signs them.
  const signedInfoC14n = firstChild(firstChild(signature, NS_DS, 'SignedInfo'), NS_DS, 'CanonicalizationMethod')?.getAttribute('Algorithm') ?? '';
  removeComments(doc, signedInfoC14n.endsWith('#WithComments') ? firstChild(signature, NS_DS, 'SignedInfo') : undefined);
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
      const canon =
        canonicalizeDirect(ref.transforms, target, signature) ?? generic().getCanonXml(ref.transforms, target, genericOptions(ref.transforms, target));
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
    const canon = canonicalizeDirect([c14n], signedInfo, signature) ?? generic().getCanonXml([c14n], signedInfo, genericOptions([c14n], signedInfo));
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

function signingCertificateCheck(signedProps: Element, certDer: Buffer, certInfo: CertificateInfo, report: VerifyReport): [string, boolean, string] {
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
    if (hash === 'sha1') report.notes.push('certDigest: SHA-1 (as in Hacienda\'s own signatures; fecr writes SHA-256)');
    return [name, true, `CertDigest (${hash}) matches the KeyInfo certificate, serial ${certInfo.serialNumber}`];
  }
  return [name, false, problems.join('; ')];
}

/**
 * Policy identifiers under a versioned path on one of Hacienda's hosts: mostly the DGT-R-48-2016 resolution of
 * v4.1–v4.3, in the many spellings signers use, e.g.
 * `https://www.hacienda.go.cr/ATV/ComprobanteElectronico/docs/esquemas/2016/v4.2/ResolucionComprobantesElectronicosDGT-R-48-2016_4.2.pdf`,
 * `https://tribunet.hacienda.go.cr/docs/esquemas/2016/v4.1/Resolucion_Comprobantes_Electronicos_DGT-R-48-2016.pdf`.
 * Hacienda accepted v4.4 documents signed with the v4.2 one in 2026 (NOTES §6.3). Their hash is not checked:
 * signers write several values for the same identifier.
 */
const OLDER_POLICY = /^https?:\/\/(?:[a-z0-9-]+\.)*(?:hacienda\.go\.cr|comprobanteselectronicos\.go\.cr)\/.*\/v4\.([1-4])\/[^?#]*\.pdf$/i;

/** Hacienda's sentence for a signature without a policy (NOTES §6.3). */
const NO_POLICY_ID = 'La firma del documento no tiene el Policy Id';

/**
 * The policy check. A comprobante (or MensajeReceptor) must be XAdES-EPES: with the v4.4 policy (identifier and
 * hash), or with an earlier version's identifier (passes, with a note). A MensajeHacienda is Hacienda's own
 * signature, XAdES-BES without a policy: it passes as what it is.
 */
function policyCheck(policyId: Element | undefined, root: Element, report: VerifyReport): [string, boolean, string] {
  const name = 'xades.policy';
  if (!policyId) {
    if (root.localName === 'MensajeHacienda') {
      report.notes.push('form: XAdES-BES (no signature policy), as Hacienda signs its MensajeHacienda');
      return [name, true, 'no signature policy: XAdES-BES, the form of Hacienda\'s own MensajeHacienda signatures'];
    }
    return [name, false, `${NO_POLICY_ID}: no xades:SignaturePolicyIdentifier/xades:SignaturePolicyId, so the signature is XAdES-BES, not XAdES-EPES`];
  }
  const identifier = firstDescendant(policyId, NS_XADES, 'Identifier')?.textContent?.trim() ?? '';
  const hashEl = firstDescendant(policyId, NS_XADES, 'SigPolicyHash');
  const method = hashEl ? firstChild(hashEl, NS_DS, 'DigestMethod')?.getAttribute('Algorithm') ?? '' : '';
  const value = (hashEl ? firstChild(hashEl, NS_DS, 'DigestValue')?.textContent ?? '' : '').replace(/\s+/g, '');
  if (identifier === POLICY_V44_URL) {
    const problems: string[] = [];
    if (method !== POLICY_V44_DIGEST_METHOD) problems.push(`policy hash method is ${JSON.stringify(method)}, expected sha256`);
    if (value !== POLICY_V44_DIGEST) problems.push(`policy hash is ${JSON.stringify(value)}, expected ${POLICY_V44_DIGEST}`);
    report.policy = { identifier, version: '4.4', current: problems.length === 0 };
    return [name, problems.length === 0, problems.length === 0 ? 'v4.4 policy identifier and hash' : problems.join('; ')];
  }
  const older = OLDER_POLICY.exec(identifier);
  if (older) {
    const version = `4.${older[1]}` as PolicyVersion;
    report.policy = { identifier, version, current: false };
    if (version === '4.4') {
      report.notes.push('policy: a v4.4 identifier other than the official URL; its hash is not checked');
      return [name, true, `v4.4 policy under another identifier on Hacienda's site: ${identifier}`];
    }
    report.notes.push(`policy: v${version} identifier (older than v4.4); Hacienda accepts it, its hash is not checked`);
    return [name, true, `v${version} policy identifier ${identifier} (older than v4.4, accepted)`];
  }
  report.policy = { identifier, current: false };
  const problems = [`policy identifier is ${JSON.stringify(identifier)}, expected the v4.4 resolution URL`];
  if (method !== POLICY_V44_DIGEST_METHOD) problems.push(`policy hash method is ${JSON.stringify(method)}, expected sha256`);
  if (value !== POLICY_V44_DIGEST) problems.push(`policy hash is ${JSON.stringify(value)}, expected ${POLICY_V44_DIGEST}`);
  return [name, false, problems.join('; ')];
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

/** Removes every comment under `node`, except under `keep`. */
function removeComments(node: Node, keep?: Node): void {
  for (let c = node.firstChild; c; ) {
    const next = c.nextSibling;
    if (c.nodeType === 8) node.removeChild(c);
    else if (c.nodeType === 1 && c !== keep) removeComments(c, keep);
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
