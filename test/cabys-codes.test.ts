// fixtures/cabys-codes.txt is derived from fixtures/cabys.json.gz (scripts/cabys-codes.mjs): exactly its codes,
// sorted, and the index answers as the catalogue does.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readCabysCodes, readCabysRows } from '../src/adapters/cabys-file.js';

describe('the CABYS code index', () => {
  const rows = readCabysRows();
  const codes = readCabysCodes();

  it('is the catalogue\'s codes, sorted, one a line (run node scripts/cabys-codes.mjs after replacing cabys.json.gz)', () => {
    const text = readFileSync(new URL('../fixtures/cabys-codes.txt', import.meta.url), 'utf8');
    expect(text).toBe([...new Set(rows.map((r) => r.id))].sort().join('\n') + '\n');
    expect(codes.size).toBe(rows.length);
  });

  it('finds every code of the catalogue and nothing else', () => {
    for (const r of rows) expect(codes.has(r.id)).toBe(true);
    for (const c of ['0000000000000', '9999999999999', '1234567890123', '831120000000', '83112000000000', 'abcdefghijklm', '']) expect(codes.has(c), c).toBe(false);
    const set = new Set(rows.map((r) => r.id));
    for (let i = 0; i < 2000; i++) {
      const c = String(Math.floor(Math.random() * 1e13)).padStart(13, '0');
      expect(codes.has(c)).toBe(set.has(c));
    }
  });
});
