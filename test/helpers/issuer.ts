// A test issuer with a real generated .p12 (made once per test file).
import type { IssuerRecord } from '../../src/core/input/schema.js';
import { loadP12, type SigningCredentials } from '../../src/core/sign/p12.js';
import { createTestP12 } from '../../src/core/sign/testcert.js';
import { ISSUER } from './bodies.js';

export interface TestIssuer {
  issuer: IssuerRecord;
  p12: Buffer;
  creds: SigningCredentials;
}

export function makeTestIssuer(now = new Date()): TestIssuer {
  const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: ISSUER.pinCertificado, name: ISSUER.nombre });
  return { p12, issuer: { ...ISSUER, certificadoHacienda: p12.toString('base64') }, creds: loadP12(p12, ISSUER.pinCertificado, now) };
}
