/**
 * The client's end of a hosted archive (POST /api/archivo/exportar, src/server/api-archivo.ts): the bytes go to the
 * output as they come, and a second reader of the same bytes (gunzip and tar-stream, each entry drained) counts what
 * the archive holds, for the summary `fecr archive export` prints: its files and their bytes, and its sales and received documents
 * (one `comprobante.xml` each, under `ventas/` or `compras/`). Memory: the streams' buffers, whatever the archive's size.
 * A connection cut by the service (a failure after the first byte) or a body that is no whole .tar.gz is an error:
 * the caller removes its partial file.
 */
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import type { ArchiveExportResult } from '../service/archive.js';
import { MANIFEST_NAME } from '../service/archive.js';
import { BackendError } from './backend.js';

export type { ArchiveRequest } from './backend.js';

export async function receiveArchive(body: NodeJS.ReadableStream, out: NodeJS.WritableStream, endOutput: boolean): Promise<ArchiveExportResult> {
  const result: ArchiveExportResult = { documents: { ventas: 0, compras: 0 }, files: 0, bytes: 0 };
  const source = body instanceof Readable ? body : Readable.from(body as AsyncIterable<Buffer>);
  const toOut = new PassThrough();
  const toCount = new PassThrough();
  source.on('data', (c: Buffer) => {
    const a = toOut.write(c);
    const b = toCount.write(c);
    if (!a || !b) {
      source.pause();
      let waiting = (a ? 0 : 1) + (b ? 0 : 1);
      const go = () => --waiting === 0 && source.resume();
      if (!a) toOut.once('drain', go);
      if (!b) toCount.once('drain', go);
    }
  });
  const ended = new Promise<void>((resolve, reject) => {
    source.once('end', () => {
      toOut.end();
      toCount.end();
      resolve();
    });
    source.once('error', (e) => {
      toOut.destroy(e);
      toCount.destroy(e);
      reject(e);
    });
  });
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    if (header.name !== MANIFEST_NAME) {
      result.files++;
      result.bytes += header.size ?? 0;
      const m = /^(ventas|compras)\/[^/]+\/comprobante\.xml$/.exec(header.name);
      if (m) result.documents[m[1] as 'ventas' | 'compras']++;
    }
    stream.on('end', () => next());
    stream.on('error', next);
    stream.resume();
  });
  try {
    await Promise.all([ended, pipeline(toOut, out, { end: endOutput }), pipeline(toCount, createGunzip(), extract)]);
  } catch (e) {
    source.destroy();
    throw new BackendError('unavailable', `the archive did not arrive whole: ${e instanceof Error ? e.message : String(e)}`);
  }
  return result;
}
