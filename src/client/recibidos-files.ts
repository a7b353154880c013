/**
 * Reading suppliers' files for `fecr recibidos import` (issue 25) without trusting them: a folder's `*.xml` entry is
 * read only when it is a regular file, or a symlink that resolves to a regular file inside the folder; never a FIFO,
 * a device, a socket or a folder. The file is opened non-blocking and without following a last symlink, and checked
 * again on the open descriptor (fstat), so a FIFO or a symlink swapped in after the check cannot block or lead
 * elsewhere. At most the size limit + 1 bytes are read (core/received/limits.ts): a longer file goes to the service
 * as its first limit + 1 bytes and its size, and is refused there unread. Every bad entry is one finding
 * (`archivo: …`); nothing here throws for an entry. The reading itself is adapters/user-files.ts's.
 */
import type { Readable } from 'node:stream';
import { readUserFile } from '../adapters/user-files.js';
import type { Finding } from '../core/model.js';
import type { ImportFile, ImportResult } from '../service/recibidos/import.js';

export { RECEIVED_MAX_BYTES, RECEIVED_MAX_BYTES_VAR, receivedMaxBytes } from '../core/received/limits.js';

export type ReadOutcome = ImportFile | { name: string; finding: Finding };

const notRead = (name: string, what: string): ReadOutcome => ({ name, finding: { path: 'archivo', message: `${what}: not read` } });

/**
 * Reads one entry (adapters/user-files.ts: the one reader of a user's files). `folder` (the folder's real path): the
 * entry is one of its `*.xml` and a symlink must resolve inside it; without it the file was named by the user, and a
 * symlink may point anywhere (still a regular file).
 */
export async function readImportFile(file: string, name: string, opts: { maxBytes: number; folder?: string }): Promise<ReadOutcome> {
  const got = await readUserFile(file, opts);
  if ('refused' in got) return notRead(name, got.refused);
  return got.over ? { name, bytes: got.bytes, size: got.size } : { name, bytes: got.bytes };
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
