/**
 * Errors the CLI shows to people. A UserError is expected (bad input, rejected document, ...) and is printed
 * as one line; anything else is an internal error, printed as one line too (details only with --debug).
 */

/** Exit codes, listed by `fecr help exit-codes`. */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  rejected: 3,
  auth: 4,
  pending: 8,
  /** Ctrl-C (128 + SIGINT, as shells report it). */
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of each code of the client's own errors (src/client/errors.ts). */
export const CLIENT_EXIT = { usage: EXIT.usage, auth: EXIT.auth, error: EXIT.error } as const satisfies Record<string, ExitCode>;

export const EXIT_CODE_HELP = `Exit codes:
  0  ok
  1  error (invalid input, failed check, internal error)
  2  usage (unknown command or flag, missing argument)
  3  rejected by Hacienda; fecr test: a verdict that is not the one expected
  4  authentication (bad credentials, expired or revoked session; documents held because Hacienda refused an issuer's credentials)
  8  still pending (a wait timed out before Hacienda decided)
  130  interrupted (Ctrl-C); fecr batch then says to rerun with --resume`;

export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.error,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

export class UsageError extends UserError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
  }
}

/** Signals that the command already printed what it had to say and only the exit code remains. */
export class SilentExit extends Error {
  constructor(readonly exitCode: ExitCode) {
    super(`exit ${exitCode}`);
    this.name = 'SilentExit';
  }
}
