// The Hacienda client is light: importing src/hacienda/ loads neither the emulator (src/emulator/) nor Fastify.
// Read two ways: the module graph of src/hacienda/index.ts, followed file by file with the TypeScript compiler
// (every import, re-export and import()), and a fresh Node process that imports it and lists the CommonJS modules
// it loaded (Fastify is CommonJS, so an ES import of it lands in require.cache). Both run against the sources.
import { execFileSync } from 'node:child_process';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleSpecifiers } from './helpers/imports.js';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');


/** The files (src-relative) and packages reached from one file, following relative imports. */
function graph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = [join(SRC, entry)];
  while (todo.length > 0) {
    const file = todo.pop()!;
    const rel = relative(SRC, file);
    if (files.has(rel)) continue;
    files.add(rel);
    for (const text of moduleSpecifiers(file)) {
      if (text.startsWith('.')) todo.push(resolve(dirname(file), text).replace(/\.js$/, '.ts'));
      else packages.add(text);
    }
  }
  return { files, packages };
}

/** Whether a fresh Node process (tsx for the sources) has Fastify among its CommonJS modules after importing `file`. */
function loadsFastify(file: string): boolean {
  const code = [
    "import { createRequire } from 'node:module';",
    'await import(process.argv[1]);',
    'const loaded = Object.keys(createRequire(import.meta.url).cache);',
    'console.log(JSON.stringify(loaded.some((k) => /[\\\\/]node_modules[\\\\/]fastify[\\\\/]/.test(k))));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, join(SRC, file)], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out.trim()) as boolean;
}

describe('the Hacienda client does not carry the emulator', () => {
  it('src/hacienda/index.ts reaches no file of src/emulator/ and no Fastify (control: the emulator does)', () => {
    const client = graph('hacienda/index.ts');
    expect(client.files.has('hacienda/client/reception.ts')).toBe(true);
    expect([...client.files].filter((f) => f.startsWith('emulator/'))).toEqual([]);
    expect([...client.packages].filter((p) => p === 'fastify' || p.startsWith('fastify/') || p.startsWith('@fastify/'))).toEqual([]);
    const emulator = graph('emulator/index.ts');
    expect(emulator.packages.has('fastify')).toBe(true);
  });

  it('importing src/hacienda/index.ts in a fresh process loads no Fastify (control: src/emulator/index.ts does)', () => {
    expect(loadsFastify('hacienda/index.ts')).toBe(false);
    expect(loadsFastify('emulator/index.ts')).toBe(true);
  });
});
