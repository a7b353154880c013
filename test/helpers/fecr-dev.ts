// Runs the CLI from the TypeScript sources (for tests that spawn fecr as a child process).
import { main } from '../../src/cli/program.js';

process.exitCode = await main(process.argv.slice(2));
