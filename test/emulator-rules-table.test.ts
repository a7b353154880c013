// Issue 24: each emulator rule carries its evidence, in one table (src/emulator/rules.ts) from which the README's
// list is made.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CODIGOS } from '../src/core/rules/hacienda-codes.js';
import { RULES, rulesMarkdown } from '../src/emulator/rules.js';

describe('the emulator rule table', () => {
  it('lists every code the emulator can answer with', () => {
    const listed = new Set(RULES.map((r) => r.codigo));
    for (const [name, code] of Object.entries(CODIGOS)) expect(listed.has(code), `${name} (${code}) is not in src/emulator/rules.ts`).toBe(true);
  });

  it("a rule without Hacienda's evidence answers with an emulator code (-9xxx); Hacienda's codes name their source", () => {
    for (const r of RULES) {
      if (r.source.startsWith('none')) expect(r.codigo === null ? 0 : r.codigo, r.condition).toBeLessThanOrEqual(-9000);
      else expect(r.codigo === null || r.codigo > -9000, r.condition).toBe(true);
    }
  });

  it("is the README's list, as scripts/rules-table.ts writes it", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme, 'README.md is out of date: run npx tsx scripts/rules-table.ts').toContain(rulesMarkdown());
  });
});
