// What `npm pack` ships (issue 13): the bin and the bundle it loads (dist/, built by the vitest globalSetup;
// nothing else of dist/), the docs the CLI's messages cite (docs/batch-csv.md), the fixtures `fecr demo` and
// `fecr init` read, the XSDs, and the MIT LICENSE package.json names; its name is @fecr/cli (the command `fecr`).
// Lifecycle scripts are skipped. A real pack and global install, then `fecr demo`: scripts/check-global-install.mjs
// (`npm run check:install`, 1-2 minutes: not part of the suite).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function pkgVersion(): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

describe('the npm package', () => {
  it('ships the bin and its bundle, the docs the CLI cites, the fixtures, the XSDs, README and LICENSE', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], { cwd: root, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const packed = (JSON.parse(r.stdout) as { name: string; filename: string; files: { path: string }[] }[])[0]!;
    // A name fecr can publish under (issue 28: the unscoped `fecr` is not ours): scoped, the command still `fecr`.
    expect([packed.name, packed.filename]).toEqual(['@fecr/cli', `fecr-cli-${pkgVersion()}.tgz`]);
    const files = new Set(packed.files.map((f) => f.path));
    for (const f of ['bin/fecr.js', 'bin/package.json', 'dist/fecr.cjs', 'dist/cli.cjs', 'dist/cli.cjs.cache', 'dist/thread-worker.js', 'dist/validate-worker.js', 'README.md', 'LICENSE', 'docs/batch-csv.md', 'fixtures/documents/01-fe-servicios-13.json', 'fixtures/batch/example.csv', 'schemas/xsd/2026/v4.4/FacturaElectronica_V4.4.xsd']) {
      expect(files.has(f), f).toBe(true);
    }
    // Every file of the build (dist/meta.json, the build's record, lists them; it is not shipped itself).
    const meta = JSON.parse(readFileSync(join(root, 'dist/meta.json'), 'utf8')) as { outputs: Record<string, unknown> };
    for (const f of Object.keys(meta.outputs)) expect(files.has(f), f).toBe(true);
    // Only the bundle of dist/, and no sources or build configuration.
    expect([...files].filter((f) => /^dist\/.*(?<!\.c?js|\.cache)$|^(src|test|scripts)\/|tsconfig/.test(f))).toEqual([]);
    // Every docs/… file a message or comment of the sources points at is in the package.
    const cited = new Set(sourceFiles(join(root, 'src')).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/docs\/[a-z0-9-]+\.md/g)].map((m) => m[0])));
    expect(cited.size).toBeGreaterThan(0);
    for (const doc of cited) expect(files.has(doc), doc).toBe(true);
    // Nothing of a local run.
    expect([...files].filter((f) => /\.(results\.jsonl|journal)$|^fecr-demo\/|master\.key$/.test(f))).toEqual([]);
  });

  it('LICENSE is the MIT license package.json names, for the fecr authors', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; license: string; bin: Record<string, string>; publishConfig?: { access?: string } };
    expect(pkg.license).toBe('MIT');
    expect(pkg.name).toBe('@fecr/cli');
    expect(pkg.bin).toEqual({ fecr: 'bin/fecr.js' });
    // A scoped package is published restricted unless it says otherwise.
    expect(pkg.publishConfig?.access).toBe('public');
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the fecr authors\n/);
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  });
});
