/**
 * The signing certificate: read from ds:KeyInfo (parsed once per distinct certificate), and bound to the
 * signature by XAdES SigningCertificate (CertDigest and IssuerSerial).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { certificateInfo, type CertificateInfo } from './cert.js';
import { NS_DS, NS_XADES } from './policy.js';
import { HASHES, strictBase64 } from './references.js';
import type { VerifyReport } from './verify-report.js';
import { childElements, firstChild, firstDescendant } from './xml-dom.js';

export interface ReadCertificate {
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

export function readCertificate(certText: string): ReadCertificate {
  const hit = certCache.get(certText);
  if (hit) return hit;
  const der = strictBase64(certText) ?? Buffer.alloc(0);
  const cert: ReadCertificate = { der, x509: new X509Certificate(der), info: certificateInfo(der) };
  if (certCache.size >= CERT_CACHE_SIZE) certCache.delete(certCache.keys().next().value!);
  certCache.set(certText, cert);
  return cert;
}

/** The CertDigest values of the signature's SigningCertificate (hash name undefined when unsupported). */
export function signedPropsCertDigests(signature: Element): Array<{ hash: string | undefined; value: string }> {
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

export function signingCertificateCheck(signedProps: Element, certDer: Buffer, certInfo: CertificateInfo, report: VerifyReport): [string, boolean, string] {
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
