/** The issuer a body is validated against when no issuer record is given (`fecr validate`, `fecr batch --dry-run`). */
import { actividadFromInput } from './catalog/actividades.js';
import type { IssuerRecord } from './input/schema.js';

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
    codigoActividad: typeof b.codigoActividad === 'string' || typeof b.codigoActividad === 'number' ? actividadFromInput(b.codigoActividad) : '',
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
