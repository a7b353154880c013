#!/usr/bin/env node
// fecr's entry point: the CLI bundle in dist/ (scripts/bundle.mjs; built by `npm install` / `npm run build`).
// CommonJS (bin/package.json), like the start of the bundle it requires: a help never starts the ES module loader.
'use strict';
for (const stream of [process.stdout, process.stderr]) {
  // `fecr … | head` closes the pipe early: that is not an error.
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
let cli;
try {
  cli = require('../dist/fecr.cjs');
} catch (e) {
  if (e.code !== 'MODULE_NOT_FOUND' || !e.message.includes('dist/fecr.cjs')) throw e;
  process.stderr.write('error: fecr is not built yet: run "npm run build" in the fecr folder\n');
  process.exit(1);
}
cli.main(process.argv.slice(2)).then((code) => (process.exitCode = code));
