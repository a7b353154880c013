/** What every command receives: the injected IO, global flags, and the factory of its lazy dependencies. */
import type { Backend } from '../client/backend.js';
import type { ClientContext } from '../client/context.js';
import type { IO } from './io.js';

/** What a command may ask of the backend it opens. */
export interface BackendOptions {
  /** A profile by name; default: the global --profile, else FECR_PROFILE, else "default". */
  profile?: string;
  /** Many documents (a batch): see LocalBackendOptions. */
  bulk?: boolean;
  /** The command submits one document: see LocalBackendOptions. */
  sending?: boolean;
}

/**
 * Opens a backend on demand (cli/cli's Factory): only the command that needs one pays for it. It receives the
 * context of the run (its `profile` is the global --profile once the flags are parsed).
 */
export type BackendFactory = (ctx: ClientContext, opts?: BackendOptions) => Promise<Backend>;

export interface Ctx extends ClientContext {
  io: IO;
  /** --debug: print internal details of failures */
  debug: boolean;
  /** Clock and randomness, injectable for tests. */
  now: () => Date;
  randomBytes: (n: number) => Uint8Array;
  /**
   * Where the issuer verbs get their Backend (through withBackend, src/commands/backend.ts, which closes it and
   * maps its errors). `main()` hands the profile's (profileBackend) unless told otherwise; a test hands its own
   * (test/cli-backend-factory.test.ts).
   */
  backend: BackendFactory;
}

/** The default BackendFactory: the profile in use (or the one named), local or remote (src/client/select.ts openBackend). */
export async function profileBackend(ctx: ClientContext, opts: BackendOptions = {}): Promise<Backend> {
  const { openBackend } = await import('../client/select.js');
  return openBackend(ctx, opts.profile, { ...(opts.bulk ? { bulk: true } : {}), ...(opts.sending ? { sending: true } : {}) });
}
