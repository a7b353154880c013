/**
 * The clave's situación of what a verb sends (issue 30; ANEXOS p.67: 1 normal, 2 contingencia, 3 sin internet):
 * `--situacion N` writes it into every body (a body that says another one is refused), and the profile setting
 * `contingencia: auto` signs a body that gives none in situación 3 when Hacienda's reception or IdP does not answer at
 * that moment (one GET each without credentials, AUTO_PROBE_MS: service/contingency.ts haciendaReachable; its answer
 * kept for AUTO_CACHE_MS, so a batch asks about once per that much time). Such a document is queued like any other and sent by the queue when Hacienda answers again; the
 * situación is not part of the body's identity, so sending the same body again finds it instead of a second one.
 */
import { BackendError, type Backend, type SubmitOptions } from './backend.js';

export type Situacion = '1' | '2' | '3';

/** How long the reachability GET may take before Hacienda counts as unreachable. */
export const AUTO_PROBE_MS = 3_000;
/** How long its answer is used for the next documents. */
export const AUTO_CACHE_MS = 10_000;

export interface SituacionChoice {
  /** --situacion: written into every body. */
  situacion?: Situacion;
  /** The profile's `contingencia: auto` (local mode). */
  auto?: boolean;
  /** Hears each time auto signs in situación 3 because Hacienda did not answer (the cause in words). */
  onUnreachable?: (cause: string) => void;
}

/** The backend whose `submit` applies the choice (the backend itself when there is nothing to apply). */
export function withSituacion(b: Backend, choice: SituacionChoice, now: () => number = Date.now): Backend {
  const fixed = choice.situacion;
  const api = choice.auto ? b.contingency?.() : undefined;
  const probe = api?.reachable?.bind(api);
  if (!fixed && !probe) return b;
  let probed: { at: number; result: Promise<{ ok: true } | { ok: false; cause: string }> } | undefined;
  const reachable = () => {
    if (!probed || now() - probed.at > AUTO_CACHE_MS) probed = { at: now(), result: probe!(AUTO_PROBE_MS) };
    return probed.result;
  };
  const submit = async (body: unknown, opts: SubmitOptions = {}) => {
    // Not a body at all: the backend's findings say so.
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return b.submit(body, opts);
    const own = (body as { situacion?: unknown }).situacion;
    if (fixed) {
      if (own !== undefined && String(own) !== fixed) {
        throw new BackendError('invalid', 'the body and --situacion disagree', [{ path: 'situacion', message: `is "${String(own)}" but --situacion is "${fixed}"` }]);
      }
      return b.submit(own === undefined ? { ...body, situacion: fixed } : body, opts);
    }
    if (own !== undefined) return b.submit(body, opts);
    const r = await reachable();
    if (r.ok) return b.submit(body, opts);
    choice.onUnreachable?.(r.cause);
    return b.submit(body, { ...opts, situacion: '3' });
  };
  return new Proxy(b, {
    get(target, prop, receiver) {
      if (prop === 'submit') return submit;
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `--situacion` as given on the command line: 1, 2 or 3. */
export function situacionFlag(value: string | undefined): Situacion | undefined | null {
  if (value === undefined) return undefined;
  return value === '1' || value === '2' || value === '3' ? value : null;
}
