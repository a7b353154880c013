#!/usr/bin/env node
// fecr entry point: runs the compiled CLI in dist/ (built by `npm install` / `npm run build`).
let cli;
try {
  cli = await import('../dist/cli/program.js');
} catch (e) {
  if (e && e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dist')) {
    process.stderr.write('error: fecr is not built yet: run "npm run build" in the fecr folder\n');
    process.exit(1);
  }
  throw e;
}
process.exitCode = await cli.main(process.argv.slice(2));
