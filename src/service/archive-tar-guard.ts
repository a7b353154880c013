/**
 * What tar-stream holds whole before it tells an entry (issue 37.4): a PAX header's records and a GNU long name are
 * buffered to their declared size (tar-stream 2.2 extract.js `_parse(header.size, onpaxheader)`), so a 1 GB PAX
 * header would be 1 GB of memory. This pass-through walks the tar's 512-byte headers with tar-stream's own decoder
 * (`tar-stream/headers.js`, the one its extract uses) and fails the stream on a metadata entry over
 * TAR_META_MAX_BYTES, before tar-stream buffers it. The bytes go on unchanged; the walk keeps only a header's 512
 * bytes or one metadata entry (at most the cap) at a time, and follows a PAX `size` record as tar-stream does.
 */
import { Transform, type TransformCallback } from 'node:stream';
import headers, { type TarHeader } from 'tar-stream/headers.js';
import { TAR_META_MAX_BYTES } from './archive-limits.js';

const BLOCK = 512;
const META_TYPES = new Set(['pax-header', 'pax-global-header', 'gnu-long-path', 'gnu-long-link-path']);

/** Thrown (as the stream's error) for a metadata entry over the cap. */
export class TarMetaTooLarge extends Error {
  override name = 'TarMetaTooLarge';
}

export function tarMetaGuard(): Transform {
  let want = BLOCK; // bytes to collect (a header, or a metadata entry's data padded to blocks)
  let skip = 0; // a file's data (padded), passed through unread
  let parts: Buffer[] = [];
  let have = 0;
  let meta: { type: string; size: number } | undefined;
  let paxSize: number | undefined;
  let done = false; // tar-stream reports what the walk cannot read (a bad header): the walk stops guarding

  const onCollected = (buf: Buffer): void => {
    if (meta) {
      if (meta.type === 'pax-header') {
        const size = headers.decodePax(buf.subarray(0, meta.size)).size;
        if (size !== undefined) paxSize = parseInt(size, 10);
      }
      meta = undefined;
      want = BLOCK;
      return;
    }
    let h: TarHeader | null;
    try {
      h = headers.decode(buf, 'utf-8', true);
    } catch {
      done = true;
      return;
    }
    if (!h) return; // an end-of-archive block of zeros
    const size = Number.isFinite(h.size) && h.size > 0 ? h.size : 0;
    if (h.type && META_TYPES.has(h.type)) {
      if (size > TAR_META_MAX_BYTES) throw new TarMetaTooLarge(`a tar ${h.type} entry of ${size} bytes (over ${TAR_META_MAX_BYTES}): fecr writes none; not read`);
      meta = { type: h.type, size };
      want = Math.ceil(size / BLOCK) * BLOCK;
      if (want === 0) {
        meta = undefined;
        want = BLOCK;
      }
      return;
    }
    const data = paxSize !== undefined && Number.isFinite(paxSize) ? paxSize : size;
    paxSize = undefined;
    skip = Math.ceil(data / BLOCK) * BLOCK;
  };

  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      try {
        let at = 0;
        while (!done && at < chunk.length) {
          if (skip > 0) {
            const n = Math.min(skip, chunk.length - at);
            skip -= n;
            at += n;
            continue;
          }
          const n = Math.min(want - have, chunk.length - at);
          parts.push(chunk.subarray(at, at + n));
          have += n;
          at += n;
          if (have === want) {
            const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
            parts = [];
            have = 0;
            onCollected(buf);
          }
        }
        cb(null, chunk);
      } catch (e) {
        cb(e as Error);
      }
    },
  });
}
