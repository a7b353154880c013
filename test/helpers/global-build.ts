// vitest globalSetup: the tests run on the sources, but a few spawn the real binary (bin/fecr.js → dist/fecr.js:
// test/build.test.ts, test/cli-terminal.test.ts, test/readme-tour.test.ts, …). dist/ is built here once per run
// (scripts/bundle.mjs, about a second), unless the last build is newer than every file it is made of.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');
/** What dist/ is made of (node_modules through the lockfile). */
const INPUTS = ['src', 'scripts/bundle.mjs', 'package.json', 'package-lock.json'];

function newest(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

export async function setup(): Promise<void> {
  // The build's own record (scripts/bundle.mjs writes it last), as old as the build.
  const built = statSync(join(ROOT, 'dist/meta.json'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (built > Math.max(...INPUTS.map((p) => newest(join(ROOT, p))))) return;
  const { build } = (await import(join(ROOT, 'scripts/bundle.mjs'))) as { build: () => Promise<unknown> };
  await build();
}
