/**
 * Loads a signing key and certificate from a PKCS#12 (.p12) file: legacy ones (PKCS#12 PBE with 3DES/RC2,
 * SHA-1 MAC) and OpenSSL 3 defaults (PBES2/PBKDF2 with AES-256-CBC, SHA-256 MAC) alike. The key becomes a
 * native Node KeyObject so signing runs in OpenSSL, not in JavaScript.
 */
import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import type Forge from 'node-forge';
import { certificateInfo, type CertificateInfo } from './cert.js';

export type { CertificateInfo, TipoIdentificacionFirmante } from './cert.js';

export type SigningErrorCode =
  | 'WRONG_PIN'
  | 'NO_PRIVATE_KEY'
  | 'NO_CERTIFICATE'
  | 'CERT_EXPIRED'
  | 'CERT_NOT_YET_VALID'
  | 'BAD_P12';

export class SigningError extends Error {
  readonly code: SigningErrorCode;
  constructor(code: SigningErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SigningError';
    this.code = code;
  }
}

export interface SigningCredentials {
  /** RSA private key (native). */
  privateKey: KeyObject;
  /** The signing certificate exactly as stored in the .p12. */
  certificateDer: Buffer;
  /** Base64 of certificateDer (the `ds:X509Certificate` content). */
  certificateBase64: string;
  certificate: CertificateInfo;
  /** Base64 of the RSA modulus and public exponent (the `ds:RSAKeyValue` content). */
  rsaKeyValue: { modulus: string; exponent: string };
  /** The other certificates in the .p12 (usually the issuing CA chain), DER. */
  chain: Buffer[];
}

export type CertificateValidity = 'valid' | 'expired' | 'not-yet-valid';

export interface P12Description {
  certificate: CertificateInfo;
  /** Validity of the certificate at `now`. */
  validity: CertificateValidity;
  hasPrivateKey: boolean;
  chain: CertificateInfo[];
}

/**
 * Opens a .p12 with its PIN and returns credentials ready for signing at `now`.
 * Throws SigningError: BAD_P12 (not a readable PKCS#12 or unsupported key), WRONG_PIN, NO_PRIVATE_KEY,
 * NO_CERTIFICATE (none, or none matching the key), CERT_EXPIRED, CERT_NOT_YET_VALID.
 */
export function loadP12(p12: Buffer, pin: string, now: Date): SigningCredentials {
  const opened = openP12(p12, pin);
  if (!opened.privateKey) {
    throw new SigningError('NO_PRIVATE_KEY', 'The .p12 file holds no private key, so it cannot sign.');
  }
  return validAt(credentials(opened.privateKey, opened.leaf, opened.chain), now);
}

/** The credentials when their certificate is valid at `now`; SigningError CERT_EXPIRED / CERT_NOT_YET_VALID otherwise. */
function validAt(creds: SigningCredentials, now: Date): SigningCredentials {
  const validity = validityAt(creds.certificate, now);
  if (validity === 'expired') {
    throw new SigningError('CERT_EXPIRED', `The signing certificate expired on ${creds.certificate.notAfter.toISOString()}; request a new one.`);
  }
  if (validity === 'not-yet-valid') {
    throw new SigningError('CERT_NOT_YET_VALID', `The signing certificate is not valid until ${creds.certificate.notBefore.toISOString()}.`);
  }
  return creds;
}

/** Describes a .p12 for display; an expired or not-yet-valid certificate is reported, not rejected. */
export function describeP12(p12: Buffer, pin: string, now: Date): P12Description {
  const opened = openP12(p12, pin);
  const certificate = certificateInfo(opened.leaf);
  return {
    certificate,
    validity: validityAt(certificate, now),
    hasPrivateKey: opened.privateKey !== undefined,
    chain: opened.chain.map((der) => certificateInfo(der)),
  };
}

/** Whether a certificate is valid at an instant (bounds inclusive, as RFC 5280 defines them). */
export function validityAt(cert: Pick<CertificateInfo, 'notBefore' | 'notAfter'>, at: Date): CertificateValidity {
  const t = at.getTime();
  if (t < cert.notBefore.getTime()) return 'not-yet-valid';
  if (t > cert.notAfter.getTime()) return 'expired';
  return 'valid';
}

/** Builds credentials from a key and certificate already in hand (PEM/DER), without validity checks. */
export function credentials(privateKey: KeyObject, certificateDer: Buffer, chain: Buffer[] = []): SigningCredentials {
  if (privateKey.asymmetricKeyType !== 'rsa') {
    throw new SigningError('BAD_P12', `Unsupported key type ${privateKey.asymmetricKeyType ?? '?'}: signing needs an RSA key.`);
  }
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  if (typeof jwk.n !== 'string' || typeof jwk.e !== 'string') throw new SigningError('BAD_P12', 'Unreadable RSA key.');
  return {
    privateKey,
    certificateDer,
    certificateBase64: certificateDer.toString('base64'),
    certificate: certificateInfo(certificateDer),
    rsaKeyValue: {
      modulus: Buffer.from(jwk.n, 'base64url').toString('base64'),
      exponent: Buffer.from(jwk.e, 'base64url').toString('base64'),
    },
    chain,
  };
}

/** The key and certificates of a .p12 once opened, as base64 DER: PKCS#8 key, signing certificate, chain. */
export interface SigningKeyPair {
  keyPkcs8: string;
  certificate: string;
  chain: string[];
}

/** What to keep of opened credentials so that signing later needs no .p12 decoding (keep it sealed). */
export function exportKeyPair(creds: SigningCredentials): SigningKeyPair {
  return {
    keyPkcs8: (creds.privateKey.export({ format: 'der', type: 'pkcs8' }) as Buffer).toString('base64'),
    certificate: creds.certificateBase64,
    chain: creds.chain.map((c) => c.toString('base64')),
  };
}

/**
 * Credentials from an exported key pair, checked as loadP12 checks them: the key is RSA and matches the
 * certificate, and the certificate is valid at `now` (SigningError otherwise).
 */
export function credentialsFromKeyPair(pair: SigningKeyPair, now: Date): SigningCredentials {
  let privateKey: KeyObject;
  let certificateDer: Buffer;
  try {
    privateKey = createPrivateKey({ key: Buffer.from(pair.keyPkcs8, 'base64'), format: 'der', type: 'pkcs8' });
    certificateDer = Buffer.from(pair.certificate, 'base64');
    if (!new X509Certificate(certificateDer).checkPrivateKey(privateKey)) throw new Error('the key does not match the certificate');
  } catch (e) {
    if (e instanceof SigningError) throw e;
    throw new SigningError('BAD_P12', `The stored signing key cannot be read: ${message(e)}`, { cause: e });
  }
  return validAt(credentials(privateKey, certificateDer, pair.chain.map((c) => Buffer.from(c, 'base64'))), now);
}

interface OpenedP12 {
  privateKey?: KeyObject;
  leaf: Buffer;
  chain: Buffer[];
}

/**
 * node-forge (1.6 MB of JavaScript, ~40 ms to load) is needed only to open a .p12: at registration, and for
 * issuers saved before their key was sealed decoded (see SigningKeyPair). It is loaded on first use.
 */
let forgeModule: typeof Forge | undefined;
function forgeLib(): typeof Forge {
  forgeModule ??= createRequire(import.meta.url)('node-forge') as typeof Forge;
  return forgeModule;
}

function openP12(p12: Buffer, pin: string): OpenedP12 {
  const forge = forgeLib();
  let pfxAsn1: Forge.asn1.Asn1;
  try {
    pfxAsn1 = forge.asn1.fromDer(forge.util.createBuffer(p12.toString('binary')), false);
  } catch (e) {
    throw new SigningError('BAD_P12', 'The file is not a PKCS#12 (.p12) certificate store.', { cause: e });
  }
  const hasMac = Array.isArray(pfxAsn1.value) && pfxAsn1.value.length >= 3;

  // forge keeps only its own re-encoding of each certificate; record the exact DER it decodes instead.
  const certDer = new WeakMap<object, Buffer>();
  const pki = forge.pki as unknown as { certificateFromAsn1: (obj: Forge.asn1.Asn1, computeHash?: boolean) => object };
  const original = pki.certificateFromAsn1;
  const parse = (pfx: Forge.asn1.Asn1, password: string): Forge.pkcs12.Pkcs12Pfx => {
    try {
      pki.certificateFromAsn1 = (obj, computeHash) => {
        const cert = original(obj, computeHash);
        certDer.set(cert, Buffer.from(forge.asn1.toDer(obj).getBytes(), 'binary'));
        return cert;
      };
      return forge.pkcs12.pkcs12FromAsn1(pfx, false, password);
    } finally {
      pki.certificateFromAsn1 = original;
    }
  };
  const isMacError = (e: unknown) => /MAC could not be verified|invalid password/i.test(message(e));

  let parsed: Forge.pkcs12.Pkcs12Pfx;
  try {
    parsed = parse(pfxAsn1, pin);
  } catch (e) {
    // forge checks the MAC (password as BMPString, right for any PIN) before decrypting, but feeds PBES2
    // (AES) decryption the PIN's UTF-16 code units where OpenSSL uses its UTF-8 bytes. For a non-ASCII
    // PIN whose MAC was verified, decrypt again with the UTF-8 bytes (MAC already checked, so dropped).
    let retried: Forge.pkcs12.Pkcs12Pfx | undefined;
    if (!isMacError(e) && /[^\x00-\x7f]/.test(pin) && Array.isArray(pfxAsn1.value)) {
      const withoutMac = forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SEQUENCE, true, pfxAsn1.value.slice(0, 2));
      try {
        retried = parse(withoutMac, forge.util.encodeUtf8(pin));
      } catch {
        retried = undefined;
      }
    }
    if (!retried) {
      if (isMacError(e) || /wrong password/i.test(message(e)) || (!hasMac && looksLikePfx(pfxAsn1))) {
        throw new SigningError('WRONG_PIN', 'Wrong PIN for the .p12 file.', { cause: e });
      }
      throw new SigningError('BAD_P12', `The .p12 file cannot be read: ${message(e)}`, { cause: e });
    }
    parsed = retried;
  }

  const keys: KeyObject[] = [];
  const certs: Buffer[] = [];
  for (const safe of parsed.safeContents) {
    for (const bag of safe.safeBags) {
      if (bag.type === forge.pki.oids.pkcs8ShroudedKeyBag || bag.type === forge.pki.oids.keyBag) {
        keys.push(toKeyObject(bag));
      } else if (bag.type === forge.pki.oids.certBag) {
        const der = bag.cert ? certDer.get(bag.cert) : bag.asn1 ? Buffer.from(forge.asn1.toDer(bag.asn1).getBytes(), 'binary') : undefined;
        if (der) certs.push(der);
      }
    }
  }
  if (certs.length === 0) {
    throw new SigningError('NO_CERTIFICATE', 'The .p12 file holds no certificate.');
  }
  if (keys.length === 0) {
    // Describe the certificate anyway (the first one is the end-entity certificate by convention).
    return { leaf: certs[0]!, chain: certs.slice(1) };
  }
  for (const key of keys) {
    const leaf = certs.find((der) => {
      try {
        return new X509Certificate(der).checkPrivateKey(key);
      } catch {
        return false;
      }
    });
    if (leaf) return { privateKey: key, leaf, chain: certs.filter((c) => c !== leaf) };
  }
  throw new SigningError('NO_CERTIFICATE', 'The .p12 file holds no certificate for its private key.');
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function looksLikePfx(a: Forge.asn1.Asn1): boolean {
  const forge = forgeLib();
  return Array.isArray(a.value) && a.value.length >= 2 && a.type === forge.asn1.Type.SEQUENCE;
}

function toKeyObject(bag: Forge.pkcs12.Bag): KeyObject {
  const forge = forgeLib();
  try {
    if (bag.key) return createPrivateKey(forge.pki.privateKeyToPem(bag.key));
    if (bag.asn1) {
      // Not an RSA key forge understands (e.g. EC): let OpenSSL read the PrivateKeyInfo.
      const der = Buffer.from(forge.asn1.toDer(bag.asn1).getBytes(), 'binary');
      return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    }
  } catch (e) {
    throw new SigningError('BAD_P12', 'The private key in the .p12 file cannot be read.', { cause: e });
  }
  throw new SigningError('NO_PRIVATE_KEY', 'The .p12 key bag is empty.');
}
