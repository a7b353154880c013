// Java's own XSD validator (test/java/XsdValidate.java, the JDK's Xerces as Hacienda uses it): the first schema
// error of each document, with its message, line and column. Needs `java` (a JDK: the single-file source launcher).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { schemaPath, type SchemaName } from '../../src/core/xsd/schemas.js';

const PROGRAM = fileURLToPath(new URL('../java/XsdValidate.java', import.meta.url));

export interface JavaResult {
  valid: boolean;
  message?: string;
  line?: number;
  column?: number;
}

let found: boolean | undefined;

/** True when a `java` that runs source files (JDK 11+) is on the PATH. */
export function hasJava(): boolean {
  found ??= spawnSync('java', ['-version'], { stdio: 'ignore', timeout: 30_000 }).status === 0;
  return found;
}

/** Java's verdict for every document, in order, in one JVM. */
export function javaFirstErrors(docs: readonly { schema: SchemaName; xml: string }[]): JavaResult[] {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-java-xsd-'));
  try {
    const args: string[] = [PROGRAM];
    let schema: SchemaName | undefined;
    const files = docs.map((d, i) => {
      const file = join(dir, `doc-${i}.xml`);
      writeFileSync(file, d.xml, 'utf8');
      if (d.schema !== schema) args.push(schemaPath((schema = d.schema)));
      args.push(file);
      return file;
    });
    const r = spawnSync('java', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
    if (r.status !== 0) throw new Error(`java XsdValidate failed (${r.status}): ${r.stderr}`);
    const byFile = new Map<string, JavaResult>();
    for (const line of r.stdout.trim().split('\n')) {
      const j = JSON.parse(line) as JavaResult & { file: string };
      byFile.set(j.file, j);
    }
    return files.map((f) => {
      const j = byFile.get(f);
      if (!j) throw new Error(`no answer from java for ${f}`);
      return j;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
