// What `npm run build` makes (npm test builds first): the CLI shell bundle that bin/fecr.js loads, and the
// vendor bundles every module reaches through package.json "imports" (scripts/bundle.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.js';
import type { Ctx } from '../src/cli/context.js';

const root = new URL('..', import.meta.url).pathname;
const VENDORED = ['kysely', 'jose', 'fast-xml-parser'];

function fecr(args: string[]) {
  return spawnSync(process.execPath, [join(root, 'bin/fecr.js'), ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', COLUMNS: '100' } });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the CLI shell bundle', () => {
  it('bin/fecr.js runs dist/cli/shell.js, whose command tree is the one of the sources', () => {
    expect(existsSync(join(root, 'dist/cli/shell.js'))).toBe(true);
    const out: string[] = [];
    const ctx = { io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true }, env: {}, cwd: root }, debug: false, now: () => new Date(), randomBytes: () => new Uint8Array() } as unknown as Ctx;
    const names = (cmd: ReturnType<typeof buildProgram>, prefix = ''): string[] =>
      cmd.commands.flatMap((c) => [`${prefix}${c.name()}`, ...names(c, `${prefix}${c.name()} `)]);
    const expected = names(buildProgram(ctx));
    expect(expected.length).toBeGreaterThan(30);
    const help = fecr(['--help']);
    expect(help.status).toBe(0);
    for (const top of new Set(expected.map((n) => n.split(' ')[0]!))) expect(help.stdout).toMatch(new RegExp(`^  ${top}\\b`, 'm'));
    // A nested command's own help, its action's module loaded by a path relative to the bundle.
    const sub = fecr(['emisor', 'show', '--help']);
    expect(sub.status).toBe(0);
    expect(sub.stdout).toMatch(/Usage: fecr emisor show/);
    const bad = fecr(['config', 'get', 'nonsense']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown key "nonsense"/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('vendor bundles', () => {
  it('each vendored package is one file in dist/vendor, and no module imports the package directly', () => {
    for (const name of VENDORED) {
      const file = join(root, 'dist/vendor', `${name}.js`);
      const text = readFileSync(file, 'utf8');
      // The package's code itself, not tsc's re-export of it (which the bundle replaces).
      expect(text).not.toMatch(new RegExp(`^(import|export)\\b.*from ['"]${name}['"]`, 'm'));
      expect(text.length).toBeGreaterThan(50_000);
    }
    // One copy of each at run time: kysely compares its adapters with instanceof.
    const direct = sourceFiles(join(root, 'src'))
      .filter((f) => !f.includes('/src/vendor/'))
      .filter((f) => VENDORED.some((name) => new RegExp(`(from|import\\()\\s*['"]${name}['"]`).test(readFileSync(f, 'utf8'))));
    expect(direct).toEqual([]);
  });
});
