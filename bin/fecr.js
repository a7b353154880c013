#!/usr/bin/env node
// fecr's entry point: the CLI bundle dist/fecr.js, built by `npm install` / `npm run build` (scripts/bundle.mjs).
for (const stream of [process.stdout, process.stderr]) {
  // `fecr … | head` closes the pipe early: that is not an error.
  stream.on('error', (e) => (e.code === 'EPIPE' ? process.exit(process.exitCode ?? 0) : Promise.reject(e)));
}
const cli = await import('../dist/fecr.js').catch((e) => {
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !e.message.includes('/dist/fecr.js')) throw e;
  process.stderr.write('error: fecr is not built yet: run "npm run build" in the fecr folder\n');
  process.exit(1);
});
process.exitCode = await cli.main(process.argv.slice(2));
