/** `fecr archive export|verify` (issue 29): a period's files, sales and purchases, as one .tar.gz with a manifest. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { ExportFlags } from './export.js';

export function defineArchiveCommands(program: Command, ctx: Ctx): void {
  const a = program.command('archive').description("a period's comprobantes, Hacienda's answers, PDFs and MensajeReceptor as one .tar.gz, and its check");
  a.command('export')
    .description('write every file of the period (sales and purchases) with manifest.jsonl (sha256 of each file) into OUT.tar.gz; local mode')
    .argument('<out>', 'the .tar.gz to write (- for stdout)')
    .requiredOption('--since <date>', 'first day of the period (YYYY-MM-DD, FechaEmision)')
    .requiredOption('--until <date>', 'last day of the period (YYYY-MM-DD, included)')
    .option('--issuer <identificacion>', "only this issuer's documents")
    .option('--no-pdf', 'leave the PDFs out (they are rendered one by one while the archive is written)')
    .option('--json', 'print the counts as JSON')
    .action(async (out: string, opts: ExportFlags) => (await import('./export.js')).run(ctx, out, opts));
  a.command('verify')
    .description(
      "check an archive: the manifest against the files (present, sha256, every field as the signed XML says, nothing extra), every signature and its signer (the Emisor; a FEC's Receptor; Hacienda's seal chained to a trust anchor, fecr's test root only in an archive of env local), every XSD; exit 1 naming each file that differs",
    )
    .argument('<archive>', 'the .tar.gz of fecr archive export')
    .option('--trust <paths>', "more CAs for Hacienda's seal (PEM/DER files or folders, ':'-separated), e.g. the sandbox's")
    .option('--json', 'print the result as JSON')
    .action(async (file: string, opts: { json?: boolean; trust?: string }) => (await import('./verify.js')).run(ctx, file, opts));
}
