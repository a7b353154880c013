/**
 * The fiscal pipeline in one call: body → model → totals → v4.4 XML → XAdES-EPES signature.
 * Pure: the security code, the signing time and the signature ids are passed in.
 */
import { parseDocument } from './document.js';
import { orderFindings } from './input/projection.js';
import type { IssuerRecord } from './input/schema.js';
import type { Comprobante, Finding } from './model.js';
import type { SigningCredentials } from './sign/p12.js';
import { signCanonical } from './sign/xades.js';
import type { Totals } from './totals.js';
import { buildComprobanteXml } from './xml/build.js';
import { XmlCharError } from './xml/canonical.js';

export interface IssueOptions {
  /** 8 random digits (clave positions 43-50). */
  securityCode: string;
  signingTime: Date;
  /** Unique part of the signature's Id attributes (e.g. random hex). */
  newId: () => string;
  /**
   * Findings on the built model that refuse the body before it is signed (the service passes what Hacienda rejects,
   * core/rules/document-checks.ts); also run on a body with other findings, at the paths that parsed (`held` left out).
   */
  check?: (doc: Comprobante, held?: readonly string[]) => Finding[];
}

export type IssueResult =
  | { ok: true; doc: Comprobante; totals: Totals; xml: string }
  | { ok: false; findings: Finding[] };

export function issueComprobante(body: unknown, issuer: IssuerRecord, creds: SigningCredentials, opts: IssueOptions): IssueResult {
  const parsed = parseDocument(body, issuer, { securityCode: opts.securityCode });
  if (!parsed.ok) return { ok: false, findings: parsed.doc && opts.check ? orderFindings([...parsed.findings, ...opts.check(parsed.doc, parsed.held)]) : parsed.findings };
  const refused = opts.check?.(parsed.doc) ?? [];
  if (refused.length > 0) return { ok: false, findings: orderFindings(refused) };
  let unsigned: string;
  try {
    unsigned = buildComprobanteXml(parsed.doc, parsed.totals);
  } catch (e) {
    // The schema refuses characters XML cannot carry in the body and in the issuer record; this catches one that
    // came another way (e.g. an issuer stored before that check) as a finding instead of an internal error.
    if (e instanceof XmlCharError) return { ok: false, findings: [{ path: 'xml', message: e.message }] };
    throw e;
  }
  const xml = signCanonical(unsigned, creds, { signingTime: opts.signingTime, newId: opts.newId });
  return { ok: true, doc: parsed.doc, totals: parsed.totals, xml };
}
