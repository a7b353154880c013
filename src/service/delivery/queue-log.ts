/**
 * How the PostgreSQL queue (queue.ts) logs what fails and is retried. A connection PostgreSQL terminated (a backend
 * killed with pg_terminate_backend, a restart, a failover: store/faults.ts's "unavailable" faults) loses nothing: pg
 * drops the client, the query in flight fails and its caller tries again (the next lease, heartbeat or poll). That is
 * a warning of one line, without a stack (issue 37: such runs logged error-level stack traces); anything else stays an
 * error.
 */
import type { Logger } from 'pino';
import { storeFaultOf } from '../../store/faults.js';
import { errText } from './job.js';

/** True when `e` (or graphile-worker's message about it) is a lost database connection. */
function lostConnection(e: unknown, message?: string): boolean {
  return storeFaultOf(e)?.kind === 'unavailable' || (message !== undefined && storeFaultOf({ message })?.kind === 'unavailable');
}

/** The queue's own failure of a step it retries: `what` ("leasing jobs failed", …). */
export function logRetried(log: Logger, e: unknown, what: string): void {
  if (lostConnection(e)) log.warn({ err: errText(e), retried: true }, `${what} (database connection lost; retried)`);
  else log.error({ err: errText(e) }, what);
}

/**
 * What queue.ts throws to graphile-worker for a job it did not settle (its lease lost, the worker stopping, a store
 * fault met by the job): graphile-worker unlocks the job for another run and logs a "Failed task" error with a stack;
 * nothing is lost, so ours is a one-line warning.
 */
export const NOT_SETTLED = 'job not settled; left for another run';
export const ABORTED = 'worker aborted';

/** graphile-worker's log lines into ours: its errors about a lost connection, or a job left for another run, as one-line warnings. */
export function graphileLog(log: Logger): (level: string, message: string, meta?: { error?: unknown }) => void {
  return (level, message, meta) => {
    const fields = { queue: 'graphile-worker' };
    const left = message.includes(`'${NOT_SETTLED}'`) || message.includes(`'${ABORTED}'`);
    if (level === 'error' && (left || lostConnection(meta?.error, message))) log.warn({ ...fields, retried: true }, message.split('\n')[0]!);
    else if (level === 'error') log.error(fields, message);
    else if (level === 'warning') log.warn(fields, message);
    else log.debug(fields, message);
  };
}
