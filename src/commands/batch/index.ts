/** `fecr batch FILE.csv|FILE.json|FILE.jsonl`: send many documents, streamed, with a journal for --resume. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { BatchFlags } from './run.js';

export function defineBatchCommand(program: Command, ctx: Ctx): void {
  program
    .command('batch')
    .description('send every document of a CSV (docs/batch-csv.md), JSON array or JSON Lines file; results as JSON lines')
    .argument('<file>', 'FILE.csv, FILE.json (an array of document bodies) or FILE.jsonl (one body per line)')
    .option('--concurrency <n>', 'documents in flight at once (default 8)')
    .option('--out <file>', 'results file, JSON lines (default <file>.results.jsonl)')
    .option('--resume', 'skip the documents an earlier run finished (read from <file>.journal)')
    .option('--dry-run', 'validate every document (schema, rules, totals, XSD) and send nothing')
    .option('--wait', "also wait for Hacienda's verdict of every sent document (exit 3 if any is rejected)")
    .option('--timeout <seconds>', 'with --wait: how long to wait for each verdict (default 120)')
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      '\nEach document gets one result line {row, numeroReferencia, clave?, state, errors?}; state is enviado, invalido or\n' +
        'error (--dry-run: valido or invalido). Exit 1 if any document failed, 130 after Ctrl-C (run again with --resume).\n' +
        'On a terminal, progress on stderr: documents done of the total ("?" until the file is counted), rate and ETA.\n' +
        'The summary lists the failed rows (invalid, error, and with --wait rechazado), each with its first finding; at\n' +
        'most 20, all of them in the results file (--json: "failed").',
    )
    .action(async (file: string, opts: BatchFlags) => (await import('./run.js')).run(ctx, file, opts));
}
