/**
 * Reading a file the user points at (a supplier's XML in a folder, `fecr test`'s bodies and `NAME.expect.json`, a
 * `--faults` file) without trusting what sits at that path (issues 25, 37): only a regular file, or a symlink that
 * resolves to one (inside `folder` when the file is one of a folder's entries); never a FIFO, a device, a socket or
 * a folder. The file is opened non-blocking and without following a last symlink, and checked again on the open
 * descriptor (fstat), so a FIFO or a symlink swapped in after the check can neither block nor lead elsewhere. At most
 * `maxBytes + 1` bytes are read: a longer file says so (`over`) and the rest is never read. Nothing here throws for
 * the file: what keeps it from being read is a `refused` reason, in words a user can act on.
 *
 * One concept in one place: client/recibidos-files.ts (imports, the Maildir watcher), client/test-runner/collect.ts
 * and emulator/faults.ts all read through here. The async reader for the CLI's folders; the sync one for the fault
 * file, read at the emulator's start and at `fecr config set emulatorFaults=`.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

export interface UserFileOptions {
  /** The most bytes wanted: one more is read to tell a longer file (`over`). */
  maxBytes: number;
  /** The folder's real path when the file is one of its entries: a symlink must then resolve inside it. */
  folder?: string;
}

export type UserFileRead =
  | { bytes: Buffer; /** More than maxBytes: `bytes` are its first maxBytes + 1. */ over: boolean; /** Its size as fstat saw it. */ size: number }
  | { refused: string };

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const FLAGS = constants.O_RDONLY | O_NONBLOCK | O_NOFOLLOW;
/** Read a file a MiB at a time. */
const CHUNK = 1024 * 1024;

type Kind = Pick<Stats, 'isDirectory' | 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'>;

export function kindOf(st: Kind): string {
  if (st.isDirectory()) return 'a folder, not a file';
  if (st.isFIFO()) return 'a FIFO (named pipe), not a regular file';
  if (st.isSocket()) return 'a socket, not a regular file';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device, not a regular file';
  return 'not a regular file';
}

export function errorText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ELOOP') return 'a symlink where a file was expected';
  return `cannot be read (${code ?? (e instanceof Error ? e.message : String(e))})`;
}

function linkError(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ELOOP' ? 'a symlink loop' : code === 'ENOENT' ? 'a dangling symlink (its target does not exist)' : `a symlink that cannot be resolved (${code})`;
}

/** What lstat saw at the path, and for a symlink its real path (or why it has none). */
type Resolved = string | { error: unknown } | undefined;

/** The path to open, or why not; `folder`: a symlink must resolve inside it. */
function target(file: string, st: Stats, real: Resolved, folder?: string): { path: string } | { refused: string } {
  if (!st.isSymbolicLink()) return st.isFile() ? { path: file } : { refused: kindOf(st) };
  if (typeof real !== 'string') return { refused: linkError(real?.error) };
  if (folder !== undefined && !real.startsWith(folder + path.sep)) return { refused: 'a symlink to outside the folder' };
  return { path: real };
}

/** Reads `file` as the header says (async: a folder's entries). */
export async function readUserFile(file: string, opts: UserFileOptions): Promise<UserFileRead> {
  let to: { path: string } | { refused: string };
  try {
    const st = await lstat(file);
    const real: Resolved = st.isSymbolicLink() ? await realpath(file).catch((error: unknown) => ({ error })) : undefined;
    to = target(file, st, real, opts.folder);
  } catch (e) {
    return { refused: errorText(e) };
  }
  if ('refused' in to) return to;
  let fh: FileHandle;
  try {
    fh = await open(to.path, FLAGS);
  } catch (e) {
    return { refused: errorText(e) };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { refused: kindOf(st) };
    const cap = opts.maxBytes + 1;
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < cap) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, cap - total));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
    }
    return { bytes: Buffer.concat(chunks, total), over: total > opts.maxBytes, size: Math.max(st.size, total) };
  } catch (e) {
    return { refused: errorText(e) };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** readUserFile, synchronously (a small file read once: the fault file). */
export function readUserFileSync(file: string, opts: UserFileOptions): UserFileRead {
  let to: { path: string } | { refused: string };
  try {
    const st = lstatSync(file);
    let real: Resolved;
    if (st.isSymbolicLink()) {
      try {
        real = realpathSync(file);
      } catch (error) {
        real = { error };
      }
    }
    to = target(file, st, real, opts.folder);
  } catch (e) {
    return { refused: errorText(e) };
  }
  if ('refused' in to) return to;
  let fd: number;
  try {
    fd = openSync(to.path, FLAGS);
  } catch (e) {
    return { refused: errorText(e) };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { refused: kindOf(st) };
    const cap = opts.maxBytes + 1;
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < cap) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, cap - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
    }
    return { bytes: Buffer.concat(chunks, total), over: total > opts.maxBytes, size: Math.max(st.size, total) };
  } catch (e) {
    return { refused: errorText(e) };
  } finally {
    closeSync(fd);
  }
}

/** The words of a file over its cap (`what`: whose cap, e.g. "an expectation file"). */
export function overText(size: number, maxBytes: number, what: string): string {
  return `${size > maxBytes + 1 ? `${size} bytes` : `more than ${maxBytes} bytes`}: over the limit of ${maxBytes} bytes for ${what}`;
}
