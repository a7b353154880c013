/**
 * `fecr init [DIR]`: files to start from, in the current directory (or DIR): `issuer.json`, the issuer record of
 * the spec, and one document body per kind (fe.json, fe-exonerada.json, nc.json, te.json, te-extranjero.json,
 * nd.json, fec.json, fee.json, rep.json),
 * each valid with `fecr validate BODY --issuer issuer.json` as written. Never overwrites without --force.
 */
import type { Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { InitFlags } from './run.js';

export function defineInitCommand(program: Command, ctx: Ctx): void {
  program
    .command('init')
    .description('write an issuer record (issuer.json) and a document body of each kind to start from; never overwrites without --force')
    .argument('[dir]', 'where to write them', '.')
    .option('--p12 <file>', "put this .p12 in issuer.json (certificadoHacienda) and take the issuer's identificación from it; needs --pin-stdin")
    .option('--pin-stdin', 'read the PIN of the .p12 from stdin (sets pinCertificado)')
    .option('--force', 'overwrite files that exist')
    .option('--json', 'print {"dir","files","identificacion","certificate"} as JSON')
    .addHelpText(
      'after',
      `
Files: issuer.json (the issuer record of "fecr emisor register"; mode 0600, it holds secrets), fe.json (factura),
fe-exonerada.json (factura with an exoneración), nc.json (nota de crédito: put the clave of the invoice it corrects
in informacionReferencia[0].numero), te.json (tiquete without receptor), te-extranjero.json (tiquete for a foreign
receptor), nd.json (nota de débito: the clave of the invoice it raises in informacionReferencia[0].numero), fec.json
(factura de compra: you are the buyer, receptor "", the seller in proveedor), fee.json (factura de exportación: a
buyer abroad, partidaArancelaria on goods), rep.json (recibo de pago: the clave of the credit sale it pays in
informacionReferencia[0].numero). The bodies are the fixtures of fixtures/documents/ for this issuer, dated now.
numeroReferencia is the consecutive number of the document: raise it for each new one.
Without --p12, issuer.json is for the test issuer 3101123456 (fecr certs create-test --id 3101123456 --type 02)
and its certificate and PIN are placeholders: fecr emisor register issuer.json --p12 FILE --pin-stdin fills them.`,
    )
    .action(async (dir: string, opts: InitFlags) => (await import('./run.js')).run(ctx, dir, opts));
}
