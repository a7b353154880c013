/**
 * What a signature verification reports: the checks (each named, passed or failed, with a detail), the signer,
 * the SigningTime, the signature's form and policy, and notes that are not failures. `addCheck` appends a check.
 */
import type { CertificateInfo } from './cert.js';

export interface VerifyCheck {
  /** Stable identifier, e.g. `signature.value`, `reference[0]`, `xades.policy`. */
  name: string;
  ok: boolean;
  /** Human-readable explanation (what was found / expected). */
  detail: string;
}

export interface VerifyReport {
  /** True when every check passed. Keep in sync through `addCheck` when appending checks. */
  ok: boolean;
  checks: VerifyCheck[];
  /** The signing certificate (from KeyInfo), including the signer's identification. */
  signer?: CertificateInfo;
  /** With a trust store (VerifyOptions.trust): the anchor the signing certificate chains to, when it does. */
  anchor?: { name: string; source: string; fingerprint: string };
  /** xades:SigningTime as written in the document. */
  signingTime?: string;
  /**
   * What the signature is: XAdES-EPES (with a SignaturePolicyId), XAdES-BES (QualifyingProperties without a
   * policy, as Hacienda signs its MensajeHacienda) or plain XMLDSig (no XAdES properties). Absent when no
   * signature was found.
   */
  form?: SignatureForm;
  /** The signature policy named in SignedProperties; absent when there is none (XAdES-BES). */
  policy?: PolicyInfo;
  /**
   * Things worth knowing that are not failures (e.g. `policy: v4.2 identifier (older than v4.4)`); `ok` does
   * not depend on them.
   */
  notes: string[];
}

export type SignatureForm = 'XAdES-EPES' | 'XAdES-BES' | 'XMLDSig';

export interface PolicyInfo {
  /** xades:SigPolicyId/xades:Identifier as written. */
  identifier: string;
  /**
   * The comprobantes version the identifier belongs to: `4.4` for the official v4.4 URL (or another v4.4 path on
   * Hacienda's hosts), `4.1`–`4.3` for the earlier resolution's URLs there; undefined for anything else (a
   * foreign policy: the check fails).
   */
  version?: PolicyVersion;
  /**
   * True only for the official v4.4 identifier with its hash. Another identifier of Hacienda's (e.g. v4.2) passes
   * the check with a note; a foreign identifier, or the v4.4 one with a wrong hash, fails it.
   */
  current: boolean;
}

export type PolicyVersion = '4.4' | '4.3' | '4.2' | '4.1';

/** Appends a check and updates `report.ok`. */
export function addCheck(report: VerifyReport, check: VerifyCheck): void {
  report.checks.push(check);
  report.ok = report.checks.every((c) => c.ok);
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
