/** What every command receives: the injected IO and global flags. */
import type { IO } from './io.js';

export interface Ctx {
  io: IO;
  /** --debug: print internal details of failures */
  debug: boolean;
  /** Clock and randomness, injectable for tests. */
  now: () => Date;
  randomBytes: (n: number) => Uint8Array;
}
