/** Offline document commands: validate, complete, xml, verify. */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import { ENCODING_HELP } from '../../cli/io.js';

export function defineDocumentCommands(program: Command, ctx: Ctx): void {
  program
    .command('validate')
    .description("check a document body (JSON, or - for stdin) as Hacienda would: schema, rules, totals, the v4.4 XSD, the catalogues and the date (-400 CABYS, -408 activity, -53)")
    .argument('<body>', 'document body JSON file, a v4.4 XML file (.xml: its XSD and the catalogue and date checks), or - for stdin (JSON)')
    .option('--issuer <file>', 'issuer record JSON (spec registration shape); without it, issuer checks are skipped')
    .option('--json', 'print the result as JSON')
    .option('--no-xsd', 'skip the XSD check of the generated XML')
    .option('--strict', 'fail on warnings too (what Hacienda accepts with a warning, and fecr\'s notes such as an old activity code)')
    .option('--encoding <name>', ENCODING_HELP)
    .option('--no-complete', 'judge the body as the client API takes it: every figure given (without it, the figures it leaves out are computed)')
    .action(async (body: string, opts: { issuer?: string; json?: boolean; xsd: boolean; strict?: boolean; encoding?: string; complete: boolean }) =>
      (await import('./validate.js')).run(ctx, body, opts),
    );
  program
    .command('complete')
    .description('print a document body with every figure it leaves out computed (subTotal, montoTotal, impuesto monto, impuestoNeto, montoTotalLinea, the resumen totals), as validate, send and batch compute them')
    .argument('<body>', 'document body JSON file, or - for stdin')
    .option('--encoding <name>', ENCODING_HELP)
    .action(async (body: string, opts: { encoding?: string }) => (await import('./complete.js')).run(ctx, body, opts));
  program
    .command('xml')
    .description('build and sign the v4.4 XML of a document body; the clave goes to stderr')
    .argument('<body>', 'document body JSON file, or - for stdin')
    .requiredOption('--issuer <file>', 'issuer record JSON with certificadoHacienda (base64 .p12) and pinCertificado')
    .option('--out <file>', 'write the signed XML here instead of stdout')
    .option('--json', 'print {"clave","numeroConsecutivo","file"} on stdout')
    .option('--encoding <name>', ENCODING_HELP)
    .action(async (body: string, opts: { issuer: string; out?: string; json?: boolean; encoding?: string }) =>
      (await import('./xml.js')).run(ctx, body, opts),
    );
  program
    .command('verify')
    .description("verify a signed comprobante or message: signature, digests, certificate, v4.4 policy, the signer (the Emisor; a FEC's Receptor; Hacienda's seal chained to a trust anchor) and XSD")
    .argument('<file>', 'signed XML file, or - for stdin')
    .option('--json', 'print the report as JSON')
    .option('--no-xsd', 'skip the XSD check')
    .option('--env <env>', "whose anchors Hacienda's seal must chain to: production (default), sandbox, or local (also fecr's test root: the local emulator's answers)")
    .option('--trust <paths>', "more CAs for Hacienda's seal (PEM/DER files or folders, ':'-separated), e.g. the sandbox's")
    .action(async (file: string, opts: { json?: boolean; xsd: boolean; env?: string; trust?: string }) => (await import('./verify.js')).run(ctx, file, opts));
}
