/**
 * Contingency (issue 30), what a CLI verb asks of a backend: the types only (as client/recibidos.ts and reports.ts);
 * its local and remote ends are in client/contingency-backends.ts.
 */
import type { ContingencyOwed, ProvisionalView } from '../service/contingency.js';

export type { ContingencyDocument, ContingencyOwed, ProvisionalView } from '../service/contingency.js';

export interface ContingencyApi {
  /** Local mode: whether Hacienda's reception and IdP answer now (one GET each, this timeout); the cause in words when not. */
  reachable?(timeoutMs: number): Promise<{ ok: true } | { ok: false; cause: string }>;
  /** Records provisional comprobantes (one object or a list); the same record again is returned with created false. */
  record(input: unknown): Promise<{ provisional: ProvisionalView; created: boolean }[]>;
  provisional(id: number): Promise<ProvisionalView>;
  /** Marks a provisional comprobante replaced by the account's document `clave`. */
  markReplaced(id: number, clave: string): Promise<ProvisionalView>;
  /** What is still owed: provisional comprobantes not replaced by an accepted document, documents not received by Hacienda yet, documents of situación 2/3 not accepted. */
  owed(): Promise<ContingencyOwed>;
}
