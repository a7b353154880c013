/** `fecr emisor list`: the account's issuers. */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { withBackend } from '../backend.js';
import { ambienteName, type EmisorFlags } from './shared.js';

export async function list(ctx: Ctx, opts: EmisorFlags): Promise<void> {
  checkTableFlags(opts);
  const issuers = await withBackend(ctx, (b) => b.listIssuers());
  if (opts.json) return printJson(ctx, issuers);
  if (issuers.length === 0) {
    info(ctx, 'no issuer is registered yet (fecr emisor register issuer.json; fecr init writes an issuer.json to start from)');
    return;
  }
  writeLine(
    ctx.io.stdout,
    renderTable(
      ctx,
      ['identificacion', 'tipo', 'nombre', 'codigoActividad', 'sucursal', 'ambiente', 'correoElectronico', 'certificateUntil'],
      issuers.map((i) => [
        i.identificacion,
        i.tipoIdentificacion,
        i.nombre ?? i.nombreComercial,
        i.codigoActividad,
        String(i.sucursal),
        ambienteName(i.ambiente),
        i.correoElectronico,
        // The day the certificate ends (its instant in --json); empty when a remote service does not say.
        i.certificateUntil?.slice(0, 10) ?? '',
      ]),
      { csv: opts.csv },
    ),
  );
}
