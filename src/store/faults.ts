/**
 * Faults of the store that are nobody's mistake and pass: a full disk, a dropped or refused database connection,
 * a database that is restarting. They are not internal errors: nothing was written half (SQLite and PostgreSQL
 * roll the transaction back), so the right answer is "try again" (CLI: one line, exit 1; API: 503 with the spec's
 * error body; worker: the job is retried).
 */
import { statfsSync } from 'node:fs';

export type StoreFaultKind = 'full' | 'unavailable';

/** A store fault with the place it happened (the data dir, or the database URL without its password). */
export class StoreFault extends Error {
  readonly code = 'FECR_STORE_FAULT';
  constructor(
    readonly kind: StoreFaultKind,
    /** The driver's code: SQLITE_FULL, ENOSPC, ECONNRESET, 57P01, … */
    readonly driverCode: string,
    /** The SQLite data dir or the redacted database URL, when known. */
    readonly where: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      kind === 'full'
        ? `the data dir${where ? ` ${where}` : ''} is full (${driverCode}); nothing was lost: free space and run the command again`
        : `the database${where ? ` ${where}` : ''} is unavailable (${driverCode}); nothing was lost: run the command again`,
      options,
    );
    this.name = 'StoreFault';
  }
}

/** SQLite and system codes of a full disk. */
const FULL = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT', '53100' /* PostgreSQL disk_full */]);

/** Transport and server states of a database that went away or is not there yet (PostgreSQL, node's net). */
const UNAVAILABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'SQLITE_BUSY',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '40001', // serialization_failure (a retry is the documented answer)
  '40P01', // deadlock_detected
]);

/** node-postgres reports a dropped socket with these messages and no code. */
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /connection timeout/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error and is not queryable/i,
  /Client was closed and is not queryable/i,
  /Cannot use a pool after calling end on the pool/i,
  /terminating connection due to administrator command/i,
];

/**
 * The fault kind and driver code of an error (or of one in its `cause` chain); undefined when it is not one.
 * With `dir` (a SQLite data dir), an I/O error or a file that cannot be opened (SQLite's -wal and -shm files
 * fail so when the disk is full: SQLITE_IOERR_SHMSIZE, SQLITE_IOERR_WRITE, …) is a full disk when that file
 * system has less than 1 MiB free.
 */
export function storeFaultOf(e: unknown, dir?: string): { kind: StoreFaultKind; code: string } | undefined {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    if (cur instanceof StoreFault || (cur as { code?: unknown }).code === 'FECR_STORE_FAULT') {
      const f = cur as StoreFault;
      return { kind: f.kind, code: f.driverCode };
    }
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (FULL.has(code)) return { kind: 'full', code };
      if (UNAVAILABLE_CODES.has(code) || /^08/.test(code)) return { kind: 'unavailable', code };
      if (dir && /^SQLITE_(IOERR|CANTOPEN)/.test(code) && freeBytes(dir) < 1024 * 1024) return { kind: 'full', code };
    }
    const message = (cur as { message?: unknown }).message;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message))) {
      return { kind: 'unavailable', code: typeof code === 'string' ? code : 'connection lost' };
    }
    if (cur instanceof AggregateError) {
      for (const inner of cur.errors) {
        const f = storeFaultOf(inner);
        if (f) return f;
      }
    }
  }
  return undefined;
}

/** Free bytes for an unprivileged writer on the file system of `dir` (Infinity when it cannot be told). */
function freeBytes(dir: string): number {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** The error as a StoreFault naming `where` (a SQLite data dir, or a redacted URL) when it is one, else undefined. */
export function asStoreFault(e: unknown, where: string | undefined): StoreFault | undefined {
  if (e instanceof StoreFault) return e.where || !where ? e : new StoreFault(e.kind, e.driverCode, where, { cause: e.cause });
  const f = storeFaultOf(e, where && !where.includes('://') ? where : undefined);
  return f ? new StoreFault(f.kind, f.code, where, { cause: e }) : undefined;
}

/** Whether the error is a StoreFault of either copy of this module (the built shell bundles its own). */
export function isStoreFault(e: unknown): e is StoreFault {
  return e instanceof StoreFault || (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'FECR_STORE_FAULT');
}
