/**
 * XSD validation benchmark (`npx tsx bench/xsd.ts`): per-document cost of the xmllint binary and
 * xmllint-wasm backends for 1 document and batches of 100 and 1 000 (a fixture FE, placeholder signature).
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseDocument } from '../src/core/document.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { createXsdValidator, withPlaceholderSignature } from '../src/adapters/xsd/index.js';
import { ISSUER } from '../test/helpers/bodies.js';

const body = JSON.parse(readFileSync(new URL('../fixtures/documents/02-fe-bienes-servicios-descuentos.json', import.meta.url), 'utf8'));
const parsed = parseDocument(body, ISSUER);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));
const xml = withPlaceholderSignature(buildComprobanteXml(parsed.doc, parsed.totals));

async function perDoc(prefer: 'binary' | 'wasm', n: number): Promise<number> {
  const v = createXsdValidator({ prefer });
  await v.validate(xml, 'FE'); // warm-up (wasm: worker and schema load)
  const docs = Array.from({ length: n }, () => xml);
  const t = process.hrtime.bigint();
  const results = await v.validate(docs, 'FE');
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (!results.every((r) => r.valid)) throw new Error('invalid');
  return Math.round((ms / n) * 100) / 100;
}

const out: Record<string, Record<string, number>> = {};
for (const backend of ['binary', 'wasm'] as const) {
  out[backend] = { one: await perDoc(backend, 1), batch100: await perDoc(backend, 100), batch1000: await perDoc(backend, 1000) };
}
console.log(JSON.stringify({ machine: `${os.cpus()[0]?.model} × ${os.cpus().length}, Node ${process.version}`, date: new Date().toISOString(), bytes: xml.length, msPerDocument: out }, null, 2));
process.exit(0);
