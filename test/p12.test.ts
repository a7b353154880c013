import { execFileSync } from 'node:child_process';
import { createSign, createVerify, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identificacionFromSerialNumber } from '../src/core/sign/cert.js';
import { credentialsFromKeyPair, describeP12, exportKeyPair, loadP12, SigningError, type SigningErrorCode } from '../src/core/sign/p12.js';
import { createTestP12, subjectSerialNumberFor } from '../src/core/sign/testcert.js';

// A minute ahead: OpenSSL-made certificates start at the second they are created.
const NOW = new Date(Date.now() + 60_000);
const PIN = 'Pin-1234567890';
let dir: string;

function openssl(...args: string[]): string {
  return execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function codeOf(fn: () => unknown): SigningErrorCode | 'no error' | 'other error' {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return e instanceof SigningError ? e.code : 'other error';
  }
}

function signsAndVerifies(creds: ReturnType<typeof loadP12>): boolean {
  const data = Buffer.from('hola ₡');
  const sig = createSign('sha256').update(data).sign(creds.privateKey);
  return createVerify('sha256').update(data).verify(new X509Certificate(creds.certificateDer).publicKey, sig);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fecr-p12-'));
  // An OpenSSL-made key and certificate shaped like a CR legal-entity certificate.
  openssl(
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '30',
    '-subj', '/serialNumber=CPJ-3-101-654321/C=CR/O=PERSONA JURIDICA/OU=CPJ/CN=DISTRIBUIDORA ÑANDÚ S.A.', '-utf8',
  );
  openssl('x509', '-in', 'cert.pem', '-outform', 'DER', '-out', 'cert.der');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadP12 with OpenSSL 3 files', () => {
  it('reads an OpenSSL 3 default p12 (PBES2/PBKDF2, AES-256-CBC, SHA-256 MAC)', () => {
    openssl('pkcs12', '-export', '-inkey', 'key.pem', '-in', 'cert.pem', '-out', 'aes.p12', '-passout', `pass:${PIN}`);
    const p12 = readFileSync(join(dir, 'aes.p12'));
    // Confirm the file really is the modern format.
    const details = execFileSync('sh', ['-c', `openssl pkcs12 -in aes.p12 -info -noout -passin pass:${PIN} 2>&1`], { cwd: dir, encoding: 'utf8' });
    expect(details).toMatch(/PBES2, PBKDF2, AES-256-CBC/);
    expect(details).toMatch(/MAC: sha256/);

    const creds = loadP12(p12, PIN, NOW);
    expect(creds.certificateDer.equals(readFileSync(join(dir, 'cert.der')))).toBe(true);
    expect(creds.certificateBase64).toBe(creds.certificateDer.toString('base64'));
    expect(creds.privateKey.type).toBe('private');
    expect(creds.privateKey.asymmetricKeyType).toBe('rsa');
    expect(signsAndVerifies(creds)).toBe(true);
    expect(creds.certificate.subjectSerialNumber).toBe('CPJ-3-101-654321');
    expect(creds.certificate.identificacion).toBe('3101654321');
    expect(creds.certificate.tipoIdentificacion).toBe('02');
    expect(creds.certificate.subject).toBe(
      'CN=DISTRIBUIDORA ÑANDÚ S.A., OU=CPJ, O=PERSONA JURIDICA, C=CR, SERIALNUMBER=CPJ-3-101-654321',
    );
    const x = new X509Certificate(creds.certificateDer);
    expect(creds.certificate.sha256Fingerprint).toBe(x.fingerprint256);
    expect(creds.certificate.serialNumber).toBe(BigInt('0x' + x.serialNumber).toString(10));
    expect(creds.certificate.notAfter.getTime()).toBe(new Date(x.validTo).getTime());
    expect(creds.certificate.notBefore.getTime()).toBe(new Date(x.validFrom).getTime());
    // RSAKeyValue material matches the certificate's key.
    const jwk = x.publicKey.export({ format: 'jwk' });
    expect(Buffer.from(creds.rsaKeyValue.modulus, 'base64').equals(Buffer.from(jwk.n!, 'base64url'))).toBe(true);
    expect(creds.rsaKeyValue.exponent).toBe('AQAB');
  });

  it('reads a legacy p12 (PBE-SHA1-3DES, SHA-1 MAC)', () => {
    openssl(
      'pkcs12', '-export', '-inkey', 'key.pem', '-in', 'cert.pem', '-out', 'legacy.p12', '-passout', `pass:${PIN}`,
      '-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'PBE-SHA1-3DES', '-macalg', 'sha1',
    );
    const details = execFileSync('sh', ['-c', `openssl pkcs12 -in legacy.p12 -info -noout -passin pass:${PIN} 2>&1`], { cwd: dir, encoding: 'utf8' });
    expect(details).toMatch(/pbeWithSHA1And3-KeyTripleDES-CBC/);
    const creds = loadP12(readFileSync(join(dir, 'legacy.p12')), PIN, NOW);
    expect(creds.certificateDer.equals(readFileSync(join(dir, 'cert.der')))).toBe(true);
    expect(signsAndVerifies(creds)).toBe(true);
  });

  it('reads an OpenSSL 3 p12 made from a forge-made test key and certificate', () => {
    const creds0 = loadP12(createTestP12({ id: '114560789', type: '01', pin: 'x' }), 'x', NOW);
    writeFileSync(join(dir, 'tk.pem'), creds0.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(join(dir, 'tc.pem'), new X509Certificate(creds0.certificateDer).toString());
    openssl('pkcs12', '-export', '-inkey', 'tk.pem', '-in', 'tc.pem', '-out', 'forge-aes.p12', '-passout', `pass:${PIN}`);
    const creds = loadP12(readFileSync(join(dir, 'forge-aes.p12')), PIN, NOW);
    expect(creds.certificateDer.equals(creds0.certificateDer)).toBe(true);
    expect(creds.certificate.identificacion).toBe('114560789');
    expect(signsAndVerifies(creds)).toBe(true);
  });

  it('accepts a non-ASCII PIN in both formats (OpenSSL encodes it as UTF-8 for PBES2)', () => {
    const pin = 'contraseña-Ñ1';
    openssl('pkcs12', '-export', '-inkey', 'key.pem', '-in', 'cert.pem', '-out', 'utf8-aes.p12', '-passout', `pass:${pin}`);
    openssl(
      'pkcs12', '-export', '-inkey', 'key.pem', '-in', 'cert.pem', '-out', 'utf8-legacy.p12', '-passout', `pass:${pin}`,
      '-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'PBE-SHA1-3DES', '-macalg', 'sha1',
    );
    for (const f of ['utf8-aes.p12', 'utf8-legacy.p12']) {
      const p12 = readFileSync(join(dir, f));
      const creds = loadP12(p12, pin, NOW);
      expect(creds.certificateDer.equals(readFileSync(join(dir, 'cert.der')))).toBe(true);
      expect(signsAndVerifies(creds)).toBe(true);
      expect(codeOf(() => loadP12(p12, 'contrasena-Ñ1', NOW))).toBe('WRONG_PIN');
    }
  });

  it('rejects a wrong PIN with WRONG_PIN for both formats', () => {
    for (const f of ['aes.p12', 'legacy.p12']) {
      const p12 = readFileSync(join(dir, f));
      expect(codeOf(() => loadP12(p12, PIN + 'x', NOW))).toBe('WRONG_PIN');
      expect(codeOf(() => describeP12(p12, '', NOW))).toBe('WRONG_PIN');
    }
  });

  it('NO_PRIVATE_KEY for a certificate-only p12 (describeP12 still describes it)', () => {
    openssl('pkcs12', '-export', '-nokeys', '-in', 'cert.pem', '-out', 'nokey.p12', '-passout', `pass:${PIN}`);
    const p12 = readFileSync(join(dir, 'nokey.p12'));
    expect(codeOf(() => loadP12(p12, PIN, NOW))).toBe('NO_PRIVATE_KEY');
    const d = describeP12(p12, PIN, NOW);
    expect(d.hasPrivateKey).toBe(false);
    expect(d.certificate.identificacion).toBe('3101654321');
  });

  it('NO_CERTIFICATE for a key-only p12 and for a key whose certificate is missing', () => {
    openssl('pkcs12', '-export', '-nocerts', '-inkey', 'key.pem', '-out', 'nocert.p12', '-passout', `pass:${PIN}`);
    expect(codeOf(() => loadP12(readFileSync(join(dir, 'nocert.p12')), PIN, NOW))).toBe('NO_CERTIFICATE');

    // Key from one p12, certificate from another: no certificate for the key.
    const a = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(createTestP12({ id: '3101123456', type: '02', pin: 'a' }).toString('binary')), 'a');
    const b = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(createTestP12({ id: '3101123456', type: '02', pin: 'b', selfSigned: true }).toString('binary')), 'b');
    const keyOid = forge.pki.oids.pkcs8ShroudedKeyBag!;
    const certOid = forge.pki.oids.certBag!;
    const key = a.getBags({ bagType: keyOid })[keyOid]![0]!.key!;
    const cert = b.getBags({ bagType: certOid })[certOid]![0]!.cert!;
    const mixed = Buffer.from(forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(key, [cert], 'm', { algorithm: '3des' })).getBytes(), 'binary');
    expect(codeOf(() => loadP12(mixed, 'm', NOW))).toBe('NO_CERTIFICATE');
  });

  it('BAD_P12 for files that are not PKCS#12', () => {
    expect(codeOf(() => loadP12(Buffer.from('not a p12'), PIN, NOW))).toBe('BAD_P12');
    expect(codeOf(() => loadP12(readFileSync(join(dir, 'cert.pem')), PIN, NOW))).toBe('BAD_P12');
    expect(codeOf(() => loadP12(readFileSync(join(dir, 'cert.der')), PIN, NOW))).toBe('BAD_P12');
    expect(codeOf(() => loadP12(Buffer.alloc(0), PIN, NOW))).toBe('BAD_P12');
  });
});

describe('createTestP12', () => {
  it.each(['3des', 'aes256'] as const)('%s: loads, chains to the test CA, OpenSSL reads it', (algorithm) => {
    const p12 = createTestP12({ id: '3101123456', type: '02', pin: PIN, algorithm, name: 'EMPRESA ÑANDÚ S.A.' });
    writeFileSync(join(dir, `t-${algorithm}.p12`), p12);
    const out = execFileSync('sh', ['-c', `openssl pkcs12 -in t-${algorithm}.p12 -nokeys -passin pass:${PIN} 2>&1`], { cwd: dir, encoding: 'utf8' });
    expect(out).toMatch(/BEGIN CERTIFICATE/);
    const creds = loadP12(p12, PIN, NOW);
    expect(creds.chain).toHaveLength(1);
    const leaf = new X509Certificate(creds.certificateDer);
    const ca = new X509Certificate(creds.chain[0]!);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(BigInt('0x' + leaf.serialNumber) > 0n).toBe(true);
    expect(leaf.serialNumber.length).toBeGreaterThanOrEqual(30);
    expect(creds.certificate.subject).toBe(
      'CN=EMPRESA ÑANDÚ S.A., OU=CPJ, O=PERSONA JURIDICA, C=CR, SERIALNUMBER=CPJ-3-101-123456',
    );
    expect(creds.certificate.issuer).toMatch(/^CN=CA PERSONA JURIDICA - PRUEBAS FECR, /);
    expect(creds.certificate.issuerRfc4514).toMatch(/^CN=CA PERSONA JURIDICA - PRUEBAS FECR,OU=DGT,O=.*,C=CR,2\.5\.4\.5=#13[0-9a-f]+$/);
    expect(wrongPin(p12)).toBe('WRONG_PIN');
  });

  function wrongPin(p12: Buffer) {
    return codeOf(() => loadP12(p12, 'nope', NOW));
  }

  it('self-signed certificates verify against themselves', () => {
    const creds = loadP12(createTestP12({ id: '114560789', type: '01', pin: PIN, selfSigned: true }), PIN, NOW);
    const x = new X509Certificate(creds.certificateDer);
    expect(x.verify(x.publicKey)).toBe(true);
    expect(creds.chain).toHaveLength(0);
    expect(creds.certificate.subject).toBe(
      'CN=PERSONA FISICA DE PRUEBA, OU=CPF, O=PERSONA FISICA, C=CR, SERIALNUMBER=CPF-01-1456-0789',
    );
    expect(creds.certificate.identificacion).toBe('114560789');
    expect(creds.certificate.tipoIdentificacion).toBe('01');
  });

  it('formats subject serial numbers like the central bank and derives them back', () => {
    expect(subjectSerialNumberFor('01', '114560789')).toBe('CPF-01-1456-0789');
    expect(subjectSerialNumberFor('02', '3101123456')).toBe('CPJ-3-101-123456');
    expect(subjectSerialNumberFor('03', '155812345678')).toBe('DIMEX-155812345678');
    expect(subjectSerialNumberFor('04', '1234567890')).toBe('NITE-1234567890');
    expect(() => subjectSerialNumberFor('01', '012345678')).toThrow();
    expect(() => subjectSerialNumberFor('02', '310112345')).toThrow();
    for (const [type, id] of [['01', '114560789'], ['02', '3101123456'], ['03', '155812345678'], ['04', '1234567890']] as const) {
      const creds = loadP12(createTestP12({ id, type, pin: 'p', selfSigned: true }), 'p', NOW);
      expect([creds.certificate.tipoIdentificacion, creds.certificate.identificacion]).toEqual([type, id]);
    }
  });

  it('expired and not-yet-valid certificates are distinct errors; describeP12 reports them', () => {
    const day = 86_400_000;
    const expired = createTestP12({ id: '3101123456', type: '02', pin: PIN, notBefore: new Date(NOW.getTime() - 400 * day), notAfter: new Date(NOW.getTime() - day) });
    const future = createTestP12({ id: '3101123456', type: '02', pin: PIN, notBefore: new Date(NOW.getTime() + day), notAfter: new Date(NOW.getTime() + 400 * day) });
    expect(codeOf(() => loadP12(expired, PIN, NOW))).toBe('CERT_EXPIRED');
    expect(codeOf(() => loadP12(future, PIN, NOW))).toBe('CERT_NOT_YET_VALID');
    expect(codeOf(() => loadP12(expired, 'bad', NOW))).toBe('WRONG_PIN');
    expect(describeP12(expired, PIN, NOW).validity).toBe('expired');
    expect(describeP12(future, PIN, NOW).validity).toBe('not-yet-valid');
    const d = describeP12(expired, PIN, NOW);
    expect(d.hasPrivateKey).toBe(true);
    expect(d.chain).toHaveLength(1);
    // Loads fine at an instant inside the validity period.
    expect(loadP12(expired, PIN, new Date(NOW.getTime() - 10 * day)).certificate.identificacion).toBe('3101123456');
    try {
      loadP12(expired, PIN, NOW);
    } catch (e) {
      expect((e as Error).message).toMatch(/expired on \d{4}-\d{2}-\d{2}/);
    }
  });
});

describe('exportKeyPair / credentialsFromKeyPair (what an issuer keeps sealed instead of re-opening its .p12)', () => {
  it('round-trips to the same credentials, chain included, and they sign', () => {
    const creds = loadP12(createTestP12({ id: '3101123456', type: '02', pin: PIN }), PIN, NOW);
    const pair = exportKeyPair(creds);
    const again = credentialsFromKeyPair(JSON.parse(JSON.stringify(pair)), NOW);
    expect(again.certificateDer.equals(creds.certificateDer)).toBe(true);
    expect(again.chain.map((c) => c.toString('base64'))).toEqual(creds.chain.map((c) => c.toString('base64')));
    expect(again.chain.length).toBeGreaterThan(0);
    expect(again.certificate).toEqual(creds.certificate);
    expect(again.rsaKeyValue).toEqual(creds.rsaKeyValue);
    expect(signsAndVerifies(again)).toBe(true);
  });

  it('checks validity at the instant of use and that the key belongs to the certificate', () => {
    const day = 86_400_000;
    const expiring = createTestP12({ id: '3101123456', type: '02', pin: PIN, notBefore: new Date(NOW.getTime() - day), notAfter: new Date(NOW.getTime() + day) });
    const pair = exportKeyPair(loadP12(expiring, PIN, NOW));
    expect(codeOf(() => credentialsFromKeyPair(pair, new Date(NOW.getTime() + 2 * day)))).toBe('CERT_EXPIRED');
    expect(codeOf(() => credentialsFromKeyPair(pair, new Date(NOW.getTime() - 2 * day)))).toBe('CERT_NOT_YET_VALID');
    const other = exportKeyPair(loadP12(createTestP12({ id: '3101123456', type: '02', pin: PIN }), PIN, NOW));
    expect(codeOf(() => credentialsFromKeyPair({ ...pair, keyPkcs8: other.keyPkcs8 }, NOW))).toBe('BAD_P12');
    expect(codeOf(() => credentialsFromKeyPair({ ...pair, keyPkcs8: 'bm90IGEga2V5' }, NOW))).toBe('BAD_P12');
  });
});

describe('identificacionFromSerialNumber', () => {
  it.each([
    ['CPJ-3-101-123456', '02', '3101123456'],
    ['CPF-01-1456-0789', '01', '114560789'],
    ['CPF-09-0123-0456', '01', '901230456'],
    ['DIMEX-155812345678', '03', '155812345678'],
    ['NUP-155812345678', '03', '155812345678'],
    ['NITE-1234567890', '04', '1234567890'],
    ['114560789', '01', '114560789'],
    ['3101123456', '02', '3101123456'],
  ])('%s → %s %s', (sn, tipo, numero) => {
    expect(identificacionFromSerialNumber(sn)).toEqual({ tipo, numero });
  });
  it('no digits → undefined; unknown prefix → digits without type', () => {
    expect(identificacionFromSerialNumber('ABC')).toBeUndefined();
    expect(identificacionFromSerialNumber('XYZ-12')).toEqual({ numero: '12' });
  });
});
