/**
 * Test and sandbox-demo certificates shaped like the ones Costa Rica's signing CAs issue
 * (C=CR, O=PERSONA JURIDICA/PERSONA FISICA, OU=CPJ/CPF, serialNumber=CPJ-3-101-123456), packed
 * in a PKCS#12 the way `loadP12` expects real ones, issued by fecr's fixed test root (./test-ca.ts, trusted in env
 * local only). Development/test utility: it generates key material (random by nature) and, without explicit dates,
 * reads the clock through `now`.
 */
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { TEST_ROOT_CERTIFICATE_PEM, TEST_ROOT_PRIVATE_KEY_PEM } from './test-ca.js';

export type TestIdType = '01' | '02' | '03' | '04';

export interface TestP12Options {
  /** Identification digits: 01 → 9, 02 → 10, 03 (DIMEX) → 11–12, 04 (NITE) → 10. */
  id: string;
  type: TestIdType;
  pin: string;
  /** Common name; defaults to a test name per type. */
  name?: string;
  /** Defaults to one day before `now`. */
  notBefore?: Date;
  /** Defaults to two years after notBefore. */
  notAfter?: Date;
  /** PKCS#12 encryption: `3des` (legacy PKCS#12 PBE, SHA-1 MAC) or `aes256` (PBES2/PBKDF2). Default `3des`. */
  algorithm?: '3des' | 'aes256';
  /** Self-signed leaf instead of one issued by fecr's test root CA (./test-ca.ts). Default false. */
  selfSigned?: boolean;
  /** Issued by this CA (e.g. one of createTestCa) instead of the test root; its certificate goes in the .p12's chain. */
  issuer?: TestCaMaterial;
  /** Clock used for default dates; defaults to the current time. */
  now?: Date;
}

const TYPE_SHAPE: Record<TestIdType, { o: string; ou: string; digits: RegExp; defaultName: string }> = {
  '01': { o: 'PERSONA FISICA', ou: 'CPF', digits: /^[1-9]\d{8}$/, defaultName: 'PERSONA FISICA DE PRUEBA' },
  '02': { o: 'PERSONA JURIDICA', ou: 'CPJ', digits: /^\d{10}$/, defaultName: 'EMPRESA DE PRUEBA SOCIEDAD ANONIMA' },
  '03': { o: 'PERSONA FISICA', ou: 'DIMEX', digits: /^[1-9]\d{10,11}$/, defaultName: 'EXTRANJERO RESIDENTE DE PRUEBA' },
  '04': { o: 'PERSONA FISICA', ou: 'NITE', digits: /^\d{10}$/, defaultName: 'PERSONA NITE DE PRUEBA' },
};

/**
 * The subject serialNumber for an identification, in the central bank's formats:
 * 01 `114560789` → `CPF-01-1456-0789`; 02 `3101123456` → `CPJ-3-101-123456`;
 * 03 → `DIMEX-<digits>`; 04 → `NITE-<digits>`.
 */
export function subjectSerialNumberFor(type: TestIdType, id: string): string {
  const shape = TYPE_SHAPE[type];
  if (!shape.digits.test(id)) throw new Error(`invalid identification ${JSON.stringify(id)} for type ${type}`);
  switch (type) {
    case '01':
      return `CPF-0${id.slice(0, 1)}-${id.slice(1, 5)}-${id.slice(5)}`;
    case '02':
      return `CPJ-${id.slice(0, 1)}-${id.slice(1, 4)}-${id.slice(4)}`;
    case '03':
      return `DIMEX-${id}`;
    case '04':
      return `NITE-${id}`;
  }
}

interface TestCa {
  key: forge.pki.rsa.PrivateKey;
  cert: forge.pki.Certificate;
}
let cachedCa: TestCa | undefined;

/** Builds a test PKCS#12 (RSA-2048 key, SHA-256 certificate). */
export function createTestP12(opts: TestP12Options): Buffer {
  const shape = TYPE_SHAPE[opts.type];
  const serialNumber = subjectSerialNumberFor(opts.type, opts.id);
  const name = opts.name ?? shape.defaultName;
  const now = opts.now ?? new Date();
  const notBefore = opts.notBefore ?? new Date(now.getTime() - 86_400_000);
  const notAfter = opts.notAfter ?? new Date(notBefore.getTime() + 2 * 365 * 86_400_000);

  const { forgeKey, publicKey } = newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = positiveSerial(forge.pki.publicKeyToPem(publicKey));
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject([
    { type: '2.5.4.5', value: serialNumber, valueTagClass: forge.asn1.Type.PRINTABLESTRING } as unknown as forge.pki.CertificateField,
    { shortName: 'C', value: 'CR' },
    { shortName: 'O', value: shape.o },
    { shortName: 'OU', value: shape.ou },
    { shortName: 'CN', value: name, valueTagClass: forge.asn1.Type.UTF8 } as unknown as forge.pki.CertificateField,
  ]);
  const ca = opts.selfSigned ? undefined : opts.issuer ? fromMaterial(opts.issuer) : testCa();
  cert.setIssuer(ca ? ca.cert.subject.attributes : cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', critical: true, digitalSignature: true, nonRepudiation: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(ca ? ca.key : forgeKey, forge.md.sha256.create());

  const chain = ca ? [cert, ca.cert] : [cert];
  const p12 = forge.pkcs12.toPkcs12Asn1(forgeKey, chain, opts.pin, {
    algorithm: opts.algorithm ?? '3des',
    friendlyName: name,
    generateLocalKeyId: true,
  });
  return Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary');
}

/** A test CA's certificate and private key (PEM). */
export interface TestCaMaterial {
  certificatePem: string;
  privateKeyPem: string;
}

export interface TestCaOptions {
  name: string;
  /** Issued by this CA; default the test root. */
  issuer?: TestCaMaterial;
  /** basicConstraints cA (default true): false makes a certificate that only looks like a CA. */
  ca?: boolean;
  notBefore?: Date;
  notAfter?: Date;
  /** Self-signed: a root of its own (an anchor nobody trusts). */
  selfSigned?: boolean;
}

/** A test CA certificate (intermediate by default, under the test root), for chains that should or should not verify. */
export function createTestCa(opts: TestCaOptions): TestCaMaterial {
  const { forgeKey, publicKey } = newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = positiveSerial(forge.pki.publicKeyToPem(publicKey));
  cert.validity.notBefore = opts.notBefore ?? new Date(Date.UTC(2020, 0, 1));
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.UTC(2090, 0, 1));
  cert.setSubject([
    { shortName: 'C', value: 'CR' },
    { shortName: 'O', value: 'PRUEBAS FECR' },
    { shortName: 'CN', value: opts.name, valueTagClass: forge.asn1.Type.UTF8 } as unknown as forge.pki.CertificateField,
  ]);
  const issuer = opts.selfSigned ? undefined : opts.issuer ? fromMaterial(opts.issuer) : testCa();
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : cert.subject.attributes);
  const ca = opts.ca ?? true;
  cert.setExtensions([
    { name: 'basicConstraints', critical: true, cA: ca },
    { name: 'keyUsage', critical: true, ...(ca ? { keyCertSign: true, cRLSign: true } : { digitalSignature: true, nonRepudiation: true }) },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(issuer ? issuer.key : forgeKey, forge.md.sha256.create());
  return { certificatePem: forge.pki.certificateToPem(cert), privateKeyPem: forge.pki.privateKeyToPem(forgeKey) };
}

function fromMaterial(m: TestCaMaterial): TestCa {
  return { key: forge.pki.privateKeyFromPem(m.privateKeyPem) as forge.pki.rsa.PrivateKey, cert: forge.pki.certificateFromPem(m.certificatePem) };
}

/** The test CA's certificate (PEM), e.g. to hand to a verifier as trusted: fecr's fixed test root (./test-ca.ts). */
export function testCaCertificatePem(): string {
  return TEST_ROOT_CERTIFICATE_PEM;
}

/** The fixed test root of ./test-ca.ts, read once: every test certificate of every process chains to it. */
function testCa(): TestCa {
  cachedCa ??= {
    key: forge.pki.privateKeyFromPem(TEST_ROOT_PRIVATE_KEY_PEM) as forge.pki.rsa.PrivateKey,
    cert: forge.pki.certificateFromPem(TEST_ROOT_CERTIFICATE_PEM),
  };
  return cachedCa;
}

/** RSA-2048 generated natively (forge's pure-JS keygen takes seconds), converted to forge objects. */
function newRsaKey(): { forgeKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 0x10001 });
  const forgeKey = forge.pki.privateKeyFromPem(pkcs1Pem(privateKey)) as forge.pki.rsa.PrivateKey;
  return { forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

function pkcs1Pem(key: KeyObject): string {
  return key.export({ type: 'pkcs1', format: 'pem' }).toString();
}

/** A positive 16-byte serial derived from the public key (first byte 0x01–0x7f). */
function positiveSerial(seed: string): string {
  const h = createHash('sha256').update(seed).digest();
  h[0] = (h[0]! & 0x7f) | 0x01;
  return h.subarray(0, 16).toString('hex');
}
