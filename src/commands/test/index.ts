/** `fecr test PATH…`: send folders of bodies and check each verdict against what the body expects (docs/ci.md). */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import { ENCODING_HELP } from '../../cli/io.js';
import type { TestFlags } from './run.js';

export function defineTestCommand(program: Command, ctx: Ctx): void {
  program
    .command('test')
    .description("send every body of the files and folders named and check each verdict against what it expects (by default aceptado), on a throwaway local profile with the embedded emulator unless --profile")
    .argument('<path...>', 'body files (.json: one body or an array; .jsonl; .csv) or folders of them; NAME.expect.json beside a body says what it expects')
    .option('--junit <file>', 'also write a JUnit XML report')
    .option('--faults <file>', "throwaway profile: the fault file its emulator applies (the profile key emulatorFaults)")
    .option('--keep', 'keep the throwaway profile\'s data dir (its path is printed) instead of removing it')
    .option('--concurrency <n>', 'documents in flight at once (default 8)')
    .option('--timeout <seconds>', "how long to wait for each verdict (default 120)")
    .option('--encoding <name>', ENCODING_HELP)
    .option('--json', 'print the results as JSON')
    .addHelpText(
      'after',
      '\nOne line per document: ✓ or ✗, the file (and line), the clave, the estado and Hacienda\'s codes; then a summary.\n' +
        'An expectation (NAME.expect.json, or an "expect" member of a JSONL line):\n' +
        '  {"estado": "rechazado", "codigos": ["-53"]}     rejected, -53 among the codes\n' +
        '  {"avisos": ["-407"]}                           accepted with the warning -407\n' +
        '  {"estado": "invalido", "findings": ["detalleServicio[0].montoTotalLinea"]}   refused by fecr before sending\n' +
        'By default the run uses a throwaway local profile (a temp data dir, the embedded emulator) that registers each\n' +
        "issuer a body names with a generated test certificate and numbers bodies without numeroReferencia.\n" +
        'With --profile P (or FECR_PROFILE) the same files go to that profile (its issuers must be registered, unless its\n' +
        'Hacienda is the embedded emulator), e.g. one on the real sandbox.\n' +
        'Under GitHub Actions (GITHUB_ACTIONS=true) each failure is also an ::error annotation on the body file.\n' +
        'Exit 0 when every expectation holds, 3 when one does not, 1 when the files cannot be read or sent.',
    )
    .action(async (paths: string[], opts: TestFlags, cmd: Command) => (await import('./run.js')).run(ctx, paths, opts, cmd.optsWithGlobals<{ profile?: string }>().profile));
}
