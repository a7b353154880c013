/**
 * What the client code needs of its caller: the environment, the working directory, a stream for warnings and
 * logs, a clock, random bytes and the profile named for this run. The CLI's context (src/cli/context.ts) is one;
 * tests make their own.
 */
import type { Writable } from 'node:stream';

export interface ClientContext {
  io: {
    env: Record<string, string | undefined>;
    cwd: string;
    /** Warnings (`warning: …`) and, with debug, logs. */
    stderr: Writable;
  };
  /** Log more (the CLI's --debug). */
  debug: boolean;
  now(): Date;
  randomBytes(n: number): Uint8Array;
  /** The profile named for this run (the CLI's global `--profile`), before FECR_PROFILE and "default". */
  profile?: string;
}
