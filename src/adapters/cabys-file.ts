/**
 * The CABYS catalogue fecr ships (fixtures/cabys.json.gz: `[{id, description, tax_percent}]`, tax_percent a fraction;
 * see shared/reference/hacienda/SOURCES.md), read by the emulator (its /fe/cabys and the -400 check) and by `fecr
 * validate` (the same -400 check before sending): one file, one reader.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { packageUrl } from '../core/package-root.js';

export const DEFAULT_CABYS_FILE = fileURLToPath(packageUrl('fixtures/cabys.json.gz'));

export interface CabysRow {
  id: string;
  description: string;
  tax_percent: number;
}

/** A file's text, gunzipped when it starts with gzip's magic bytes. */
export function readMaybeGzip(file: string): string {
  const buf = readFileSync(file);
  const raw = buf.length > 2 && buf[0] === 0x1f && buf[1] === 0x8b ? gunzipSync(buf) : buf;
  return raw.toString('utf8');
}

export function readCabysRows(file = DEFAULT_CABYS_FILE): CabysRow[] {
  return JSON.parse(readMaybeGzip(file)) as CabysRow[];
}

export const DEFAULT_CABYS_CODES_FILE = fileURLToPath(packageUrl('fixtures/cabys-codes.txt'));

/** Whether a code is in the catalogue. */
export interface CabysCodes {
  has(codigo: string): boolean;
  readonly size: number;
}

const WIDTH = 14; // 13 digits and a newline

/**
 * The catalogue's codes from fixtures/cabys-codes.txt (derived from cabys.json.gz by scripts/cabys-codes.mjs, sorted,
 * one code a line): a binary search over the file's bytes, so a check costs nothing to set up (the JSON catalogue
 * takes ≈ 35 ms to read). `file` may also be a catalogue JSON (gzip or not), read whole.
 */
export function readCabysCodes(file = DEFAULT_CABYS_CODES_FILE): CabysCodes {
  if (!file.endsWith('.txt')) {
    const set = new Set(readCabysRows(file).map((r) => r.id));
    return { has: (c) => set.has(c), size: set.size };
  }
  const buf = readFileSync(file);
  if (buf.length % WIDTH !== 0) throw new Error(`${file}: not a list of 13-digit codes`);
  const n = buf.length / WIDTH;
  return {
    size: n,
    has(codigo: string): boolean {
      if (!/^\d{13}$/.test(codigo)) return false;
      const key = Buffer.from(codigo, 'latin1');
      let lo = 0;
      let hi = n - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const c = buf.compare(key, 0, 13, mid * WIDTH, mid * WIDTH + 13);
        // compare(target…) answers for the buffer's slice against the key: negative when the slice sorts first.
        if (c === 0) return true;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
      }
      return false;
    },
  };
}
