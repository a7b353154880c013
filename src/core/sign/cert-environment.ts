/**
 * Which Hacienda a signing certificate is for, read from its issuer's name (schemas/trust/SOURCES.md):
 *  - `fecr-test`: issued by fecr's test root (core/sign/test-ca.ts: `fecr certs create-test`, the emulator's
 *    suppliers), "… - PRUEBAS FECR": the embedded emulator (env local) only;
 *  - `sandbox`: Hacienda's sandbox llave criptográfica, issued by CA PERSONA FISICA|JURIDICA - SANDBOX
 *    (O=MINISTERIO DE HACIENDA - SANDBOX);
 *  - `production`: Hacienda's production llave criptográfica, issued by CA PERSONA FISICA|JURIDICA
 *    (O=MINISTERIO DE HACIENDA);
 *  - `unknown`: anything else (a Firma Digital certificate of the BCCR, another CA): no verdict.
 */
import type { CertificateInfo } from './cert.js';

export type CertificateEnvironment = 'fecr-test' | 'sandbox' | 'production' | 'unknown';

/** The value of attribute `name` (CN, O, …) in a readable DN (`CN=…, OU=…, O=…`). */
function attribute(dn: string, name: string): string | undefined {
  for (const part of dn.split(/,\s*(?=[A-Za-z0-9.]+=)/)) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim().toUpperCase() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function certificateEnvironment(cert: Pick<CertificateInfo, 'issuer'>): CertificateEnvironment {
  const o = (attribute(cert.issuer, 'O') ?? '').toUpperCase();
  const cn = (attribute(cert.issuer, 'CN') ?? '').toUpperCase();
  // The CA's own name first, then its organisation's.
  if (/\s-\s(SANDBOX|STAG)$/.test(cn)) return 'sandbox';
  if (/PRUEBAS FECR$/.test(cn)) return 'fecr-test';
  if (/^MINISTERIO DE HACIENDA\s*-\s*(SANDBOX|STAG)$/.test(o)) return 'sandbox';
  if (/PRUEBAS FECR$/.test(o)) return 'fecr-test';
  if (o === 'MINISTERIO DE HACIENDA' && /^CA PERSONA (FISICA|JURIDICA)$/.test(cn)) return 'production';
  return 'unknown';
}
