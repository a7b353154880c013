/**
 * XSD validation in-process with xmllint-wasm (libxml2 compiled to WebAssembly; no binary
 * needed). Each call runs one WebAssembly xmllint over a whole batch of documents; the schema
 * files are read from disk once per process and handed over from memory. The XSD and the
 * xmldsig schema are placed in the in-memory file system with the same layout as schemas/xsd/,
 * so the XSD's `import schemaLocation="../../xmldsig-core-schema.xsd"` resolves unchanged.
 */
import type { SchemaName } from '../../core/xml/kinds.js';
import { batchFileName, parseXmllintOutput } from './output.js';
import { readFileSync } from 'node:fs';
import { SCHEMAS, SCHEMAS_DIR_URL, XMLDSIG_XSD } from '../../core/xsd/schemas.js';
import type { XsdResult, XsdValidator } from '../../core/xsd/types.js';

type ValidateXML = typeof import('xmllint-wasm').validateXML;

let loaded: Promise<ValidateXML> | undefined;

function loadWasm(): Promise<ValidateXML> {
  loaded ??= import('xmllint-wasm').then((m) => {
    const mod = m as unknown as { validateXML?: ValidateXML; default?: { validateXML: ValidateXML } };
    const fn = mod.validateXML ?? mod.default?.validateXML;
    if (!fn) throw new Error('xmllint-wasm: validateXML not found');
    return fn;
  });
  return loaded;
}

export interface WasmValidatorOptions {
  /** Maximum documents per WebAssembly run; default 500. */
  batchSize?: number;
  /** Maximum WebAssembly memory in MiB; default 512. */
  maxMemoryMiB?: number;
}

export class XmllintWasmValidator implements XsdValidator {
  readonly backend = 'wasm' as const;
  private readonly batchSize: number;
  private readonly maxMemoryPages: number;

  constructor(options: WasmValidatorOptions = {}) {
    this.batchSize = Math.max(1, options.batchSize ?? 500);
    this.maxMemoryPages = Math.min(65536, Math.max(512, (options.maxMemoryMiB ?? 512) * 16));
  }

  async validate(xml: string | string[], kind: SchemaName): Promise<XsdResult[]> {
    const docs = typeof xml === 'string' ? [xml] : xml;
    if (docs.length === 0) return [];
    const schema = SCHEMAS[kind];
    if (!schema) throw new Error(`unknown schema ${String(kind)}`);
    const validateXML = await loadWasm();
    const schemaFile = { fileName: schema.file, contents: readSchemaFile(schema.file) };
    const dsig = { fileName: XMLDSIG_XSD, contents: readSchemaFile(XMLDSIG_XSD) };
    const results: XsdResult[] = [];
    for (let start = 0; start < docs.length; start += this.batchSize) {
      const chunk = docs.slice(start, start + this.batchSize);
      let output: string;
      try {
        const r = await validateXML({
          xml: chunk.map((contents, i) => ({ fileName: batchFileName(i), contents })),
          schema: [schemaFile],
          preload: [dsig],
          maxMemoryPages: this.maxMemoryPages,
        });
        output = r.rawOutput;
      } catch (err) {
        // Exit codes other than 0/3/4 (e.g. 1 when a document is not well-formed) reject with stderr.
        output = err instanceof Error ? err.message : String(err);
      }
      const parsed = parseXmllintOutput(output, chunk.length, schema.namespace);
      if (!parsed.complete) {
        throw new Error(`xmllint-wasm could not validate against ${schema.file}: ${parsed.other.join('\n') || output}`);
      }
      results.push(...parsed.results);
    }
    return results;
  }
}

const schemaFiles = new Map<string, string>();

/** Contents of a file under schemas/xsd/, read once per process. */
function readSchemaFile(relative: string): string {
  let text = schemaFiles.get(relative);
  if (text === undefined) {
    text = readFileSync(new URL(relative, SCHEMAS_DIR_URL), 'utf8');
    schemaFiles.set(relative, text);
  }
  return text;
}
