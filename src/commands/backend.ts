/**
 * How the issuer verbs get their Backend, and how its failures become one-line CLI errors.
 * `openBackend` (src/client/select.ts) picks the active profile's backend: local or remote.
 */
import type { Ctx } from '../cli/context.js';
import { EXIT, SilentExit, UserError } from '../cli/errors.js';
import { writeLine } from '../cli/io.js';
import type { Backend } from '../client/backend.js';

export interface BackendFlags {
  profile?: string;
  /** Many documents (a batch): see LocalBackendOptions. */
  bulk?: boolean;
}

export async function backendFor(ctx: Ctx, opts: BackendFlags = {}): Promise<Backend> {
  const { openBackend } = await import('../client/select.js');
  return openBackend(ctx, opts.profile, opts.bulk ? { bulk: true } : {});
}

/**
 * Opens the backend of the profile in use (the global `--profile`, else FECR_PROFILE), runs `fn`, closes the
 * backend; BackendErrors become one-line UserErrors.
 */
export async function withBackend<T>(ctx: Ctx, fn: (b: Backend) => Promise<T>, opts: BackendFlags = {}): Promise<T> {
  const { BackendError } = await import('../client/backend.js');
  let backend: Backend | undefined;
  try {
    backend = await backendFor(ctx, opts);
    return await fn(backend);
  } catch (e) {
    if (e instanceof BackendError) throw toUserError(ctx, e);
    throw e;
  } finally {
    await backend?.close();
  }
}

/** The error line, then the findings one per line (`path: message`), all on stderr; the exit code stays. */
function toUserError(ctx: Ctx, e: InstanceType<typeof import('../client/backend.js').BackendError>): Error {
  const message = e.message.replace('use /api/actualizar/emisor', 'use fecr emisor update');
  const code = e.code === 'auth' ? EXIT.auth : EXIT.error;
  if (e.findings.length === 0) {
    const err = new UserError(message, code);
    err.cause = e;
    return err;
  }
  writeLine(ctx.io.stderr, `error: ${message}`);
  for (const f of e.findings) writeLine(ctx.io.stderr, `${f.path}: ${f.message}`);
  if (ctx.debug) writeLine(ctx.io.stderr, String(e.stack));
  return new SilentExit(code);
}
