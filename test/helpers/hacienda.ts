// Helpers for the Hacienda client/emulator tests: claves, a pass-through validator, a shared fake clock.
import type { ComprobanteValidator } from '../../src/emulator/validate.js';
import { crParts } from '../../src/core/dates.js';
import { resolveEndpoints, type HaciendaEndpoints } from '../../src/hacienda/client/index.js';

/** A date `plusDays` from today in Costa Rica at `hour`:00 (-06:00). */
export function crDay(hour: number, plusDays = 0): Date {
  const p = crParts(new Date());
  return new Date(Date.UTC(p.year, p.month - 1, p.day + plusDays, hour + 6, 0, 0));
}

/** `2026-11-27T05:00:00-06:00`. */
export function crIso(d: Date): string {
  const p = crParts(d);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${p.year}-${two(p.month)}-${two(p.day)}T${two(p.hour)}:${two(p.minute)}:${two(p.second)}-06:00`;
}

/** The emulator's sandbox paths (realm rut-stag, /recepcion-sandbox/v1), as the real sandbox's. */
export function sandboxEndpoints(baseUrl: string): HaciendaEndpoints {
  const local = resolveEndpoints('local', { baseUrl });
  return {
    ...local,
    environment: 'sandbox',
    tokenUrl: local.tokenUrl.replace('/realms/rut/', '/realms/rut-stag/'),
    logoutUrl: local.logoutUrl.replace('/realms/rut/', '/realms/rut-stag/'),
    clientId: 'api-stag',
    receptionBaseUrl: local.receptionBaseUrl.replace('/recepcion/v1', '/recepcion-sandbox/v1'),
  };
}

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
