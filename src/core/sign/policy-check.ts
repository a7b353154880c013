/**
 * The XAdES policy check: a comprobante must be XAdES-EPES under the v4.4 policy (identifier and hash) or an
 * earlier version's identifier on Hacienda's hosts (passes with a note); a MensajeHacienda is XAdES-BES.
 */
import { NS_DS, NS_XADES, POLICY_V44_DIGEST, POLICY_V44_DIGEST_METHOD, POLICY_V44_URL } from './policy.js';
import type { PolicyVersion, VerifyReport } from './verify-report.js';
import { firstChild, firstDescendant } from './xml-dom.js';

/**
 * Policy identifiers under a versioned path on one of Hacienda's hosts: mostly the DGT-R-48-2016 resolution of
 * v4.1–v4.3, in the many spellings signers use, e.g.
 * `https://www.hacienda.go.cr/ATV/ComprobanteElectronico/docs/esquemas/2016/v4.2/ResolucionComprobantesElectronicosDGT-R-48-2016_4.2.pdf`,
 * `https://tribunet.hacienda.go.cr/docs/esquemas/2016/v4.1/Resolucion_Comprobantes_Electronicos_DGT-R-48-2016.pdf`.
 * Hacienda accepted v4.4 documents signed with the v4.2 one in 2026 (NOTES §6.3). Their hash is not checked:
 * signers write several values for the same identifier.
 */
const OLDER_POLICY = /^https?:\/\/(?:[a-z0-9-]+\.)*(?:hacienda\.go\.cr|comprobanteselectronicos\.go\.cr)\/.*\/v4\.([1-4])\/[^?#]*\.pdf$/i;

/** Hacienda's sentence for a signature without a policy (NOTES §6.3). */
const NO_POLICY_ID = 'La firma del documento no tiene el Policy Id';

/**
 * The policy check. A comprobante (or MensajeReceptor) must be XAdES-EPES: with the v4.4 policy (identifier and
 * hash), or with an earlier version's identifier (passes, with a note). A MensajeHacienda is Hacienda's own
 * signature, XAdES-BES without a policy: it passes as what it is.
 */
export function policyCheck(policyId: Element | undefined, root: Element, report: VerifyReport): [string, boolean, string] {
  const name = 'xades.policy';
  if (!policyId) {
    if (root.localName === 'MensajeHacienda') {
      report.notes.push('form: XAdES-BES (no signature policy), as Hacienda signs its MensajeHacienda');
      return [name, true, 'no signature policy: XAdES-BES, the form of Hacienda\'s own MensajeHacienda signatures'];
    }
    return [name, false, `${NO_POLICY_ID}: no xades:SignaturePolicyIdentifier/xades:SignaturePolicyId, so the signature is XAdES-BES, not XAdES-EPES`];
  }
  const identifier = firstDescendant(policyId, NS_XADES, 'Identifier')?.textContent?.trim() ?? '';
  const hashEl = firstDescendant(policyId, NS_XADES, 'SigPolicyHash');
  const method = hashEl ? firstChild(hashEl, NS_DS, 'DigestMethod')?.getAttribute('Algorithm') ?? '' : '';
  const value = (hashEl ? firstChild(hashEl, NS_DS, 'DigestValue')?.textContent ?? '' : '').replace(/\s+/g, '');
  if (identifier === POLICY_V44_URL) {
    const problems: string[] = [];
    if (method !== POLICY_V44_DIGEST_METHOD) problems.push(`policy hash method is ${JSON.stringify(method)}, expected sha256`);
    if (value !== POLICY_V44_DIGEST) problems.push(`policy hash is ${JSON.stringify(value)}, expected ${POLICY_V44_DIGEST}`);
    report.policy = { identifier, version: '4.4', current: problems.length === 0 };
    return [name, problems.length === 0, problems.length === 0 ? 'v4.4 policy identifier and hash' : problems.join('; ')];
  }
  const older = OLDER_POLICY.exec(identifier);
  if (older) {
    const version = `4.${older[1]}` as PolicyVersion;
    report.policy = { identifier, version, current: false };
    if (version === '4.4') {
      report.notes.push('policy: a v4.4 identifier other than the official URL; its hash is not checked');
      return [name, true, `v4.4 policy under another identifier on Hacienda's site: ${identifier}`];
    }
    report.notes.push(`policy: v${version} identifier (older than v4.4); Hacienda accepts it, its hash is not checked`);
    return [name, true, `v${version} policy identifier ${identifier} (older than v4.4, accepted)`];
  }
  report.policy = { identifier, current: false };
  const problems = [`policy identifier is ${JSON.stringify(identifier)}, expected the v4.4 resolution URL`];
  if (method !== POLICY_V44_DIGEST_METHOD) problems.push(`policy hash method is ${JSON.stringify(method)}, expected sha256`);
  if (value !== POLICY_V44_DIGEST) problems.push(`policy hash is ${JSON.stringify(value)}, expected ${POLICY_V44_DIGEST}`);
  return [name, false, problems.join('; ')];
}
