#!/usr/bin/env node
// fecr entry point: runs the compiled CLI in dist/ (built by `npm install` / `npm run build`). CommonJS
// (bin/package.json), like the shell it requires: a command that only prints help or a usage error never
// starts Node's ES module loader.
'use strict';
const { readFileSync, statSync } = require('node:fs');
const path = require('node:path');

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
  process.stdout.write(JSON.parse(readFileSync(path.join(__dirname, '../package.json'), 'utf8')).version + '\n');
  process.exit(0);
}

function notBuilt() {
  process.stderr.write('error: fecr is not built yet: run "npm run build" in the fecr folder\n');
  process.exit(1);
}

/** dist/cli/shell.cjs (scripts/bundle.mjs); the ES modules of tsc when the shell is missing or older than them (`tsc --watch`). */
async function load() {
  const mtime = (f) => statSync(path.join(__dirname, f), { throwIfNoEntry: false })?.mtimeMs ?? -1;
  const program = mtime('../dist/cli/program.js');
  if (program < 0) notBuilt();
  if (mtime('../dist/cli/shell.cjs') >= program) return require('../dist/cli/shell.cjs');
  return import('../dist/cli/program.js');
}

load().then(
  async (cli) => {
    process.exitCode = await cli.main(args);
  },
  (e) => {
    if (e && e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dist')) notBuilt();
    throw e;
  },
);
