// Issue 38: every lazily loaded package resolves in the bundle with the names its importer takes. dist/ is built by
// vitest's globalSetup (scripts/bundle.mjs); its metafile (dist/meta.json) says what each chunk exports. On 5ddcc39
// `fecr webhooks listen` took `{ request }` from `await import('undici')`, whose chunk exports only `default`: every
// forward failed with "request is not a function" from the bundle, while the tests of the sources passed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';
import { lazyImportProblems } from './helpers/lazy-imports.js';

const ROOT = new URL('..', import.meta.url).pathname;

describe('lazy imports of packages in the bundle', () => {
  it("dist/: every name an importer takes from a lazily imported package is one its chunk exports", () => {
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist/meta.json'), 'utf8'));
    expect(lazyImportProblems(meta, ROOT)).toEqual([]);
  });

  it('a planted break (a named export of a CommonJS package taken from a lazy import) is found, naming the file and the name', async () => {
    const dir = mkdtempSync(join(ROOT, '.tmp-lazy-'));
    try {
      const entry = join(dir, 'entry.ts');
      writeFileSync(entry, "export async function post(url: string) {\n  const { request } = await import('undici');\n  const { default: pino } = await import('pino');\n  return [request, pino, url];\n}\n");
      // The options of scripts/bundle.mjs that decide it: one ES module bundle, split, for Node.
      const r = await esbuild.build({ absWorkingDir: ROOT, entryPoints: [entry], bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20', outdir: join(dir, 'out'), metafile: true, write: false, logLevel: 'silent' });
      const rel = entry.slice(ROOT.length);
      expect(lazyImportProblems(r.metafile, ROOT)).toEqual([`${rel}: import('undici') takes request, but the bundle's chunk exports only default`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
