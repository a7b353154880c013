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
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/** Files of an earlier build that are not part of this one are left this long (a running fecr may still load them). */
const STALE_AFTER_MS = 10 * 60_000;

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
    // Less source to scan at every start; names stay (stack traces with --debug stay readable).
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    define: { FECR_BUNDLE: 'true' },
    // Bundled CommonJS packages require Node's built-in modules: an ES module has no `require` of its own.
    banner: { js: "import{createRequire as __fecrCreateRequire}from'node:module';const require=__fecrCreateRequire(import.meta.url);" },
    plugins: [lazyChildProcess],
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(dist, { recursive: true });
  const written = new Set();
  let changed = 0;
  // Chunks before entries, each file replaced in one rename: a fecr started meanwhile loads one build or the other.
  const files = [...result.outputFiles].sort((a, b) => Number(isEntry(a.path)) - Number(isEntry(b.path)));
  for (const file of files) {
    written.add(file.path);
    if (existsSync(file.path) && readFileSync(file.path).equals(file.contents)) continue;
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
    changed++;
  }
  removeStale(written);
  writeFileSync(path.join(dist, 'meta.json'), JSON.stringify(result.metafile));
  return { files: written.size, changed };
}

function isEntry(file) {
  return !/-[A-Z0-9]{8}\.js$/.test(file);
}

/** Earlier builds: the tsc tree (folders) goes; files of another build go once they are STALE_AFTER_MS old. */
function removeStale(written) {
  const now = Date.now();
  for (const name of readdirSync(dist)) {
    const p = path.join(dist, name);
    if (written.has(p) || name === 'meta.json') continue;
    const st = statSync(p);
    if (st.isDirectory()) rmSync(p, { recursive: true, force: true });
    else if (now - st.mtimeMs > STALE_AFTER_MS || name.endsWith('.map')) rmSync(p, { force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const { files, changed } = await build();
  console.log(`dist/: ${files} files (${changed} changed) in ${Math.round(performance.now() - started)} ms`);
}
