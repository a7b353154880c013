// A body issued as the service issues it (core/comprobante.ts): built, signed with the test issuer's .p12, a fresh
// security code; the findings thrown when the body is refused. For tests that need a signed XML without a store.
import { randomBytes } from 'node:crypto';
import { securityCodeFrom } from '../../src/core/clave.js';
import { issueComprobante, type IssueResult } from '../../src/core/comprobante.js';
import type { TestIssuer } from './issuer.js';

export type Issued = Extract<IssueResult, { ok: true }>;

export function issueSigned(body: unknown, issuer: TestIssuer, signingTime: Date = new Date()): Issued {
  const r = issueComprobante(body, issuer.issuer, issuer.creds, {
    securityCode: securityCodeFrom((n) => randomBytes(n)),
    signingTime,
    newId: () => randomBytes(8).toString('hex'),
  });
  if (!r.ok) throw new Error(JSON.stringify(r.findings));
  return r;
}
