/**
 * Does the signing certificate chain to a CA we trust (issue 25.2)? A signature that verifies proves only that the
 * holder of the certificate's key signed: anyone can make a self-signed certificate carrying a supplier's cédula. The
 * certificate must have been issued, through CA certificates, by a trust anchor: in sandbox and production the roots
 * of Costa Rica's Firma Digital (CA RAIZ NACIONAL - COSTA RICA v2, BCCR/SINPE) and of Hacienda's "llave
 * criptográfica" (CA RAIZ MINISTERIO DE HACIENDA), shipped in schemas/trust/ and extended by the operator; in env
 * local also fecr's test root (./test-ca.ts). Which anchors apply is the service's business
 * (service/recibidos/trust.ts): here they are data, and nothing is read from disk.
 *
 * A trust store holds anchors (self-signed CA certificates, the end of every chain) and intermediates (CA
 * certificates that only help to build a chain: trusted through an anchor, never by themselves). The certificates
 * in the signature's KeyInfo help the same way. Each CA certificate of the chain, the anchor included, must be a
 * CA (basicConstraints cA), allowed to sign certificates (keyUsage keyCertSign, when it says), within its
 * pathLenConstraint, valid at every instant asked (now and the signing time), and its signature over the
 * certificate below it must verify. The signing certificate itself must be an end entity (not a CA) allowed to
 * sign (keyUsage digitalSignature or nonRepudiation, when it says); its own validity is checked by verify.ts.
 * Revocation (CRL, OCSP) is not checked.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { certificateExtensions, type CertificateExtensions } from './cert-extensions.js';

/** A CA certificate of a trust store: plain data (a store crosses to worker threads as it is). */
export interface TrustedCertificate {
  der: Uint8Array;
  /** SHA-256 of the DER, hex. */
  fingerprint: string;
  /** Where it came from (a file name, `fecr test root`). */
  source: string;
}

export interface TrustStore {
  /** Self-signed CA certificates: the end of every chain. */
  anchors: readonly TrustedCertificate[];
  /** Other CA certificates: links of a chain, trusted only through an anchor. */
  intermediates: readonly TrustedCertificate[];
}

/** A certificate parsed: node:crypto's view and the extensions (cached by fingerprint, see `parsed`). */
interface Parsed {
  der: Buffer;
  fingerprint: string;
  x509: X509Certificate;
  ext: CertificateExtensions;
}

export interface CertificateInput {
  der: Uint8Array;
  source: string;
}

export const EMPTY_TRUST_STORE: TrustStore = { anchors: [], intermediates: [] };

/** The certificates of PEM text (any number of CERTIFICATE blocks) or of one DER certificate. */
export function certificatesIn(bytes: Buffer): Buffer[] {
  const text = bytes.toString('latin1');
  if (text.includes('-----BEGIN')) {
    return [...text.matchAll(/-----BEGIN (?:X509 |TRUSTED )?CERTIFICATE-----([\s\S]*?)-----END (?:X509 |TRUSTED )?CERTIFICATE-----/g)].map((m) =>
      Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'),
    );
  }
  return bytes.length > 0 && bytes[0] === 0x30 ? [bytes] : [];
}

/**
 * Sorts certificates into anchors and intermediates (duplicates once). A certificate that is not a CA, or cannot
 * be read, is left out and said in `problems`.
 */
export function buildTrustStore(inputs: readonly CertificateInput[]): { store: TrustStore; problems: string[] } {
  const anchors: TrustedCertificate[] = [];
  const intermediates: TrustedCertificate[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const input of inputs) {
    let c: Parsed;
    try {
      c = parsed(input.der);
    } catch (e) {
      problems.push(`${input.source}: not a readable X.509 certificate (${e instanceof Error ? e.message : String(e)})`);
      continue;
    }
    if (seen.has(c.fingerprint)) continue;
    seen.add(c.fingerprint);
    if (!c.ext.ca) {
      problems.push(`${input.source}: ${nameOf(c.x509)} is not a CA certificate (basicConstraints): not trusted`);
      continue;
    }
    (isSelfSigned(c.x509) ? anchors : intermediates).push({ der: c.der, fingerprint: c.fingerprint, source: input.source });
  }
  return { store: { anchors, intermediates }, problems };
}

/** Two stores as one (the shipped anchors and the operator's). */
export function mergeTrustStores(...stores: TrustStore[]): TrustStore {
  const pick = (list: TrustedCertificate[]) => [...new Map(list.map((c) => [c.fingerprint, c])).values()];
  return { anchors: pick(stores.flatMap((s) => [...s.anchors])), intermediates: pick(stores.flatMap((s) => [...s.intermediates])) };
}

export interface ChainResult {
  ok: boolean;
  detail: string;
  /** The chain found, signing certificate first, by common name (when ok). */
  path?: string[];
  /** The trust anchor the chain ends at (when ok): its common name and where it came from (a file, `fecr test root`). */
  anchor?: { name: string; source: string; fingerprint: string };
}

const MAX_DEPTH = 8;

/**
 * Whether `leafDer` chains to an anchor of `store`, through the store's intermediates and `extras` (the other
 * certificates of the signature's KeyInfo), every CA certificate valid at each of `times`.
 */
export function verifyChain(leafDer: Uint8Array, extras: readonly Uint8Array[], store: TrustStore, times: readonly Date[]): ChainResult {
  let leaf: Parsed;
  try {
    leaf = parsed(leafDer);
  } catch (e) {
    return { ok: false, detail: `unreadable signing certificate: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (leaf.ext.ca) return { ok: false, detail: `the signing certificate ${nameOf(leaf.x509)} is a CA certificate, not an end entity's` };
  const ku = leaf.ext.keyUsage;
  if (ku && !ku.has('digitalSignature') && !ku.has('nonRepudiation')) {
    return { ok: false, detail: `the signing certificate ${nameOf(leaf.x509)} may not sign (keyUsage without digitalSignature or nonRepudiation)` };
  }
  const anchors = new Set(store.anchors.map((a) => parsed(a.der).fingerprint));
  const pool = new Map<string, Parsed>();
  for (const der of [...store.anchors.map((c) => c.der), ...store.intermediates.map((c) => c.der), ...extras]) {
    try {
      const c = parsed(der);
      if (c.fingerprint !== leaf.fingerprint && !pool.has(c.fingerprint)) pool.set(c.fingerprint, c);
    } catch {
      // an unreadable certificate helps no chain
    }
  }
  let best: { depth: number; reason: string } | undefined;
  const fail = (depth: number, reason: string) => {
    if (!best || depth > best.depth) best = { depth, reason };
  };

  const extend = (path: Parsed[]): Parsed[] | undefined => {
    const cur = path[path.length - 1]!;
    const issuers = [...pool.values()].filter((c) => !path.some((p) => p.fingerprint === c.fingerprint) && issued(cur.x509, c.x509));
    if (issuers.length === 0) {
      fail(path.length, endReason(path));
      return undefined;
    }
    for (const ca of issuers) {
      const problem = caProblem(ca, path.length - 1, times);
      if (problem) {
        fail(path.length + 1, `${chainText([...path, ca])}: ${problem}`);
        continue;
      }
      const next = [...path, ca];
      if (anchors.has(ca.fingerprint)) return next;
      if (next.length >= MAX_DEPTH) {
        fail(next.length, `${chainText(next)}: longer than ${MAX_DEPTH} certificates`);
        continue;
      }
      const found = extend(next);
      if (found) return found;
    }
    return undefined;
  };

  const found = extend([leaf]);
  if (found) {
    const names = found.map((c) => commonName(c.x509));
    const top = found[found.length - 1]!;
    const source = store.anchors.find((a) => parsed(a.der).fingerprint === top.fingerprint)?.source ?? '';
    return { ok: true, detail: `issued by a trusted CA: ${names.join(' → ')}`, path: names, anchor: { name: commonName(top.x509), source, fingerprint: top.fingerprint } };
  }
  const trusted = store.anchors.map((a) => commonName(parsed(a.der).x509)).join(', ') || 'none';
  return { ok: false, detail: `not issued by a trusted CA: ${best?.reason ?? 'no chain'} (trust anchors: ${trusted})` };
}

/**
 * Parsed certificates by fingerprint: a verifier sees the same few CA certificates for every document (on a worker
 * thread the store arrives as a copy each time); parsing one costs more than the chain check.
 */
const cache = new Map<string, Parsed>();
const CACHE_SIZE = 512;

function parsed(bytes: Uint8Array): Parsed {
  const der = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fingerprint = createHash('sha256').update(der).digest('hex');
  const hit = cache.get(fingerprint);
  if (hit) return hit;
  const p: Parsed = { der, fingerprint, x509: new X509Certificate(der), ext: certificateExtensions(der) };
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(fingerprint, p);
  return p;
}

/**
 * `child` names `parent` as its issuer and parent's key signed it. Whether parent may issue certificates at all
 * (basicConstraints, keyUsage) is caProblem's, so that a refusal names it.
 */
function issued(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.issuer === parent.subject && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

function isSelfSigned(x: X509Certificate): boolean {
  return issued(x, x);
}

/** Why a CA certificate cannot be the issuer at this place of the chain (`intermediatesBelow`: CA certificates under it). */
function caProblem(ca: Parsed, intermediatesBelow: number, times: readonly Date[]): string | undefined {
  const name = nameOf(ca.x509);
  if (!ca.ext.ca) return `${name} is not a CA certificate (basicConstraints), it may not issue certificates`;
  if (ca.ext.keyUsage && !ca.ext.keyUsage.has('keyCertSign')) return `${name} may not sign certificates (keyUsage without keyCertSign)`;
  if (ca.ext.pathLen !== undefined && intermediatesBelow > ca.ext.pathLen) return `${name} allows ${ca.ext.pathLen} CA certificate(s) below it (pathLenConstraint), the chain has ${intermediatesBelow}`;
  const from = new Date(ca.x509.validFrom);
  const to = new Date(ca.x509.validTo);
  for (const t of times) {
    if (t < from) return `${name} is not valid yet at ${t.toISOString()} (valid ${from.toISOString()} – ${to.toISOString()})`;
    if (t > to) return `${name} expired at ${to.toISOString()} (valid ${from.toISOString()} – ${to.toISOString()}; checked at ${t.toISOString()})`;
  }
  return undefined;
}

/** Why the chain stops at its last certificate. */
function endReason(path: Parsed[]): string {
  const last = path[path.length - 1]!;
  if (path.length === 1 && isSelfSigned(last.x509)) return `the signing certificate ${nameOf(last.x509)} is self-signed`;
  if (isSelfSigned(last.x509)) return `${chainText(path)}: ${nameOf(last.x509)} is a self-signed CA that is not a trust anchor`;
  const issuer = dnText(last.x509.issuer);
  return path.length === 1
    ? `its issuer ${issuer} is not a trusted CA, and no certificate of it is known (in KeyInfo or the trust store)`
    : `${chainText(path)}: the issuer of ${commonName(last.x509)}, ${issuer}, is not a trusted CA, and no certificate of it is known`;
}

function chainText(path: Parsed[]): string {
  return path.map((c) => commonName(c.x509)).join(' → ');
}

/** The subject's CN (else the whole subject), for messages. */
export function commonName(x: X509Certificate): string {
  const cn = x.subject.split('\n').find((l) => l.startsWith('CN='));
  return cn ? cn.slice(3) : dnText(x.subject);
}

function nameOf(x: X509Certificate): string {
  return `"${commonName(x)}"`;
}

function dnText(dn: string): string {
  return dn.split('\n').reverse().join(', ');
}
