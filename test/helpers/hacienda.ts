// Helpers for the Hacienda client/emulator tests: claves, a pass-through validator, a shared fake clock.
import type { ComprobanteValidator } from '../../src/emulator/validate.js';

/** A syntactically valid clave for issuer 3101123456, FE, sequence `n`, date 15/03/26. */
export function claveFor(n: number, opts: { id?: string; date?: string; security?: string } = {}): string {
  const consecutivo = '00100001' + '01' + String(n).padStart(10, '0');
  return '506' + (opts.date ?? '150326') + (opts.id ?? '3101123456').padStart(12, '0') + consecutivo + '1' + (opts.security ?? '12345678');
}

export const EMISOR = { tipoIdentificacion: '02', numeroIdentificacion: '3101123456' } as const;

export function submission(n: number, extra: Record<string, unknown> = {}) {
  return {
    clave: claveFor(n),
    fecha: '2026-03-15T10:30:00-06:00',
    emisor: { ...EMISOR },
    comprobanteXml: `<FacturaElectronica><Clave>${claveFor(n)}</Clave></FacturaElectronica>`,
    ...extra,
  };
}

/** Accepts every document: isolates transport tests from document validation. */
export const acceptAll: ComprobanteValidator = async () => ({ accepted: true, errors: [], nombreEmisor: 'SOFTWARE TICO SOCIEDAD ANONIMA' });

/** A settable clock. */
export function fakeClock(start = Date.now()) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

/** Fast retry settings for tests (real sleeps, tiny delays). */
export const FAST_RETRY = { baseDelayMs: 2, maxDelayMs: 20, maxAttempts: 25, maxServerWaitMs: 5_000 };
