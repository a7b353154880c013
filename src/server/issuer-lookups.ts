/**
 * `POST /api/consultar/emisor`'s answers, kept briefly (issue 31: the lookup toward 10 000 req/s). A found issuer's
 * public summary (service/issuers.ts getIssuerPublic: six public fields, no secret) is kept per account and
 * identificación for `ttlMs` (default 1 s), so a client polling its issuer costs one store read a second instead of
 * one a request (the read and Kysely's query building were ≈ 30 % of the route's CPU).
 *
 * Freshness: this app's own writes (`/api/enviar/emisor`, `/api/actualizar/emisor`) forget the account's entries
 * before they answer, so a client sees its change at once. A change made elsewhere on the same store (the CLI on the
 * data dir, another replica on the same PostgreSQL) shows within `ttlMs`. An issuer not found is never kept (a
 * newly registered one shows at once, and unknown identificaciones cannot fill the map). Tenancy is in the key.
 */
import type { IssuerSummary } from '../api/contract.js';

export interface IssuerLookupsOptions {
  /** How long a found summary is served without reading the store again (default 1 000 ms; 0: never kept). */
  ttlMs?: number;
  /** Entries at most; past it the map starts over (default 10 000). */
  max?: number;
  now?: () => number;
}

export class IssuerLookups {
  private readonly entries = new Map<string, { data: IssuerSummary; until: number }>();
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(o: IssuerLookupsOptions = {}) {
    this.ttlMs = o.ttlMs ?? 1_000;
    this.max = o.max ?? 10_000;
    this.now = o.now ?? Date.now;
  }

  /** The account's summary of `identificacion`: kept, or read by `read` (and kept when found). */
  async get(accountId: number, identificacion: string | number, read: () => Promise<IssuerSummary | null>): Promise<IssuerSummary | null> {
    const key = `${accountId}\u0000${String(identificacion).trim()}`;
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.data;
    const data = await read();
    if (data && this.ttlMs > 0) {
      if (this.entries.size >= this.max) this.entries.clear();
      this.entries.set(key, { data, until: now + this.ttlMs });
    } else {
      this.entries.delete(key);
    }
    return data;
  }

  /** Forgets the account's entries (its issuer was registered or updated through this app). */
  forget(accountId: number): void {
    const prefix = `${accountId}\u0000`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}
