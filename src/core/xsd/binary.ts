/**
 * XSD validation with the `xmllint` binary (libxml2-utils): the documents of a call are written
 * to a temporary folder and validated by ONE `xmllint --noout --nonet --schema <xsd> <files…>`
 * process (in chunks of `batchSize` files), whose output is mapped back to each document.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SchemaName } from '../xml/kinds.js';
import { batchFileName, parseXmllintOutput } from './output.js';
import { SCHEMAS, schemaPath } from './schemas.js';
import type { XsdResult, XsdValidator } from './types.js';

export interface BinaryValidatorOptions {
  /** Executable name or path; default "xmllint". */
  binary?: string;
  /** Maximum documents per xmllint process; default 1000. */
  batchSize?: number;
}

const found = new Map<string, boolean>();

/** True when the xmllint binary can be run (checked once per process). */
export function hasXmllintBinary(binary = 'xmllint'): boolean {
  let ok = found.get(binary);
  if (ok === undefined) {
    const r = spawnSync(binary, ['--version'], { stdio: 'ignore', timeout: 10_000 });
    ok = r.error === undefined && r.status === 0;
    found.set(binary, ok);
  }
  return ok;
}

interface RunResult {
  code: number | null;
  stderr: string;
}

/**
 * Runs xmllint in its own process group (`detached`): a Ctrl-C at the terminal signals fecr's whole foreground
 * group, and an xmllint killed half-way would turn a valid document into a failed validation. fecr's own SIGINT
 * handling finishes the work in flight, xmllint runs included. A run killed by a signal anyway is retried once.
 */
async function run(binary: string, args: string[], cwd: string): Promise<RunResult> {
  const first = await runOnce(binary, args, cwd);
  return first.code === null ? runOnce(binary, args, cwd) : first;
}

function runOnce(binary: string, args: string[], cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    const chunks: Buffer[] = [];
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr: Buffer.concat(chunks).toString('utf8') }));
  });
}

export class XmllintBinaryValidator implements XsdValidator {
  readonly backend = 'binary' as const;
  private readonly binary: string;
  private readonly batchSize: number;

  constructor(options: BinaryValidatorOptions = {}) {
    this.binary = options.binary ?? 'xmllint';
    this.batchSize = Math.max(1, options.batchSize ?? 1000);
  }

  async validate(xml: string | string[], kind: SchemaName): Promise<XsdResult[]> {
    const docs = typeof xml === 'string' ? [xml] : xml;
    if (docs.length === 0) return [];
    const schema = SCHEMAS[kind];
    if (!schema) throw new Error(`unknown schema ${String(kind)}`);
    const dir = await mkdtemp(join(tmpdir(), 'fecr-xsd-'));
    try {
      const results: XsdResult[] = [];
      for (let start = 0; start < docs.length; start += this.batchSize) {
        const chunk = docs.slice(start, start + this.batchSize);
        const names = chunk.map((_, i) => batchFileName(i));
        await Promise.all(chunk.map((d, i) => writeFile(join(dir, names[i]!), d, 'utf8')));
        const { code, stderr } = await run(this.binary, ['--noout', '--nonet', '--schema', schemaPath(kind), ...names], dir);
        const parsed = parseXmllintOutput(stderr, chunk.length, schema.namespace);
        if (!parsed.complete || (code !== 0 && code !== 1 && code !== 3 && code !== 4)) {
          throw new Error(`xmllint (exit ${code}) could not validate against ${schema.file}: ${parsed.other.join('\n') || stderr}`);
        }
        // The next chunk overwrites the same names; the folder goes at the end.
        results.push(...parsed.results);
      }
      return results;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
