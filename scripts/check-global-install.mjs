#!/usr/bin/env node
// What a user gets from the published package (issue 28): `npm pack` of this checkout, then `npm install -g` of the
// tarball into a temp prefix with a fresh HOME (npm's nodedir kept: better-sqlite3 may build from source against
// it), then the `fecr` command that install puts on PATH: `fecr --version` is package.json's version and `fecr demo`
// in an empty folder exits 0 with every kind aceptado. Prints the time of each step. Slow (the install fetches the
// dependencies and may compile better-sqlite3: 1-2 minutes), so it is this script rather than a test of the suite:
//   npm run check:install            (or: node scripts/check-global-install.mjs [--keep])
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const keep = process.argv.includes('--keep');
const base = mkdtempSync(join(tmpdir(), 'fecr-global-install-'));
const prefix = join(base, 'prefix');
const home = join(base, 'home');
const work = join(base, 'work');
for (const d of [prefix, home, work]) mkdirSync(d, { recursive: true });

// The caller's npm settings that matter for a native build, carried into the fresh HOME's .npmrc.
const npmrc = [];
for (const key of ['nodedir', 'registry', 'cafile']) {
  const v = execFileSync('npm', ['config', 'get', key], { encoding: 'utf8' }).trim();
  if (v && v !== 'undefined' && v !== 'null') npmrc.push(`${key}=${v}`);
}
writeFileSync(join(home, '.npmrc'), npmrc.join('\n') + '\n');

const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FECR_') && !k.startsWith('XDG_') && !k.startsWith('npm_'))), HOME: home, NO_COLOR: '1', FECR_NO_KEYCHAIN: '1' };
const figures = [];
function step(label, cmd, args, opts = {}) {
  const started = Date.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', env, maxBuffer: 64 << 20, ...opts });
  const s = ((Date.now() - started) / 1000).toFixed(1);
  figures.push(`${label}: ${s} s`);
  if (r.status !== 0) {
    console.error(`${label} failed (exit ${r.status}):\n${r.stderr}\n${r.stdout}`);
    process.exit(1);
  }
  return r.stdout;
}

// prepare's build first (npm pack would run it, its output mixed with the JSON), then the pack itself.
step('npm run build', 'npm', ['run', 'build'], { cwd: root });
const packed = JSON.parse(step('npm pack', 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', base], { cwd: root }));
const tarball = join(base, packed[0].filename);
console.log(`packed ${packed[0].name}@${packed[0].version}: ${packed[0].filename}, ${(packed[0].size / 1e6).toFixed(1)} MB, ${packed[0].entryCount} files`);
step('npm install -g (tarball, temp prefix)', 'npm', ['install', '-g', '--prefix', prefix, tarball], { cwd: base });
const binDir = join(prefix, 'bin');
const pathEnv = { ...env, PATH: `${binDir}:${process.env.PATH}` };
const which = step('which fecr', 'sh', ['-c', 'command -v fecr'], { env: pathEnv }).trim();
if (which !== join(binDir, 'fecr')) throw new Error(`fecr on PATH is ${which}, not the installed one`);
const version = step('fecr --version', 'fecr', ['--version'], { env: pathEnv }).trim();
if (version !== pkg.version) throw new Error(`fecr --version printed ${version}, package.json says ${pkg.version}`);
const demo = step('fecr demo (fresh HOME, empty folder)', 'fecr', ['demo'], { env: pathEnv, cwd: work });
const accepted = demo.split('\n').filter((l) => /\taceptado\t/.test(l)).length;
if (accepted !== 9) throw new Error(`fecr demo: ${accepted} documents aceptado, not 9:\n${demo}`);
console.log(`fecr ${version} from ${packed[0].name}: ${which}; fecr demo: ${accepted} kinds aceptado`);
for (const f of figures) console.log(`  ${f}`);
if (keep) console.log(`kept: ${base}`);
else rmSync(base, { recursive: true, force: true });
