// client/service-errors.ts: the one ServiceError → BackendError mapping, and lazyApi (a sub-API loaded at its first
// call, never a thenable: `await b.corrections()` must give the API, as fecr status does).
import { describe, expect, it } from 'vitest';
import { BackendError } from '../src/client/backend.js';
import { lazyApi, mapped } from '../src/client/service-errors.js';
import { ServiceError } from '../src/service/service-error.js';

describe('mapped', () => {
  it('maps each ServiceError code onto the BackendError the CLI words; other errors pass through', async () => {
    const codes = [
      [ServiceError.validation([{ path: 'mes', message: 'bad' }]), 'invalid'],
      [new ServiceError(404, 'not_found', 'none'), 'not_found'],
      [new ServiceError(503, 'service_unavailable', 'down'), 'unavailable'],
      [new ServiceError(401, 'unauthorized', 'who'), 'auth'],
    ] as const;
    for (const [e, code] of codes) {
      const got = await mapped(async () => {
        throw e;
      }).catch((x: unknown) => x);
      expect(got).toBeInstanceOf(BackendError);
      expect((got as BackendError).code).toBe(code);
    }
    expect((await mapped(async () => 7))).toBe(7);
    const plain = new Error('internal');
    expect(await mapped(async () => { throw plain; }).catch((x: unknown) => x)).toBe(plain);
  });
});

describe('lazyApi', () => {
  it('loads once at the first call, passes every argument, and awaiting it gives the API (no thenable)', async () => {
    let loads = 0;
    const api = lazyApi<{ add(a: number, b: number, c?: number): Promise<number> }>(async () => {
      loads++;
      return { add: async (a, b, c = 0) => a + b + c };
    });
    expect(loads).toBe(0);
    const same = await api;
    expect(same).toBe(api);
    expect(await api.add(1, 2, 3)).toBe(6);
    expect(await api.add(1, 2)).toBe(3);
    expect(loads).toBe(1);
  });
});
