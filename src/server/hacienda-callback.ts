/**
 * Hacienda's callback, `POST /hacienda/callback`: Hacienda POSTs the body of GET /recepcion/{clave} to the
 * `callbackUrl` sent with each document, and retries anything but a 2xx three times before it gives up (NOTES §4.6).
 *
 * Hacienda has no way to authenticate a callback: no signature over the request, no token, no client certificate, no
 * published source addresses (NOTES §4.6 describes the body only; its `respuesta-xml` is signed, but the service
 * never takes a verdict from it). Anyone who reaches the API can call the route. So it stays what it is, a hint that
 * only makes the service ask Hacienda sooner (service/delivery/worker.ts `hintCallback`), and it is kept cheap and
 * bounded:
 *  - per source address (rate-limit.ts `addressKey`: an IPv6 client by its /64; behind `--trust-proxy`, the address
 *    the proxy names) and for all sources together, a token bucket; past either: 429 with Retry-After, before the
 *    body is read;
 *  - a body of at most CALLBACK_BODY_LIMIT (Hacienda's is a few KiB: the clave, a date, a state and the
 *    MensajeHacienda in base64);
 *  - a body without a clave, or with a clave seen within `repeatWindowMs` (whatever the source): 200, counted,
 *    nothing else: no lookup, no job, no log line;
 *  - any other: 200 at once, then the lookup, after the answer: a document this service waits on Hacienda for
 *    (pendiente, enviado, recibido, procesando) has its jobs made due now (one log line per clave and window);
 *    an unknown clave, or a document decided or held, is counted only. At most `concurrency` lookups run at once
 *    and `queue` wait; past that the hint is dropped and counted (the poll finds the verdict anyway).
 * Every caller gets the same answer whatever the clave, so the route tells no one which claves exist. `stats()`
 * has the counters; every map is bounded (`maxKeys`, the least recently used dropped first).
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import type { ServiceContext } from '../service/context.js';
import { hintCallback, parseCallback, type CallbackOutcome } from '../service/delivery/worker.js';
import { ERROR_CODES, sendError } from './errors.js';
import { addressKey } from './rate-limit.js';
import { PUBLIC_ROUTE } from './route-auth.js';

export const CALLBACK_PATH = '/hacienda/callback';
/** The largest callback body read (bytes). */
export const CALLBACK_BODY_LIMIT = 256 * 1024;

export const CALLBACK_MESSAGES = {
  limited: 'Demasiadas solicitudes; intente de nuevo más tarde',
  tooLarge: 'El cuerpo de la solicitud excede el tamaño máximo de 256 KiB',
} as const;

export interface CallbackLimits {
  /** Calls per source address: a burst, then so many per second (default 300, then 30/s). */
  perSource: { burst: number; perSecond: number };
  /** Calls of all sources together (default 1000, then 100/s). */
  overall: { burst: number; perSecond: number };
  /** A clave seen again within this window makes nothing (default 30 s). */
  repeatWindowMs: number;
  /** Lookups at once (default 4) and waiting (default 1000). */
  concurrency: number;
  queue: number;
  /** Sources and claves remembered at most (default 100 000 each). */
  maxKeys: number;
}

export const DEFAULT_CALLBACK_LIMITS: CallbackLimits = {
  perSource: { burst: 300, perSecond: 30 },
  overall: { burst: 1000, perSecond: 100 },
  repeatWindowMs: 30_000,
  concurrency: 4,
  queue: 1000,
  maxKeys: 100_000,
};

/** What became of the calls: the route's own counts and the lookups' outcomes. */
export interface CallbackStats {
  received: number;
  /** Answered 429 (a source's or the overall rate). */
  limited: number;
  /** No clave in the body. */
  ignored: number;
  /** The clave was seen within the window. */
  repeated: number;
  /** The lookup queue was full. */
  dropped: number;
  /** Lookups: a document waited on (jobs made due), an unknown clave, a document decided or held, a failure. */
  hinted: number;
  unknown: number;
  notWaiting: number;
  failed: number;
}

/** Inserts or refreshes `key` as the most recent, dropping the oldest beyond `max`. */
function touch<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

/** Token buckets per key: `take` spends one token, or says how many seconds until there is one. */
class Buckets {
  readonly #m = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly rate: { burst: number; perSecond: number },
    private readonly now: () => number,
    private readonly maxKeys: number,
  ) {}

  take(key: string): number {
    const now = this.now();
    const b = this.#m.get(key);
    const tokens = b ? Math.min(this.rate.burst, b.tokens + ((now - b.at) / 1000) * this.rate.perSecond) : this.rate.burst;
    if (tokens < 1) {
      touch(this.#m, key, { tokens, at: now }, this.maxKeys);
      return Math.max(1, Math.ceil((1 - tokens) / this.rate.perSecond));
    }
    touch(this.#m, key, { tokens: tokens - 1, at: now }, this.maxKeys);
    return 0;
  }
}

export class CallbackGuard {
  readonly #limits: CallbackLimits;
  readonly #now: () => number;
  readonly #sources: Buckets;
  readonly #overall: Buckets;
  /** clave → until when a repeat is ignored. */
  readonly #seen = new Map<string, number>();
  readonly #waiting: { clave: string; hint?: string }[] = [];
  readonly #running = new Set<Promise<void>>();
  readonly #stats: CallbackStats = { received: 0, limited: 0, ignored: 0, repeated: 0, dropped: 0, hinted: 0, unknown: 0, notWaiting: 0, failed: 0 };
  #lastFailureLog = -Infinity;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly wake: () => void,
    limits: Partial<CallbackLimits> = {},
  ) {
    this.#limits = { ...DEFAULT_CALLBACK_LIMITS, ...limits };
    this.#now = ctx.now;
    this.#sources = new Buckets(this.#limits.perSource, this.#now, this.#limits.maxKeys);
    this.#overall = new Buckets(this.#limits.overall, this.#now, 1);
  }

  /** Before the body: 0 when a call from `ip` may go on, else the seconds to wait (the call is counted as limited). */
  admit(ip: string): number {
    this.#stats.received++;
    const wait = this.#sources.take(addressKey(ip)) || this.#overall.take('*');
    if (wait > 0) this.#stats.limited++;
    return wait;
  }

  /** The parsed body: counted, or queued for its lookup. Never waits. */
  accept(body: unknown): void {
    const c = parseCallback(body);
    if (!c) {
      this.#stats.ignored++;
      return;
    }
    const now = this.#now();
    const until = this.#seen.get(c.clave);
    if (until !== undefined && until > now) {
      this.#stats.repeated++;
      return;
    }
    touch(this.#seen, c.clave, now + this.#limits.repeatWindowMs, this.#limits.maxKeys);
    if (this.#waiting.length >= this.#limits.queue) {
      this.#stats.dropped++;
      return;
    }
    this.#waiting.push(c);
    this.#pump();
  }

  #pump(): void {
    while (this.#running.size < this.#limits.concurrency && this.#waiting.length > 0) {
      const c = this.#waiting.shift()!;
      const p: Promise<void> = this.#lookup(c).finally(() => {
        this.#running.delete(p);
        this.#pump();
      });
      this.#running.add(p);
    }
  }

  async #lookup(c: { clave: string; hint?: string }): Promise<void> {
    let outcome: CallbackOutcome;
    try {
      outcome = await hintCallback(this.ctx, c.clave, c.hint);
    } catch (e) {
      this.#stats.failed++;
      // A store that is down fails every lookup: one line a minute, not one per call.
      const now = this.#now();
      if (now - this.#lastFailureLog >= 60_000) {
        this.#lastFailureLog = now;
        this.ctx.logger.warn({ err: e, failed: this.#stats.failed }, 'Hacienda callback hints failing (the poll confirms the statuses)');
      }
      return;
    }
    if (outcome === 'hinted') {
      this.#stats.hinted++;
      this.wake();
    } else if (outcome === 'unknown') this.#stats.unknown++;
    else this.#stats.notWaiting++;
  }

  stats(): CallbackStats {
    return { ...this.#stats };
  }

  /** Resolves when no lookup runs or waits (before the store closes). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }
}

/**
 * Registers the route on the API app; `wake` is the worker's (absent in a process without one: the jobs made due
 * are taken by the worker processes through the store). Returns the guard, for its stats and `idle()` at close.
 */
export function registerHaciendaCallback(app: FastifyInstance, ctx: ServiceContext, opts: { wake: () => void; limits?: Partial<CallbackLimits> }): CallbackGuard {
  const guard = new CallbackGuard(ctx, opts.wake, opts.limits);
  app.post(
    CALLBACK_PATH,
    {
      bodyLimit: CALLBACK_BODY_LIMIT,
      config: PUBLIC_ROUTE, // no token: Hacienda has no scheme for it (route-auth.ts)
      onRequest: async (req, reply) => {
        const wait = guard.admit(req.ip);
        if (wait > 0) {
          void reply.header('retry-after', String(wait));
          return sendError(reply, 429, ERROR_CODES.tooManyRequests, CALLBACK_MESSAGES.limited);
        }
      },
      errorHandler: (err: FastifyError, _req, reply) => {
        if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, 413, ERROR_CODES.payloadTooLarge, CALLBACK_MESSAGES.tooLarge);
        throw err;
      },
    },
    async (req) => {
      guard.accept(req.body);
      return { status: 'ok' };
    },
  );
  return guard;
}
