/**
 * `npm run build` (and `npm install`, through `prepare`): the CLI as one esbuild ES module bundle in dist/.
 * tsc does not emit anything (`npm run typecheck` checks the types); the tests run on the sources.
 *
 * - Entries: src/cli/program.ts as dist/fecr.js (bin/fecr.js imports its `main`), and every worker module, i.e.
 *   every src/**\/*-worker.ts, as dist/<name>.js (the `workerModule(name, import.meta.url)` of the caller finds it
 *   next to the chunk it runs from). A new worker entry only has to follow that name; there is no list.
 * - Code splitting: what a command loads with import() inside its action (its run.ts, the service, the store,
 *   the emulator…) becomes chunks of its own, loaded when the action runs. `fecr --help` loads dist/fecr.js and
 *   the few chunks it imports statically (command definitions, help texts, commander): no npm package from
 *   node_modules (test/build.test.ts checks it).
 * - Every output file sits directly in dist/, so each module finds the package root at the same depth:
 *   src/core/package-root.ts reads FECR_BUNDLE, defined here.
 * - npm packages of pure JavaScript are bundled (kysely alone is 262 files, which Node 20 would open, compile and
 *   link one by one); the EXTERNAL ones below stay in node_modules, each for the reason given. One copy of each
 *   module, hence of each error class, exists at run time.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

/** Packages that cannot be bundled, and why. */
const EXTERNAL = {
  'better-sqlite3': 'native addon (bindings)',
  '@napi-rs/keyring': 'native addon, one package per platform',
  '@node-rs/argon2': 'native addon, one package per platform',
  'pg-native': "pg's optional native client (not installed)",
  pdfkit: 'reads its font metrics (.afm) from files next to its code',
  'xmllint-wasm': 'loads its .wasm file and its worker script from its own folder',
  piscina: 'starts its worker script from its own folder',
  'graphile-worker': 'its own CLI, configuration loader and migrations (hosted mode only)',
};

/**
 * commander requires node:child_process at its top for executable subcommands, which fecr has none of; that
 * module and what it loads (net, dgram, streams) are ≈ 7 ms of every start. commander gets a stand-in that
 * loads the real module on first use.
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'child_process', namespace: 'lazy' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({
      contents: "let m;const real=()=>(m??=require('node:child_process'));module.exports={spawn:(...a)=>real().spawn(...a)};",
      loader: 'js',
    }));
  },
};

/** Every src/**\/*-worker.ts: a worker thread's module, hence an entry point of its own. */
function workerEntries(dir = src) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return workerEntries(p);
    return name.endsWith('-worker.ts') ? [p] : [];
  });
}

function entryPoints() {
  const entries = { fecr: path.join(src, 'cli/program.ts') };
  for (const file of workerEntries()) {
    const name = path.basename(file, '.ts');
    if (entries[name]) throw new Error(`two worker modules named ${name}.ts: ${entries[name]} and ${file}`);
    entries[name] = file;
  }
  return entries;
}

/**
 * Files of an earlier build that are not part of this one are left this long after the last build that had them (a
 * fecr started before this build may still import them).
 */
const STALE_AFTER_MS = 10 * 60_000;

/** Bundled CommonJS packages require Node's built-in modules: an ES module has no `require` of its own. */
const ESM_BANNER = "import{createRequire as __fecrCreateRequire}from'node:module';const require=__fecrCreateRequire(import.meta.url);";

export async function build() {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: entryPoints(),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: dist,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    external: Object.keys(EXTERNAL),
    // Less source to scan at every start; names stay (stack traces with --debug stay readable). FECR_BUILD_READABLE=1
    // keeps the lines (a CPU profile's line numbers then point at code: bench:batch with BENCH_PROF).
    minifyWhitespace: !process.env.FECR_BUILD_READABLE,
    minifySyntax: !process.env.FECR_BUILD_READABLE,
    legalComments: 'none',
    define: { FECR_BUNDLE: 'true' },
    banner: { js: ESM_BANNER },
    plugins: [lazyChildProcess],
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const { files, meta } = await commonJsStart(result);
  mkdirSync(dist, { recursive: true });
  const written = new Set();
  let changed = 0;
  // Chunks before entries, each file replaced in one rename: a fecr started meanwhile loads one build or the other.
  files.sort((a, b) => Number(isEntry(a.path)) - Number(isEntry(b.path)));
  for (const file of files) {
    written.add(file.path);
    if (writeIfChanged(file.path, file.contents)) changed++;
  }
  const cache = `${START}.cache`;
  written.add(cache);
  if (writeIfChanged(cache, codeCache())) changed++;
  removeStale(written);
  writeFileSync(path.join(dist, 'meta.json'), meta);
  return { files: written.size, changed };
}

/** Writes a file in one rename, unless it holds these bytes already; true when written. */
function writeIfChanged(file, contents) {
  if (existsSync(file) && readFileSync(file).equals(contents)) {
    // Unchanged, but part of this build: its time says so (removeStale).
    utimesSync(file, new Date(), new Date());
    return false;
  }
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, file);
  return true;
}

function isEntry(file) {
  return !/-[A-Z0-9]{8}\.c?js$/.test(file);
}

/** The start of the CLI: the command tree, commander and what they import (CommonJS, with a code cache). */
const START = path.join(dist, 'cli.cjs');

/**
 * What every `fecr` runs before its command: dist/fecr.js and the chunks it imports statically (the command tree,
 * commander, the CLI's errors and IO). They become CommonJS (dist/cli.cjs and chunk-*.cjs), so that a help, a
 * usage error or --version never start Node's ES module loader (≈ 6 ms), and bin/fecr.js loads dist/cli.cjs through
 * dist/fecr.cjs with V8's code cache of a `fecr --help` run (codeCache below; ≈ 10 ms). The commands' chunks stay
 * ES modules: they import the same .cjs files (Node shares the instance with require), so every module, and every
 * error class, still exists once. Returns the output files and the metafile with the new names.
 */
async function commonJsStart(result) {
  const meta = result.metafile;
  const start = new Set();
  const walk = (f) => {
    if (start.has(f)) return;
    start.add(f);
    for (const i of meta.outputs[f].imports) if (i.kind === 'import-statement' && !i.external) walk(i.path);
  };
  walk('dist/fecr.js');
  const renamed = new Map([...start].map((f) => [path.basename(f), f === 'dist/fecr.js' ? path.basename(START) : path.basename(f).replace(/\.js$/, '.cjs')]));
  const relink = (text) => text.replace(/"\.\/([\w-]+\.js)"/g, (m, name) => (renamed.has(name) ? `"./${renamed.get(name)}"` : m));
  const files = await Promise.all(
    result.outputFiles.map(async (file) => {
      const name = path.basename(file.path);
      let text = file.text;
      if (renamed.has(name)) {
        if (!text.startsWith(ESM_BANNER)) throw new Error(`${name}: no banner to remove`);
        const cjs = await esbuild.transform(text.slice(ESM_BANNER.length), {
          format: 'cjs',
          platform: 'node',
          target: 'node20',
          minifyWhitespace: true,
          define: { 'import.meta.url': '__fecrModuleUrl' },
          banner: "'use strict';const __fecrModuleUrl=require('node:url').pathToFileURL(__filename).href;",
        });
        text = cjs.code;
        // dist/cli.cjs is the function the loader compiles (a string of its own: no copy at every start).
        if (name === 'fecr.js') text = `${WRAPPER}${viaLoaderImport(text)}\n})`;
      }
      return { path: path.join(dist, renamed.get(name) ?? name), contents: Buffer.from(relink(text)) };
    }),
  );
  let metaText = JSON.stringify(meta);
  for (const [from, to] of renamed) metaText = metaText.replaceAll(`"dist/${from}"`, `"dist/${to}"`);
  files.push({ path: path.join(dist, 'fecr.cjs'), contents: Buffer.from(LOADER) });
  return { files, meta: metaText };
}

/**
 * Code compiled by vm.Script cannot import() on Node 20 (not without --experimental-vm-modules): dist/cli.cjs
 * loads the commands' chunks with `__fecrImport("./chunk.js")`, which the loader's own import() serves.
 */
function viaLoaderImport(text) {
  const out = text.replace(/\bimport\(("\.\/[\w-]+\.c?js")\)/g, '__fecrImport($1)');
  if (/\bimport\(/.test(out)) throw new Error('dist/cli.cjs imports something other than a chunk of its own: see viaLoaderImport');
  return out;
}

/** What dist/cli.cjs is: a CommonJS module's function (exports, require, module, __filename, __dirname) and __fecrImport. */
const WRAPPER = '(function (exports, require, module, __filename, __dirname, __fecrImport) {';

/** Compiles dist/cli.cjs (its function, as Node compiles a CommonJS module), with `cachedData` if given. */
const COMPILE = `
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const vm = require('node:vm');
function compile(file, cachedData) {
  const script = new vm.Script(readFileSync(file, 'utf8'), { filename: file, cachedData });
  const cli = new Module(file, module);
  cli.filename = file;
  cli.paths = Module._nodeModulePaths(path.dirname(file));
  const importChunk = (specifier) => import(new URL(specifier, pathToFileURL(file)).href);
  script.runInThisContext().call(cli.exports, cli.exports, Module.createRequire(file), cli, file, path.dirname(file), importChunk);
  return { script, exports: cli.exports };
}`;

/**
 * dist/fecr.cjs, what bin/fecr.js requires: dist/cli.cjs compiled with the code cache the build made
 * (dist/cli.cjs.cache). V8 refuses a cache made by another Node version or for another source; the code then
 * compiles as usual.
 */
const LOADER = `'use strict';
// Generated by scripts/bundle.mjs: dist/cli.cjs with V8's code cache dist/cli.cjs.cache.
${COMPILE.trim()}
const file = path.join(__dirname, 'cli.cjs');
let cachedData;
try {
  cachedData = readFileSync(file + '.cache');
} catch {}
module.exports = compile(file, cachedData).exports;
`;

/**
 * V8's code cache of dist/cli.cjs after a `fecr --help` (the functions every start runs are compiled by then),
 * made by a Node process of this Node version.
 */
function codeCache() {
  const script = `${COMPILE}
    const { script, exports } = compile(${JSON.stringify(START)});
    const sink = { write: () => true };
    exports.main(['--help'], { io: { stdin: process.stdin, stdout: sink, stderr: sink, env: {}, cwd: '/', stdoutIsTTY: false, stdinIsTTY: false } }).then((code) => {
      if (code !== 0) throw new Error('fecr --help: exit ' + code);
      process.stdout.write(script.createCachedData().toString('base64'));
    });`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`the code cache of dist/cli.cjs: ${r.stderr}`);
  return Buffer.from(r.stdout, 'base64');
}

/** Earlier builds: the tsc tree (folders) goes; files of another build go once they are STALE_AFTER_MS old. */
function removeStale(written) {
  const now = Date.now();
  for (const name of readdirSync(dist)) {
    const p = path.join(dist, name);
    if (written.has(p) || name === 'meta.json') continue;
    const st = statSync(p, { throwIfNoEntry: false }); // a concurrent build may have removed it
    if (!st) continue;
    if (st.isDirectory()) rmSync(p, { recursive: true, force: true });
    else if (now - st.mtimeMs > STALE_AFTER_MS || name.endsWith('.map')) rmSync(p, { force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const { files, changed } = await build();
  console.log(`dist/: ${files} files (${changed} changed) in ${Math.round(performance.now() - started)} ms`);
}
