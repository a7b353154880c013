#!/usr/bin/env node
// fecr entry point: runs the compiled CLI in dist/ (built by `npm install` / `npm run build`).
const args = process.argv.slice(2);
// `fecr … | head` closes the pipe early: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e && e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // Fast path: no module graph to load for the most scripted call.
  const { readFileSync } = await import('node:fs');
  process.stdout.write(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version + '\n');
  process.exit(0);
}
let cli;
try {
  // dist/cli/shell.js: the command tree in one file (scripts/bundle.mjs); program.js when only tsc has run
  // since (no shell, or one older than program.js, e.g. under `tsc --watch`).
  const { statSync } = await import('node:fs');
  const mtime = (f) => statSync(new URL(f, import.meta.url), { throwIfNoEntry: false })?.mtimeMs ?? -1;
  cli = mtime('../dist/cli/shell.js') >= mtime('../dist/cli/program.js') ? await import('../dist/cli/shell.js') : await import('../dist/cli/program.js');
} catch (e) {
  if (e && e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dist')) {
    process.stderr.write('error: fecr is not built yet: run "npm run build" in the fecr folder\n');
    process.exit(1);
  }
  throw e;
}
process.exitCode = await cli.main(args);
