/** `fecr batch FILE.csv|FILE.json|FILE.jsonl`: send many documents, streamed, with a journal for --resume. */
import { Option, type Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import { ENCODING_HELP } from '../../cli/io.js';
import type { BatchFlags } from './run.js';

export function defineBatchCommand(program: Command, ctx: Ctx): void {
  program
    .command('batch')
    .description('send every document of a CSV (docs/batch-csv.md), JSON array or JSON Lines file; results as JSON lines')
    .argument('<file>', 'FILE.csv, FILE.json (an array of document bodies) or FILE.jsonl (one body per line)')
    .option('--concurrency <n>', 'documents in flight at once (default 8)')
    .option('--out <file>', 'results file, JSON lines (default <file>.results.jsonl)')
    .option('--resume', 'continue an earlier run: skip the documents it finished (read from <file>.journal)')
    .option('--restart', 'start over: move the earlier run\'s journal and results aside (a timestamp suffix), then send every document')
    .option('--dry-run', 'validate every document (schema, rules, totals, XSD) and send nothing')
    .option('--wait', "also wait for Hacienda's verdict of every sent document (exit 3 if any is rejected)")
    .option('--timeout <seconds>', 'with --wait: how long to wait for each verdict (default 120)')
    .option('--force', 'sign and send even the rows Hacienda is known to reject (what --dry-run lists with Hacienda\'s code, e.g. -400); without it such a row is invalido and uses no number')
    .addOption(new Option('--situacion <n>', "every document's clave situación: 1 normal, 2 contingencia, 3 sin internet (default: the body's, else contingencia auto, else 1)").choices(['1', '2', '3']))
    .option('--encoding <name>', ENCODING_HELP)
    .option('--delimiter <sep>', 'CSV separator: ",", ";" or tab (default: read from the header line)')
    .option('--decimal-comma', 'CSV amounts are written with a decimal comma and "." between thousands (1.250,50), as Excel writes them in a Spanish locale')
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      '\nEach document gets one result line {row, numeroReferencia, clave?, state, errors?}; state is enviado, invalido or\n' +
        'error (--dry-run: valido or invalido). Exit 1 if any document failed, 130 after Ctrl-C (run again with --resume).\n' +
        'A second run on the same file needs --resume (continue) or --restart (start over); without either it is refused\n' +
        '(exit 2) and changes no file. The file is read through once before anything is sent: a byte that is not UTF-8\n' +
        '(see --encoding), a CSV header that is not the layout, or amounts with a decimal comma in a ";" file without\n' +
        '--decimal-comma stop the batch there (exit 1), with the line.\n' +
        'On a terminal, progress on stderr: documents done of the total (counted by that first read), rate and ETA.\n' +
        'The summary lists the failed rows (invalid, error, and with --wait rechazado), each with its first finding; at\n' +
        'most 20, all of them in the results file (--json: "failed").',
    )
    .action(async (file: string, opts: BatchFlags) => (await import('./run.js')).run(ctx, file, opts));
}
