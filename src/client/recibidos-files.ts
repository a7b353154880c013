/**
 * Reading suppliers' files for `fecr recibidos import` (issue 25) without trusting them: a folder's `*.xml` entry is
 * read only when it is a regular file, or a symlink that resolves to a regular file inside the folder; never a FIFO,
 * a device, a socket or a folder. The file is opened non-blocking and without following a last symlink, and checked
 * again on the open descriptor (fstat), so a FIFO or a symlink swapped in after the check cannot block or lead
 * elsewhere. At most the size limit + 1 bytes are read (core/received/limits.ts): a longer file goes to the service
 * as its first limit + 1 bytes and its size, and is refused there unread. Every bad entry is one finding
 * (`archivo: …`); nothing here throws for an entry.
 */
import { constants } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Finding } from '../core/model.js';
import type { ImportFile, ImportResult } from '../service/recibidos/import.js';

export { RECEIVED_MAX_BYTES, RECEIVED_MAX_BYTES_VAR, receivedMaxBytes } from '../core/received/limits.js';

export type ReadOutcome = ImportFile | { name: string; finding: Finding };

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

const notRead = (name: string, what: string): ReadOutcome => ({ name, finding: { path: 'archivo', message: `${what}: not read` } });

function kindOf(st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (st.isDirectory()) return 'a folder, not a file';
  if (st.isFIFO()) return 'a FIFO (named pipe), not a regular file';
  if (st.isSocket()) return 'a socket, not a regular file';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device, not a regular file';
  return 'not a regular file';
}

function errorText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ELOOP') return 'a symlink where a file was expected';
  return `cannot be read (${code ?? (e instanceof Error ? e.message : String(e))})`;
}

/**
 * Reads one entry. `folder` (the folder's real path): the entry is one of its `*.xml` and a symlink must resolve
 * inside it; without it the file was named by the user, and a symlink may point anywhere (still a regular file).
 */
export async function readImportFile(file: string, name: string, opts: { maxBytes: number; folder?: string }): Promise<ReadOutcome> {
  let target = file;
  try {
    const st = await lstat(file);
    if (st.isSymbolicLink()) {
      try {
        target = await realpath(file);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        return notRead(name, code === 'ELOOP' ? 'a symlink loop' : code === 'ENOENT' ? 'a dangling symlink (its target does not exist)' : `a symlink that cannot be resolved (${code})`);
      }
      if (opts.folder !== undefined && !target.startsWith(opts.folder + path.sep)) return notRead(name, 'a symlink to outside the folder');
    } else if (!st.isFile()) return notRead(name, kindOf(st));
  } catch (e) {
    return notRead(name, errorText(e));
  }
  let fh: FileHandle;
  try {
    // Non-blocking: a FIFO swapped in opens at once (and fstat refuses it); O_NOFOLLOW: nor a symlink swapped in.
    fh = await open(target, constants.O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (e) {
    return notRead(name, errorText(e));
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return notRead(name, kindOf(st));
    const cap = opts.maxBytes + 1;
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < cap) {
      const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, cap - total));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
    }
    const bytes = Buffer.concat(chunks, total);
    return total > opts.maxBytes ? { name, bytes, size: Math.max(st.size, total) } : { name, bytes };
  } catch (e) {
    return notRead(name, errorText(e));
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** Standard input, read up to the limit + 1 bytes (a longer input is refused by the service unread). */
export async function readImportStream(stream: Readable, name: string, maxBytes: number): Promise<ImportFile> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    chunks.push(b);
    total += b.length;
    if (total > maxBytes) break; // the rest is never read
  }
  return { name, bytes: Buffer.concat(chunks, total).subarray(0, maxBytes + 1) };
}

/** The result of an entry that was not read (nothing sent, nothing stored): `id` 0. */
export function notReadResult(name: string, finding: Finding): ImportResult {
  return { archivo: name, id: 0, clave: null, estado: 'invalido', creado: false, tipo: null, emisor: null, totalComprobante: null, haciendaEstado: null, hallazgos: [finding], avisos: [] };
}
