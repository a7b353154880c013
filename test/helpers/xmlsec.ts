/**
 * Runs xmlsec1 (1.2.x) on a signed document written to a fresh temp dir. The key is taken from the
 * KeyInfo X509Certificate only (`--enabled-key-data x509`; otherwise xmlsec1 may fall back to other key
 * data and skip the certificate checks). Without `trustedPem` the certificate chain is not checked
 * (`--insecure`); with it, the certificate must chain to that PEM (a self-signed certificate may be its
 * own trust anchor) and be valid at `verificationTime` (default: now).
 *
 * Command line:
 *   xmlsec1 --verify --enabled-key-data x509 --insecure \
 *     --id-attr:Id http://www.w3.org/2000/09/xmldsig#:KeyInfo \
 *     --id-attr:Id http://uri.etsi.org/01903/v1.3.2#:SignedProperties signed.xml
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface XmlsecOptions {
  /** PEM certificate(s) to trust; omit to skip chain verification. */
  trustedPem?: string;
  /** Time for certificate validity checks (only with trustedPem). */
  verificationTime?: Date;
}

export const XMLSEC_ID_ARGS = [
  '--id-attr:Id',
  'http://www.w3.org/2000/09/xmldsig#:KeyInfo',
  '--id-attr:Id',
  'http://uri.etsi.org/01903/v1.3.2#:SignedProperties',
];

export function xmlsecArgs(file: string, trustedPemFile?: string, verificationTime?: Date): string[] {
  const trust = trustedPemFile ? ['--trusted-pem', trustedPemFile] : ['--insecure'];
  const time = trustedPemFile && verificationTime ? ['--verification-time', xmlsecTime(verificationTime)] : [];
  return ['--verify', '--enabled-key-data', 'x509', ...trust, ...time, ...XMLSEC_ID_ARGS, file];
}

export function xmlsecVerify(xml: string, opts: XmlsecOptions = {}): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-xmlsec-'));
  try {
    const file = join(dir, 'signed.xml');
    writeFileSync(file, xml, 'utf8');
    let pemFile: string | undefined;
    if (opts.trustedPem) {
      pemFile = join(dir, 'trusted.pem');
      writeFileSync(pemFile, opts.trustedPem);
    }
    const r = spawnSync('xmlsec1', xmlsecArgs(file, pemFile, opts.verificationTime), { encoding: 'utf8' });
    const output = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`;
    return { ok: r.status === 0 && /^OK$/m.test(output), output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** xmlsec1 reads --verification-time as host-local "YYYY-MM-DD HH:MM:SS". */
function xmlsecTime(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
