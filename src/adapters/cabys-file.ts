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

/** The catalogue's codes, for a membership check. */
export function readCabysCodes(file = DEFAULT_CABYS_FILE): Set<string> {
  return new Set(readCabysRows(file).map((r) => r.id));
}
