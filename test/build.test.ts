// What `npm run build` makes (npm test builds first): the CLI shell bundle that bin/fecr.js loads, and the
// vendor bundles every module reaches through package.json "imports" (scripts/bundle.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.js';
import type { Ctx } from '../src/cli/context.js';

const root = new URL('..', import.meta.url).pathname;
const VENDORED = ['kysely', 'jose', 'fast-xml-parser'];

function fecr(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(root, 'bin/fecr.js'), ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', COLUMNS: '100', ...env } });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the CLI shell bundle', () => {
  it('bin/fecr.js runs dist/cli/shell.cjs, whose command tree is the one of the sources', () => {
    expect(existsSync(join(root, 'dist/cli/shell.cjs'))).toBe(true);
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
    // The examples of every help are part of the shell (src/cli/examples.ts), and so is the tree `completion` walks.
    expect(sub.stdout).toMatch(/\nExamples:\n {2}fecr emisor show /);
    const completion = fecr(['completion', 'bash']);
    expect(completion.status, completion.stderr).toBe(0);
    expect(completion.stdout).toContain('complete -o default -F _fecr fecr');
    for (const top of new Set(expected.map((n) => n.split(' ')[0]!))) expect(completion.stdout).toMatch(new RegExp(`'fecr'\\) echo '[^']*\\b${top}\\b`));
    const bad = fecr(['config', 'get', 'nonsense']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown key "nonsense"/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it("errors of the commands' modules keep their exit codes, and --profile reaches them, through the shell", () => {
    const home = mkdtempSync(join(tmpdir(), 'fecr-build-'));
    try {
      const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), FECR_NO_KEYCHAIN: '1' };
      // --profile is recorded by the shell's hook and read by the command's module.
      expect(fecr(['config', 'set', 'mode', 'remote', '--profile', 'hosted'], env).status).toBe(0);
      expect(fecr(['config', 'get', 'mode', '--profile', 'hosted'], env).stdout).toBe('remote\n');
      expect(fecr(['config', 'get', 'mode'], env).stdout).toBe('local\n');
      // A SilentExit thrown by a command's module: its exit code, and no "internal error".
      writeFileSync(join(home, 'bad.json'), JSON.stringify({ tipoDoc: 'FE' }));
      const invalid = fecr(['validate', join(home, 'bad.json')], env);
      expect(invalid.status).toBe(1);
      expect(invalid.stdout + invalid.stderr).not.toMatch(/internal error/);
      expect(invalid.stdout + invalid.stderr).toMatch(/emisor|numeroReferencia|receptor/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
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
