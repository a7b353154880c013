// Writes the emulator's rule table (src/emulator/rules.ts) into README.md between its markers.
// Usage: npx tsx scripts/rules-table.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { rulesMarkdown } from '../src/emulator/rules.js';

const file = new URL('../README.md', import.meta.url);
const readme = readFileSync(file, 'utf8');
const start = '<!-- rules:start (generated from src/emulator/rules.ts by scripts/rules-table.ts) -->';
const end = '<!-- rules:end -->';
const a = readme.indexOf(start);
const b = readme.indexOf(end);
if (a < 0 || b < a) throw new Error(`README.md lacks the markers ${start} … ${end}`);
writeFileSync(file, readme.slice(0, a + start.length) + '\n' + rulesMarkdown() + '\n' + readme.slice(b));
console.log('README.md: rule table written');
