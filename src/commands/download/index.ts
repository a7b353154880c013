/** `fecr download CLAVE [--type xml|pdf|respuesta] [--out FILE]`: a document's files, named as the ANEXOS name them. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { DownloadFlags } from './run.js';

export function defineDownloadCommand(program: Command, ctx: Ctx): void {
  program
    .command('download')
    .description("save a document's signed XML, its PDF or Hacienda's answer (<clave>.xml, <clave>.pdf, <clave>_respuesta.xml)")
    .argument('<clave>', 'the 50-digit clave')
    .option('--type <type>', "xml, pdf or respuesta (default xml); for a supplier's comprobante (fecr recibidos): xml, respuesta, mensaje-receptor (our answer) or respuesta-receptor (Hacienda's answer to it)")
    .option('--out <file>', 'where to write it (- for stdout); default the ANEXOS name in the current folder')
    .option('--json', 'print {"clave","type","file","bytes"} as JSON')
    .action(async (clave: string, opts: DownloadFlags) => (await import('./run.js')).run(ctx, clave, opts));
}
