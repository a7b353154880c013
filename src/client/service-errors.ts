/**
 * The one mapping of a use case's ServiceError (src/service/service-error.ts) onto the BackendError a CLI verb words,
 * for every local end of a Backend (local-backend.ts and its sub-APIs: recibidos, reports, corrections, contingency).
 * Anything else stays what it is (an internal error).
 */
import { BackendError } from './backend.js';

/** Runs a use case; its ServiceError becomes a BackendError. */
export async function mapped<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const { ServiceError } = await import('../service/service-error.js');
    if (e instanceof ServiceError) {
      const code = e.code === 'not_found' ? 'not_found' : e.code === 'service_unavailable' ? 'unavailable' : e.code === 'unauthorized' ? 'auth' : 'invalid';
      throw new BackendError(code, e.message, e.details ?? []);
    }
    throw e;
  }
}

/** A sub-API whose module is loaded at its first call (so `fecr --help` and other verbs do not load it). */
export function lazyApi<T extends object>(load: () => Promise<T>): T {
  let loaded: Promise<T> | undefined;
  return new Proxy({} as T, {
    // Not a thenable: `await api` gives the API itself.
    get: (_t, key) =>
      key === 'then'
        ? undefined
        : async (...args: unknown[]) => {
            const api = (await (loaded ??= load())) as Record<PropertyKey, (...a: unknown[]) => unknown>;
            return api[key]!.apply(api, args);
          },
  });
}
