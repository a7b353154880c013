/** Reading the issuer record a document command needs; an invalid one is a headline and its findings. */
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit } from '../../cli/errors.js';
import { invalidHeadline, printFindings } from '../../cli/findings.js';
import { readJson } from '../../cli/io.js';
import type { IssuerRecord } from '../../core/input/schema.js';

/** The issuer record of `--issuer FILE`; an invalid one is `error: FILE: invalid issuer record: N findings` + findings. */
export async function readIssuer(ctx: Ctx, file: string): Promise<IssuerRecord> {
  const raw = await readJson(ctx.io, file);
  const { parseIssuer } = await import('../../core/document.js');
  const r = parseIssuer(raw);
  if (!r.ok) {
    printFindings(ctx, `${file === '-' ? 'stdin' : file}: ${invalidHeadline('issuer record', r.findings.length)}`, r.findings);
    throw new SilentExit(EXIT.error);
  }
  return r.issuer;
}

/**
 * Stand-in issuer for validating a body without an issuer record: the body's own `emisor` and activity,
 * with neutral contact data. Issuer-specific checks are then skipped.
 */
export function placeholderIssuer(body: unknown): IssuerRecord {
  const b = (body ?? {}) as Record<string, unknown>;
  const id = typeof b.emisor === 'string' || typeof b.emisor === 'number' ? String(b.emisor) : '3101000000';
  const tipo = id.length === 9 ? '01' : id.length >= 11 ? '03' : '02';
  return {
    identificacion: id,
    tipoIdentificacion: tipo,
    codigoActividad: typeof b.codigoActividad === 'string' && b.codigoActividad.length === 6 ? b.codigoActividad : '000000',
    sucursal: 1,
    nombreComercial: 'Emisor sin registro',
    telefono: '22222222',
    correoElectronico: 'emisor@example.com',
    ubicacion: { provincia: '1', canton: '01', distrito: '01', direccion: 'Sin dirección registrada' },
    ambiente: 2,
    usuarioHacienda: '-',
    claveHacienda: '-',
    pinCertificado: '-',
    certificadoHacienda: '-',
  };
}
