/**
 * Build step after tsc (`npm run build`): two esbuild bundles that cut start-up time. Node 20 loads ES modules
 * file by file (open, stat, compile, link each) and has no compile cache, so many small files cost more than
 * their code. Figures in docs/benchmarks.md.
 *
 * 1. Vendor bundles: each src/vendor/<package>.ts re-exports one npm package; it becomes a single
 *    dist/vendor/<package>.js. Every module imports these packages as '#<package>' (package.json "imports"),
 *    so exactly one copy of each is ever loaded (kysely compares its classes with instanceof). kysely alone is
 *    262 files. Without this step dist/vendor holds tsc's re-exports, which work the same, only slower.
 * 2. The CLI shell: dist/cli/program.js, the command definitions (dist/commands/<noun>/index.js), the CLI's
 *    errors and IO helpers, the help's examples (cli/examples.js) and commander become one CommonJS file,
 *    dist/cli/shell.cjs, which bin/fecr.js (also CommonJS) requires: `fecr --help` loads two files and never
 *    starts Node's ES module loader. Each command's code is loaded by the action that runs it, with import()
 *    and a path relative to the shell. The shell has its own copy of errors.js, so program.ts recognises the
 *    error classes of both copies; the one module with state shared with the commands (client/select.js) is
 *    never part of the shell.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(root, 'dist');
/**
 * What both bundles are: ES modules for the Node versions fecr supports, without comments and whitespace (less
 * source to scan at every start) but with their names (stack traces stay readable).
 */
const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', minifyWhitespace: true, minifySyntax: true, logLevel: 'warning' };

async function vendor() {
  const entries = readdirSync(path.join(root, 'src/vendor')).filter((f) => f.endsWith('.ts'));
  await Promise.all(
    entries.map(async (file) => {
      const outfile = path.join(dist, 'vendor', file.replace(/\.ts$/, '.js'));
      await esbuild.build({
        ...common,
        entryPoints: [path.join(root, 'src/vendor', file)],
        outfile,
        legalComments: 'inline',
      });
      // tsc's source map describes the re-export this bundle replaced.
      rmSync(`${outfile}.map`, { force: true });
    }),
  );
}

async function shell() {
  const entry = path.join(dist, 'cli/program.js');
  const outfile = path.join(dist, 'cli/shell.cjs');
  const inShell = (file) =>
    file === entry ||
    /[\\/]dist[\\/]commands[\\/][^\\/]+[\\/]index\.js$/.test(file) ||
    /[\\/]dist[\\/]cli[\\/](errors|io|examples)\.js$/.test(file) ||
    /[\\/]node_modules[\\/]commander[\\/]/.test(file);
  await esbuild.build({
    ...common,
    // CommonJS, required by bin/fecr.js (CommonJS too): `fecr --help` then never starts Node's ES module loader.
    format: 'cjs',
    entryPoints: [entry],
    outfile,
    define: { 'import.meta.url': '__fecrModuleUrl' },
    banner: { js: "const __fecrModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [
      {
        name: 'fecr-shell',
        setup(build) {
          build.onResolve({ filter: /.*/ }, async (args) => {
            if (args.kind === 'entry-point' || args.pluginData === 'fecr-shell') return undefined;
            if (args.path.startsWith('node:')) return { path: args.path, external: true };
            const resolved = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: 'fecr-shell' });
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            if (args.kind !== 'dynamic-import' && inShell(resolved.path)) return { path: resolved.path };
            if (args.kind !== 'dynamic-import') throw new Error(`the shell would import ${args.path} statically: load it inside the action`);
            if (!args.path.startsWith('.')) return { path: args.path, external: true };
            let rel = path.relative(path.dirname(outfile), resolved.path).split(path.sep).join('/');
            if (!rel.startsWith('.')) rel = `./${rel}`;
            return { path: rel, external: true };
          });
        },
      },
    ],
  });
  rmSync(path.join(dist, 'cli/shell.js'), { force: true }); // the ES module shell of earlier builds
}

if (existsSync(path.join(dist, 'cli/program.js'))) await shell();
