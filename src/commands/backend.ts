/**
 * How the issuer verbs get their Backend, and how its failures become CLI errors: one line, or for a refused
 * input a headline and its findings one per line. The backend comes from the context's factory (Ctx.backend):
 * the active profile's, local or remote (profileBackend, src/cli/context.ts), or a test's own.
 */
import type { BackendOptions, Ctx } from '../cli/context.js';
import { EXIT, SilentExit, UserError } from '../cli/errors.js';
import { invalidHeadline, printFindings } from '../cli/findings.js';
import { writeLine } from '../cli/io.js';
import type { Backend, BackendError } from '../client/backend.js';
import { SESSION_EXPIRED_LINE, SESSION_REVOKED_LINE } from '../client/select.js';
import { MISSING_FIELDS } from '../service/service-error.js';

/** The context's backend (Ctx.backend); the caller closes it. */
export function backendFor(ctx: Ctx, opts: BackendOptions = {}): Promise<Backend> {
  return ctx.backend(ctx, opts);
}

/**
 * Opens the backend (the context's factory: by default the profile in use, i.e. the global `--profile`, else
 * FECR_PROFILE), runs `fn`, closes the backend; BackendErrors become CLI errors (toUserError).
 */
export async function withBackend<T>(ctx: Ctx, fn: (b: Backend) => Promise<T>, opts: BackendOptions = {}): Promise<T> {
  const { BackendError } = await import('../client/backend.js');
  let backend: Backend | undefined;
  const subjects = new WeakMap<object, string>();
  try {
    backend = await backendFor(ctx, opts);
    return await fn(namingSubjects(backend, subjects));
  } catch (e) {
    if (e instanceof BackendError) throw toUserError(ctx, e, subjects.get(e) ?? 'request');
    throw e;
  } finally {
    await backend?.close();
  }
}

/** What a verb sends, as the headline of its validation failure names it ("invalid document: …"). */
const SUBJECTS: Partial<Record<keyof Backend, string>> = {
  registerIssuer: 'issuer record',
  updateIssuer: 'issuer record',
  submit: 'document',
};

/** The backend, whose failures of the SUBJECTS verbs are recorded in `subjects` with what was sent. */
function namingSubjects(backend: Backend, subjects: WeakMap<object, string>): Backend {
  return new Proxy(backend, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...a: unknown[]) => unknown;
      const subject = SUBJECTS[prop as keyof Backend];
      // Methods run on the backend itself, never on the proxy.
      if (subject === undefined) return (...args: unknown[]) => method.apply(target, args);
      return async (...args: unknown[]) => {
        try {
          return await method.apply(target, args);
        } catch (e) {
          if (typeof e === 'object' && e !== null && !subjects.has(e)) subjects.set(e, subject);
          throw e;
        }
      };
    },
  });
}

/**
 * The client API's routes a service message may name (its Spanish words are the API's, kept), and the fecr verb a
 * CLI user runs instead: no CLI line sends its reader to the HTTP API.
 */
const VERB_OF_ROUTE: ReadonlyArray<readonly [RegExp, string]> = [
  [/(?:POST )?\/api\/enviar\/emisor\b/g, 'fecr emisor register'],
  [/(?:POST )?\/api\/actualizar\/emisor\b/g, 'fecr emisor update'],
  [/(?:POST )?\/api\/enviar\/items\b/g, 'fecr send'],
  [/(?:POST )?\/api\/enviar\/correo\b/g, 'fecr documents email'],
  [/(?:POST )?\/api\/consultar\/estado\b/g, 'fecr status'],
  [/(?:POST )?\/api\/consultar\/archivo\b/g, 'fecr download'],
  [/(?:POST )?\/api\/consultar\/documentos\b/g, 'fecr documents list'],
];

/** `message` with every API route it names replaced by the fecr verb (VERB_OF_ROUTE). */
export function withVerbs(message: string): string {
  return VERB_OF_ROUTE.reduce((m, [route, verb]) => m.replace(route, verb), message);
}

/**
 * A failure with no findings: one line. With findings: a headline, then the findings one per line (`  path:
 * message`), all on stderr; the exit code stays. A validation failure (the service's generic "Campos requeridos
 * faltantes", in local and remote profiles alike) gets a headline that says what is wrong: `invalid document: 3
 * findings`; a refusal with a message of its own (an issuer already registered, a certificate) keeps it.
 */
function toUserError(ctx: Ctx, e: BackendError, subject: string): Error {
  const message = withVerbs(e.message);
  const code = e.code === 'auth' ? EXIT.auth : EXIT.error;
  // A refused session token: the same bare line as an expired one caught before any request (select.ts).
  if (e.code === 'auth' && (message === SESSION_EXPIRED_LINE || message === SESSION_REVOKED_LINE)) {
    writeLine(ctx.io.stderr, message);
    return new SilentExit(code);
  }
  if (e.findings.length === 0) {
    const err = new UserError(message, code);
    err.cause = e;
    return err;
  }
  const validation = e.code === 'invalid' && e.message === MISSING_FIELDS;
  printFindings(ctx, validation ? invalidHeadline(subject, e.findings.length) : message, e.findings);
  if (ctx.debug) writeLine(ctx.io.stderr, String(e.stack));
  return new SilentExit(code);
}
