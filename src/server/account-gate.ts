/**
 * Heavy requests per account (issue 25, point 9): `POST /api/recibidos` (up to 200 documents or one of 4 MiB, checked
 * on the service's threads) and PDF downloads (rendered on them). The threads are few (service/heavy-work.ts), so
 * without a bound one account sending many such requests at once would fill their queue and every other account's
 * import or PDF would wait behind it. Each account holds at most `perAccount` of them at once (default 2).
 *
 * Excess requests wait their turn, up to `queue` of them per account (default 8) and `maxWaitMs` each (30 s); beyond
 * that, 429 too_many_requests with Retry-After in the spec's error body. Waiting rather than refusing outright: a
 * client that sends a few documents at once (a script, the CLI's remote import with several files) is served in
 * turn without having to retry, and a waiting upload costs nothing: `POST /api/recibidos` takes its turn before its
 * body is read (route onRequest, after authentication), so the body stays in the socket (TCP backpressure) rather
 * than in memory. A flood is refused at once, its bodies unread.
 *
 * A slot is held until the response is sent or the connection closes (a client that gives up while waiting leaves
 * the queue). Per process: with several API processes each bounds its own share.
 */
import type { ServerResponse } from 'node:http';
import { ERROR_CODES, HttpError } from './errors.js';

export interface AccountGateOptions {
  /** Heavy requests of one account being served at once. */
  perAccount: number;
  /** Heavy requests of one account waiting for a slot; more are refused (429). */
  queue: number;
  /** How long a request waits for a slot before it is refused (429). */
  maxWaitMs: number;
  /** Retry-After of a refusal (seconds). */
  retryAfterSeconds: number;
}

export const ACCOUNT_GATE_DEFAULTS: AccountGateOptions = { perAccount: 2, queue: 8, maxWaitMs: 30_000, retryAfterSeconds: 2 };

export const GATE_MESSAGE = 'Demasiadas solicitudes pesadas en curso para esta cuenta; intente de nuevo más tarde';

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

interface AccountSlots {
  running: number;
  waiting: Waiter[];
}

export class AccountGate {
  private readonly o: AccountGateOptions;
  private readonly accounts = new Map<number, AccountSlots>();

  constructor(options: Partial<AccountGateOptions> = {}) {
    this.o = { ...ACCOUNT_GATE_DEFAULTS, ...options };
  }

  /** Requests of the account being served and waiting (tests). */
  load(accountId: number): { running: number; waiting: number } {
    const a = this.accounts.get(accountId);
    return { running: a?.running ?? 0, waiting: a?.waiting.length ?? 0 };
  }

  /**
   * Resolves when the account has a slot for this request, held until `res` is finished or closed; throws the 429
   * HttpError when the account's queue is full or the wait is over.
   */
  hold(accountId: number, res: ServerResponse): Promise<void> {
    const a = this.accounts.get(accountId) ?? { running: 0, waiting: [] };
    this.accounts.set(accountId, a);
    let state: 'waiting' | 'running' | 'done' = 'waiting';
    const leave = () => {
      const was = state;
      state = 'done';
      if (was === 'running') this.release(accountId, a);
    };
    if (a.running < this.o.perAccount) {
      a.running++;
      state = 'running';
      onEnd(res, leave);
      return Promise.resolve();
    }
    if (a.waiting.length >= this.o.queue) {
      this.forget(accountId, a);
      return Promise.reject(this.refusal());
    }
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = {
        grant: () => {
          clearTimeout(w.timer);
          if (state !== 'waiting') return this.release(accountId, a); // gone meanwhile: pass the slot on
          state = 'running';
          resolve();
        },
        timer: setTimeout(() => drop(), this.o.maxWaitMs),
      };
      /** Out of the queue, refused (too long a wait; or the client is gone, and the refusal goes nowhere). */
      const drop = () => {
        clearTimeout(w.timer);
        const i = a.waiting.indexOf(w);
        if (i >= 0) a.waiting.splice(i, 1);
        if (state === 'waiting') state = 'done';
        this.forget(accountId, a);
        reject(this.refusal());
      };
      a.waiting.push(w);
      onEnd(res, () => (state === 'waiting' ? drop() : leave()));
    });
  }

  private release(accountId: number, a: AccountSlots): void {
    const next = a.waiting.shift();
    if (next) return next.grant(); // the slot goes to the next request, still counted as running
    a.running--;
    this.forget(accountId, a);
  }

  private forget(accountId: number, a: AccountSlots): void {
    if (a.running === 0 && a.waiting.length === 0) this.accounts.delete(accountId);
  }

  private refusal(): HttpError {
    return new HttpError(429, ERROR_CODES.tooManyRequests, GATE_MESSAGE, undefined, { 'retry-after': String(this.o.retryAfterSeconds) });
  }
}

/** Once, when the response is finished or its connection closed (whichever comes first). */
function onEnd(res: ServerResponse, fn: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    res.off('finish', once);
    res.off('close', once);
    fn();
  };
  if (res.writableFinished || res.destroyed) return queueMicrotask(once);
  res.once('finish', once);
  res.once('close', once);
}
