/**
 * The CAs a supplier's signing certificate must chain to (issue 25.2; the check is core/sign/chain.ts). Shipped in
 * schemas/trust/ (provenance and fingerprints in its SOURCES.md), by environment:
 *
 * - production: `firma-digital/` (CA RAIZ NACIONAL - COSTA RICA v2 and its BCCR/SINPE issuing CAs) and
 *   `hacienda-production/` (CA RAIZ MINISTERIO DE HACIENDA, the root of the llave criptográfica);
 * - sandbox: those and `hacienda-sandbox/` (none shipped: the sandbox CAs were not found);
 * - local: those and fecr's test root (core/sign/test-ca.ts), which signs the emulator's suppliers and every
 *   `fecr certs create-test` certificate; its key is public, so never beyond env local.
 *
 * The operator adds CAs with FECR_RECIBIDOS_TRUST (`fecr serve --recibidos-trust`, a local profile's `recibidosTrust`):
 * PEM or DER files, or folders of `*.pem`/`*.crt`/`*.cer`, separated by the platform's path delimiter (`:`, `;` on
 * Windows). A self-signed CA certificate is an anchor; any other CA certificate only links a chain to one. A path
 * that cannot be read, a file with no certificate, or a certificate that is not a CA is an error naming the setting:
 * said when the service opens (runtime.ts), not at the first import.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageUrl } from '../../core/package-root.js';
import { buildTrustStore, certificatesIn, type CertificateInput, type TrustStore } from '../../core/sign/chain.js';
import { TEST_ROOT_CERTIFICATE_PEM } from '../../core/sign/test-ca.js';
import type { HaciendaEnvironment, ServiceContext } from '../context.js';

export const RECIBIDOS_TRUST_VAR = 'FECR_RECIBIDOS_TRUST';

/** The source named for fecr's test root in a trust store (and so in what a verifier says of a chain to it). */
export const TEST_ROOT_SOURCE = 'fecr test root (env local)';

/** The shipped folders of schemas/trust/ each environment trusts. */
export const SHIPPED_TRUST: Record<HaciendaEnvironment, readonly string[]> = {
  production: ['firma-digital', 'hacienda-production'],
  sandbox: ['firma-digital', 'hacienda-production', 'hacienda-sandbox'],
  local: ['firma-digital', 'hacienda-production', 'hacienda-sandbox'],
};

const CERT_FILE = /\.(pem|crt|cer)$/i;

/** A trust setting that cannot be used, naming it. */
export class TrustSettingError extends Error {
  override name = 'TrustSettingError';
}

/** The paths of a setting's value (the platform's path delimiter between them), resolved against `cwd`. */
export function trustPaths(value: string, cwd: string = process.cwd()): string[] {
  return value
    .split(path.delimiter)
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => path.resolve(cwd, p));
}

/** The certificates of files and folders (a folder: its `*.pem`, `*.crt`, `*.cer` regular files). */
function readCertificates(paths: readonly string[], setting: string, strict: boolean): CertificateInput[] {
  const out: CertificateInput[] = [];
  const readFile = (file: string) => {
    const ders = certificatesIn(readFileSync(file));
    if (ders.length === 0 && strict) throw new TrustSettingError(`${setting}: ${file} holds no certificate (PEM or DER)`);
    for (const der of ders) out.push({ der, source: file });
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      if (!strict) continue;
      throw new TrustSettingError(`${setting}: cannot read ${p} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
    try {
      if (st.isDirectory()) {
        for (const name of readdirSync(p).sort()) {
          const file = path.join(p, name);
          if (CERT_FILE.test(name) && statSync(file).isFile()) readFile(file);
        }
      } else readFile(p);
    } catch (e) {
      if (e instanceof TrustSettingError) throw e;
      throw new TrustSettingError(`${setting}: cannot read ${p} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
  }
  return out;
}

/** The operator's CAs, checked: throws TrustSettingError when one cannot be used (a missing file, no CA certificate). */
function operatorCertificates(paths: readonly string[], setting: string): CertificateInput[] {
  const inputs = readCertificates(paths, setting, true);
  const { problems } = buildTrustStore(inputs);
  if (problems.length > 0) throw new TrustSettingError(`${setting}: ${problems[0]}`);
  return inputs;
}

/** Checks a trust setting now (when the service opens): throws TrustSettingError naming it. */
export function checkTrustSetting(paths: readonly string[], setting = RECIBIDOS_TRUST_VAR): void {
  operatorCertificates(paths, setting);
}

/** Every CA trusted in an environment: the shipped ones, the test root in env local, and the operator's. */
export function loadTrustStore(environment: HaciendaEnvironment, extra: readonly string[] = [], setting = RECIBIDOS_TRUST_VAR): TrustStore {
  const shipped = SHIPPED_TRUST[environment].map((f) => fileURLToPath(packageUrl(`schemas/trust/${f}/`)));
  const testRoot = environment === 'local' ? certificatesIn(Buffer.from(TEST_ROOT_CERTIFICATE_PEM)).map((der) => ({ der, source: TEST_ROOT_SOURCE })) : [];
  return buildTrustStore([...readCertificates(shipped, 'schemas/trust', false), ...testRoot, ...operatorCertificates(extra, setting)]).store;
}

/**
 * The CAs Hacienda's seal (the MensajeHacienda's signer) must chain to (issue 37.3): its certificate is issued by
 * CA SINPE - PERSONA JURIDICA v2 (NOTES §6.3), so Firma Digital's root; not CA RAIZ MINISTERIO DE HACIENDA, which
 * issues every taxpayer's llave criptográfica. The sandbox's seal is under Firma Digital's test CAs (NOTES §3.4; not
 * shipped: `hacienda-sandbox/` or the operator's). In env local also fecr's test root, which issues the local
 * emulator's seal (emulator/keys.ts).
 */
export const SEAL_TRUST: Record<HaciendaEnvironment, readonly string[]> = {
  production: ['firma-digital'],
  sandbox: ['firma-digital', 'hacienda-sandbox'],
  local: ['firma-digital', 'hacienda-sandbox'],
};

/** Every CA Hacienda's seal may chain to in an environment, with the operator's (`extra`, checked as FECR_RECIBIDOS_TRUST is). */
export function loadSealTrustStore(environment: HaciendaEnvironment, extra: readonly string[] = [], setting = '--trust'): TrustStore {
  const shipped = SEAL_TRUST[environment].map((f) => fileURLToPath(packageUrl(`schemas/trust/${f}/`)));
  const testRoot = environment === 'local' ? certificatesIn(Buffer.from(TEST_ROOT_CERTIFICATE_PEM)).map((der) => ({ der, source: TEST_ROOT_SOURCE })) : [];
  return buildTrustStore([...readCertificates(shipped, 'schemas/trust', false), ...testRoot, ...operatorCertificates(extra, setting)]).store;
}

const stores = new WeakMap<ServiceContext, TrustStore>();

/** The trust store of a service (its environment and ctx.recibidos.trust), read once. */
export function recibidosTrust(ctx: ServiceContext): TrustStore {
  let store = stores.get(ctx);
  if (!store) {
    store = loadTrustStore(ctx.hacienda.environment, ctx.recibidos?.trust ?? []);
    stores.set(ctx, store);
  }
  return store;
}
