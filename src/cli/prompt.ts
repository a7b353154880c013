/**
 * The one way fecr asks a person something: @inquirer/prompts on the command's streams (questions on stderr, so
 * stdout stays for --json), loaded only when a question is asked. Used by `fecr login` and the interactive
 * `fecr emisor register|update`.
 *
 * Prompts never appear without a terminal: each function refuses (a usage error) when stdin is not one, so
 * callers check `ctx.io.stdinIsTTY` first to say what to pass instead. Ctrl-C (or a closed terminal) is a
 * `Cancelled` error: exit 130 (EXIT.interrupted).
 */
import type { Ctx } from './context.js';
import { EXIT, UsageError, UserError } from './errors.js';

/** The person stopped the questions (Ctrl-C): exit 130. Callers may rethrow with a message of their own. */
export class Cancelled extends UserError {
  constructor(message = 'cancelled') {
    super(message, EXIT.interrupted);
    this.name = 'Cancelled';
  }
}

/** true when the answer is acceptable, else what to show under the question. */
export type Validate = (value: string) => boolean | string | Promise<boolean | string>;

export interface InputQuestion {
  message: string;
  default?: string;
  validate?: Validate;
}

export interface PasswordQuestion {
  message: string;
  /** Show a `*` for each character typed (default: nothing is shown). */
  mask?: boolean;
  validate?: Validate;
}

export interface ConfirmQuestion {
  message: string;
  default?: boolean;
}

export interface SelectQuestion<T> {
  message: string;
  choices: { value: T; name: string }[];
  default?: T;
}

/** A line of text. */
export function input(ctx: Ctx, q: InputQuestion): Promise<string> {
  return ask(ctx, q.message, (p, streams) => p.input(q, streams));
}

/** A secret: never echoed (with `mask`, one `*` per character). */
export function password(ctx: Ctx, q: PasswordQuestion): Promise<string> {
  return ask(ctx, q.message, (p, streams) => p.password({ message: q.message, ...(q.mask ? { mask: '*' } : {}), ...(q.validate ? { validate: q.validate } : {}) }, streams));
}

/** Yes or no. */
export function confirm(ctx: Ctx, q: ConfirmQuestion): Promise<boolean> {
  return ask(ctx, q.message, (p, streams) => p.confirm(q, streams));
}

/** One of the choices (arrow keys). */
export function select<T>(ctx: Ctx, q: SelectQuestion<T>): Promise<T> {
  return ask(ctx, q.message, (p, streams) => p.select<T>(q, streams));
}

/**
 * One of many choices, found by typing part of its name (case and accents ignored: `limon` finds `Limón`); Enter on
 * an empty search takes the highlighted one.
 */
export function searchSelect<T>(ctx: Ctx, q: SelectQuestion<T>): Promise<T> {
  const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
  return ask(ctx, q.message, (p, streams) =>
    p.search<T>({ message: q.message, pageSize: 10, source: (term) => q.choices.filter((c) => !term || fold(c.name).includes(fold(term.trim()))) }, streams),
  );
}

type Inquirer = typeof import('@inquirer/prompts');
type Streams = { input: Ctx['io']['stdin']; output: Ctx['io']['stderr'] };

async function ask<T>(ctx: Ctx, message: string, fn: (p: Inquirer, streams: Streams) => Promise<T>): Promise<T> {
  if (!ctx.io.stdinIsTTY) throw new UsageError(`no terminal to ask "${message}"`);
  const inquirer = await import('@inquirer/prompts');
  try {
    return await fn(inquirer, { input: ctx.io.stdin, output: ctx.io.stderr });
  } catch (e) {
    const name = (e as Error | undefined)?.name;
    if (name === 'ExitPromptError' || name === 'AbortPromptError') throw new Cancelled();
    throw e;
  }
}
