/**
 * The emulator's own key: RSA-2048, generated at start (or loaded from the persistent store), used to sign
 * the IdP's JWTs (RS256) and the MensajeHacienda answers. The certificate says plainly that it belongs to the
 * emulator, and is issued by fecr's test root (core/sign/test-ca.ts), so that `fecr archive verify` and `fecr verify`
 * can tell the emulator's answer from a forged one: in env local only, where the test root is a trust anchor
 * (service/recibidos/trust.ts SEAL_TRUST; issue 37.3). A stored certificate of before (self-signed) is issued again
 * for the same key.
 */
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { createRequire } from 'node:module';
import type Forge from 'node-forge';
import { TEST_ROOT_CERTIFICATE_PEM, TEST_ROOT_PRIVATE_KEY_PEM } from '../core/sign/test-ca.js';
import type { EmulatorStore } from './store.js';

export interface EmulatorKeys {
  privateKeyPem: string;
  publicKeyPem: string;
  certificatePem: string;
  /** JWT key id. */
  kid: string;
}

export const EMULATOR_SIGNER_CN = 'MINISTERIO DE HACIENDA (SELLO ELECTRONICO) (EMULADOR FECR)';

/** Once per emulator data file: node-forge (~40 ms to load) is required only then. */
function makeCertificate(privateKeyPem: string, publicKeyPem: string, now: number): string {
  const forge = createRequire(import.meta.url)('node-forge') as typeof Forge;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKeyPem);
  cert.serialNumber = '01' + randomBytes(8).toString('hex');
  cert.validity.notBefore = new Date(now - 24 * 3600 * 1000);
  cert.validity.notAfter = new Date(now + 10 * 365 * 24 * 3600 * 1000);
  const attrs = [
    { name: 'commonName', value: EMULATOR_SIGNER_CN },
    { name: 'organizationName', value: 'MINISTERIO DE HACIENDA' },
    { name: 'organizationalUnitName', value: 'EMULADOR LOCAL - SIN VALIDEZ' },
    { name: 'countryName', value: 'CR' },
    { type: '2.5.4.5', value: 'CPJ-2-100-042005' },
  ];
  cert.setSubject(attrs);
  cert.setIssuer(forge.pki.certificateFromPem(TEST_ROOT_CERTIFICATE_PEM).subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, nonRepudiation: true },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(TEST_ROOT_PRIVATE_KEY_PEM), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/** Whether a stored certificate is issued by the test root (else it is made again, for the same key). */
function issuedByTestRoot(certificatePem: string): boolean {
  try {
    const root = new X509Certificate(TEST_ROOT_CERTIFICATE_PEM);
    const cert = new X509Certificate(certificatePem);
    return cert.issuer === root.subject && cert.verify(root.publicKey);
  } catch {
    return false;
  }
}

/** Loads the key from the store's metadata or creates (and stores) a new one. */
export function loadOrCreateKeys(store: EmulatorStore, now: number): EmulatorKeys {
  const saved = store.getMeta('emulator.keys');
  if (saved) {
    try {
      const k = JSON.parse(saved) as EmulatorKeys;
      if (k.privateKeyPem && k.publicKeyPem && k.certificatePem && k.kid) {
        if (issuedByTestRoot(k.certificatePem)) return k;
        const renewed = { ...k, certificatePem: makeCertificate(k.privateKeyPem, k.publicKeyPem, now) };
        store.setMeta('emulator.keys', JSON.stringify(renewed));
        return renewed;
      }
    } catch {
      // fall through and regenerate
    }
  }
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keys: EmulatorKeys = {
    privateKeyPem,
    publicKeyPem,
    certificatePem: makeCertificate(privateKeyPem, publicKeyPem, now),
    kid: randomBytes(16).toString('base64url'),
  };
  store.setMeta('emulator.keys', JSON.stringify(keys));
  return keys;
}
