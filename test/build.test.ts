// What `npm run build` makes (scripts/bundle.mjs; the vitest globalSetup test/helpers/global-build.ts builds it
// once per run): one bundle of the CLI in dist/, a chunk per command's code, that bin/fecr.js runs. Its start (the
// command tree, commander) is CommonJS with a code cache (dist/fecr.cjs → dist/cli.cjs); the rest ES modules.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { profileBackend, type Ctx } from '../src/cli/context.js';
import { buildProgram } from '../src/cli/program.js';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');

function fecr(args: string[], env: Record<string, string> = {}, bin = join(root, 'bin/fecr.js')) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', COLUMNS: '100', ...env } });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

interface Meta {
  outputs: Record<string, { bytes: number; imports: { path: string; kind: string; external?: boolean }[]; inputs: Record<string, unknown>; entryPoint?: string }>;
}
const meta = (): Meta => JSON.parse(readFileSync(join(dist, 'meta.json'), 'utf8')) as Meta;

/** The output files an output loads before it runs (its static imports, transitively), and the packages it imports. */
function staticClosure(m: Meta, start: string): { files: string[]; external: string[] } {
  const files = new Set<string>();
  const external = new Set<string>();
  const walk = (f: string) => {
    if (files.has(f)) return;
    files.add(f);
    for (const i of m.outputs[f]!.imports) {
      if (i.kind !== 'import-statement') continue;
      if (i.external) external.add(i.path);
      else walk(i.path);
    }
  };
  walk(start);
  return { files: [...files], external: [...external] };
}

describe('the CLI bundle', () => {
  it('bin/fecr.js runs the bundle, whose command tree is the one of the sources', () => {
    for (const f of ['fecr.cjs', 'cli.cjs', 'cli.cjs.cache']) expect(existsSync(join(dist, f)), f).toBe(true);
    const out: string[] = [];
    const ctx = { io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true }, env: {}, cwd: root }, debug: false, now: () => new Date(), randomBytes: () => new Uint8Array(), backend: profileBackend } as unknown as Ctx;
    const names = (cmd: ReturnType<typeof buildProgram>, prefix = ''): string[] =>
      cmd.commands.flatMap((c) => [`${prefix}${c.name()}`, ...names(c, `${prefix}${c.name()} `)]);
    const expected = names(buildProgram(ctx));
    expect(expected.length).toBeGreaterThan(30);
    const help = fecr(['--help']);
    expect(help.status).toBe(0);
    for (const top of new Set(expected.map((n) => n.split(' ')[0]!))) expect(help.stdout).toMatch(new RegExp(`^  ${top}\\b`, 'm'));
    // A nested command's own help, with its examples (src/cli/examples.ts).
    const sub = fecr(['emisor', 'show', '--help']);
    expect(sub.status).toBe(0);
    expect(sub.stdout).toMatch(/Usage: fecr emisor show/);
    expect(sub.stdout).toMatch(/\nExamples:\n {2}fecr emisor show /);
    // The tree `completion` walks.
    const completion = fecr(['completion', 'bash']);
    expect(completion.status, completion.stderr).toBe(0);
    expect(completion.stdout).toContain('complete -o default -F _fecr fecr');
    for (const top of new Set(expected.map((n) => n.split(' ')[0]!))) expect(completion.stdout).toMatch(new RegExp(`'fecr'\\) echo '[^']*\\b${top}\\b`));
    const bad = fecr(['config', 'get', 'nonsense']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown key "nonsense"/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    // package.json, read through the package root (src/core/package-root.ts) from dist/.
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(fecr(['--version']).stdout).toBe(`${pkg.version}\n`);
  });

  it("the commands' errors keep their exit codes, and --profile reaches them through the context", () => {
    const home = mkdtempSync(join(tmpdir(), 'fecr-build-'));
    try {
      const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), FECR_NO_KEYCHAIN: '1' };
      expect(fecr(['config', 'set', 'mode', 'remote', '--profile', 'hosted'], env).status).toBe(0);
      expect(fecr(['config', 'get', 'mode', '--profile', 'hosted'], env).stdout).toBe('remote\n');
      expect(fecr(['--profile', 'hosted', 'config', 'get', 'mode'], env).stdout).toBe('remote\n');
      expect(fecr(['config', 'get', 'mode'], env).stdout).toBe('local\n');
      // A SilentExit thrown in a command's chunk: its exit code, and no "internal error".
      writeFileSync(join(home, 'bad.json'), JSON.stringify({ tipoDoc: 'FE' }));
      const invalid = fecr(['validate', join(home, 'bad.json')], env);
      expect(invalid.status).toBe(1);
      expect(invalid.stdout + invalid.stderr).not.toMatch(/internal error/);
      expect(invalid.stdout + invalid.stderr).toMatch(/emisor|numeroReferencia|receptor/);
      // A ClientError of the client's chunks (an unknown profile): a usage error, exit 2.
      const unknown = fecr(['status', '50601012600310112345600100001010000000001100000001', '--profile', 'nope'], env);
      expect(unknown.status, unknown.stderr).toBe(2);
      expect(unknown.stderr).toMatch(/^error: .*nope/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('one copy of each error class at run time: each is defined once in dist/', () => {
    const classes = ['src/cli/errors.ts', 'src/client/errors.ts', 'src/client/backend.ts', 'src/service/service-error.ts', 'src/store/faults.ts'].flatMap((f) =>
      [...readFileSync(join(root, f), 'utf8').matchAll(/^export class (\w+) extends/gm)].map((m) => m[1]!),
    );
    expect(classes).toEqual(expect.arrayContaining(['UserError', 'UsageError', 'SilentExit', 'ClientError', 'BackendError', 'StoreFault']));
    // Files of an earlier build may still be there (scripts/bundle.mjs leaves them a while): count in this build's.
    // (The minifier writes `class X extends` as `X=class extends`, or `X=class _X extends` when X names itself.)
    const current = Object.keys(meta().outputs).map((f) => readFileSync(join(root, f), 'utf8')).join('\n');
    for (const name of classes) expect(current.match(new RegExp(`\\b(class ${name}\\d*|${name}\\d*=class(?: _${name}\\d*)?) extends\\b`, 'g')), name).toHaveLength(1);
    // …and this build's files are all there.
    for (const f of Object.keys(meta().outputs)) expect(existsSync(join(root, f)), f).toBe(true);
  });

  it("`fecr --help` loads the command tree and commander only: no package of node_modules, no command's code", () => {
    const m = meta();
    const { files, external } = staticClosure(m, 'dist/cli.cjs');
    // The start is CommonJS: no ES module loader for a help.
    expect(files.every((f) => f.endsWith('.cjs')), files.join(' ')).toBe(true);
    expect(external.filter((e) => !e.startsWith('node:'))).toEqual([]);
    const inputs = files.flatMap((f) => Object.keys(m.outputs[f]!.inputs));
    expect(inputs).toContain('src/cli/program.ts');
    expect(inputs.filter((i) => i.startsWith('node_modules/') && !i.startsWith('node_modules/commander/'))).toEqual([]);
    // The rooms a command's action loads stay out of the start.
    expect(inputs.filter((i) => /^src\/(service|store|emulator|server|hacienda|adapters|client)\//.test(i))).toEqual([]);
    expect(inputs.filter((i) => /^src\/commands\/[^/]+\/(?!index\.ts$)/.test(i))).toEqual([]);
    const bytes = files.reduce((n, f) => n + m.outputs[f]!.bytes, 0);
    expect(bytes).toBeLessThan(160_000);
    // Node's own modules a help loads: not the ES module loader, not commander's node:child_process (for executable
    // subcommands, which fecr has none of), not node:fs/promises; and V8 takes the build's code cache.
    const probe = [
      `const cli = require(${JSON.stringify(join(dist, 'fecr.cjs'))});`,
      'const sink = { write: () => true };',
      "cli.main(['--help'], { io: { stdin: process.stdin, stdout: sink, stderr: sink, env: {}, cwd: '/', stdoutIsTTY: false, stdinIsTTY: false } }).then((code) => {",
      "  const loaded = (m) => process.moduleLoadList.includes(`NativeModule ${m}`);",
      "  console.log(JSON.stringify({ code, esm: loaded('internal/modules/esm/module_job'), childProcess: loaded('child_process'), fsPromises: loaded('internal/fs/promises') }));",
      '});',
    ].join('\n');
    const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    expect(JSON.parse(r.stdout), r.stderr).toEqual({ code: 0, esm: false, childProcess: false, fsPromises: false });
    const cached = spawnSync(
      process.execPath,
      ['-e', `${readFileSync(join(dist, 'fecr.cjs'), 'utf8').split('\nconst file =')[0]}\nconst f = ${JSON.stringify(join(dist, 'cli.cjs'))}; console.log(compile(f, readFileSync(f + '.cache')).script.cachedDataRejected);`],
      { encoding: 'utf8' },
    );
    expect(cached.stdout, cached.stderr).toBe('false\n');
  });

  it('every worker module is an entry of its own, next to the chunks that start it', () => {
    const workers = sourceFiles(join(root, 'src')).filter((f) => f.endsWith('-worker.ts'));
    expect(workers.map((f) => basename(f))).toEqual(expect.arrayContaining(['thread-worker.ts', 'validate-worker.ts']));
    const entries = Object.values(meta().outputs).flatMap((o) => (o.entryPoint ? [o.entryPoint] : []));
    for (const w of workers) {
      expect(entries).toContain(relative(root, w));
      expect(existsSync(join(dist, basename(w).replace(/\.ts$/, '.js'))), w).toBe(true);
    }
    // Every workerModule('name', …) of the sources names one of them.
    const named = sourceFiles(join(root, 'src')).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/workerModule\('([\w-]+)'/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(0);
    for (const n of named) expect(workers.map((w) => basename(w, '.ts'))).toContain(n);
  });

  it('no module finds the package files by its own depth: they go through src/core/package-root.ts', () => {
    const byDepth = sourceFiles(join(root, 'src'))
      .filter((f) => !f.endsWith('src/core/package-root.ts'))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .flatMap((line, i) => (/new URL\(\s*[`'"]\.\.?\/[^)]*import\.meta\.url/.test(line) ? [`${relative(root, f)}:${i + 1}`] : [])),
      );
    expect(byDepth).toEqual([]);
  });

  it('without dist/, bin/fecr.js says so in one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fecr-unbuilt-'));
    try {
      mkdirSync(join(dir, 'bin'));
      for (const f of ['bin/fecr.js', 'bin/package.json']) copyFileSync(join(root, f), join(dir, f));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      const r = fecr(['--help'], {}, join(dir, 'bin/fecr.js'));
      expect(r.status).toBe(1);
      expect(r.stderr).toBe('error: fecr is not built yet: run "npm run build" in the fecr folder\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
