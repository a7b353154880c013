#!/usr/bin/env node
// Writes fixtures/cabys-codes.txt: the codes of fixtures/cabys.json.gz, sorted, one 13-digit code a line. A derived
// index for the -400 check (a binary search over fixed-width lines: no JSON to parse when `fecr validate` starts);
// test/cabys-codes.test.ts checks that it is exactly the catalogue's codes. Run after replacing cabys.json.gz.
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const dir = new URL('../fixtures/', import.meta.url);
const rows = JSON.parse(gunzipSync(readFileSync(new URL('cabys.json.gz', dir))).toString('utf8'));
const codes = [...new Set(rows.map((r) => r.id))].sort();
for (const c of codes) if (!/^\d{13}$/.test(c)) throw new Error(`not a 13-digit CABYS code: ${c}`);
writeFileSync(new URL('cabys-codes.txt', dir), codes.join('\n') + '\n');
console.log(`fixtures/cabys-codes.txt: ${codes.length} codes`);
