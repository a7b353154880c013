// Writes schemas/faults.schema.json, the JSON schema of the fault file, from its zod schema (src/emulator/faults.ts).
// Usage: npx tsx scripts/faults-schema.ts   (test/fault-file.test.ts checks the shipped file is up to date)
import { writeFileSync } from 'node:fs';
import { faultFileJsonSchema } from '../src/emulator/faults.js';

const file = new URL('../schemas/faults.schema.json', import.meta.url);
writeFileSync(file, JSON.stringify(faultFileJsonSchema(), null, 2) + '\n');
console.log('schemas/faults.schema.json written');
