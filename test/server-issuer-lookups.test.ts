// /api/consultar/emisor's short-lived answers (src/server/issuer-lookups.ts): a found summary is served from memory
// for the TTL, per account; a miss is never kept; forget() drops an account's entries at once.
import { describe, expect, it } from 'vitest';
import type { IssuerSummary } from '../src/api/contract.js';
import { IssuerLookups } from '../src/server/issuer-lookups.js';

const summary = (nombreComercial: string): IssuerSummary =>
  ({ identificacion: 3101123456, tipoIdentificacion: 2, nombreComercial, correoElectronico: 'a@b.cr', telefono: '22222222', ambiente: 2 }) as IssuerSummary;

describe('IssuerLookups', () => {
  it('serves a found summary for the TTL, then reads again', async () => {
    let now = 1_000;
    let reads = 0;
    const l = new IssuerLookups({ ttlMs: 1_000, now: () => now });
    const read = async () => (reads++, summary(`v${reads}`));
    expect((await l.get(1, '3101123456', read))?.nombreComercial).toBe('v1');
    now += 999;
    expect((await l.get(1, '3101123456', read))?.nombreComercial).toBe('v1');
    now += 1;
    expect((await l.get(1, '3101123456', read))?.nombreComercial).toBe('v2');
    expect(reads).toBe(2);
  });

  it('keeps accounts apart, keeps no miss, and forgets an account at once', async () => {
    const l = new IssuerLookups({ ttlMs: 60_000 });
    let misses = 0;
    expect(await l.get(1, '3101999999', async () => (misses++, null))).toBeNull();
    expect(await l.get(1, '3101999999', async () => (misses++, null))).toBeNull();
    expect(misses).toBe(2);
    await l.get(1, '3101123456', async () => summary('A'));
    expect((await l.get(2, '3101123456', async () => summary('B')))?.nombreComercial).toBe('B');
    expect((await l.get(1, '3101123456', async () => summary('A2')))?.nombreComercial).toBe('A');
    l.forget(1);
    expect((await l.get(1, '3101123456', async () => summary('A3')))?.nombreComercial).toBe('A3');
    expect((await l.get(2, '3101123456', async () => summary('B2')))?.nombreComercial).toBe('B');
  });

  it('ttlMs 0 keeps nothing', async () => {
    const l = new IssuerLookups({ ttlMs: 0 });
    let reads = 0;
    for (let i = 0; i < 3; i++) await l.get(1, '3101123456', async () => (reads++, summary('x')));
    expect(reads).toBe(3);
  });
});
