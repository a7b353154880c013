/**
 * The client's own failures (profiles, the config file, sessions, the token store), with a code the CLI maps onto
 * its exit codes in its one table (src/cli/errors.ts): `usage` → 2, `auth` → 4, `error` → 1. The client knows no
 * exit code and prints nothing.
 */
export type ClientErrorCode = 'usage' | 'auth' | 'error';

export class ClientError extends Error {
  readonly code: ClientErrorCode;
  /** Show the message as it is, without the `error: ` prefix (the session lines: `session expired: run fecr login`). */
  readonly bare: boolean;

  constructor(code: ClientErrorCode, message: string, opts: { bare?: boolean; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ClientError';
    this.code = code;
    this.bare = opts.bare ?? false;
  }
}
