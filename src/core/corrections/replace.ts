/**
 * The comprobante that replaces one Hacienda rejected (issue 30, `fecr documents replace`): the corrected body with an
 * InformacionReferencia added that names the rejected one: TipoDocIR 10 "Comprobante electrónico rechazado por el
 * Ministerio de Hacienda" (Nota 10) and Codigo 16 "Sustituye comprobante electrónico rechazado" (Nota 9, April-2026
 * revision: schemas/xsd/2026/v4.4/FacturaElectronica_V4.4.xsd, TipoDocReferenciaType and CodigoReferenciaType). It is
 * a new comprobante under a new number: the rejected one's numeroReferencia, if the body repeats it, is left out so
 * that the series' next free number is taken (service/numbering.ts). Pure.
 */
import { CODIGOS_REFERENCIA } from '../codes.js';
import { CODIGO_SUSTITUYE_RECHAZADO, TIPO_DOC_IR_RECHAZADO } from './references.js';

export interface RejectedComprobante {
  clave: string;
  /** Its FechaEmision (xs:dateTime). */
  fechaEmision: string;
  /** Its number (the consecutivo's last 10 digits). */
  numero: number;
}

export function replacementBody(body: unknown, rejected: RejectedComprobante, razon?: string): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const { numeroReferencia, ...rest } = body as Record<string, unknown>;
  const had = Array.isArray(rest.informacionReferencia) ? (rest.informacionReferencia as unknown[]) : [];
  const reference = {
    tipoDocIR: TIPO_DOC_IR_RECHAZADO,
    numero: rejected.clave,
    fechaEmision: rejected.fechaEmision,
    codigo: CODIGO_SUSTITUYE_RECHAZADO,
    razon: (razon ?? '').trim() || CODIGOS_REFERENCIA[CODIGO_SUSTITUYE_RECHAZADO],
  };
  const keepNumber = numeroReferencia !== undefined && Number(numeroReferencia) !== rejected.numero;
  return {
    ...rest,
    ...(keepNumber ? { numeroReferencia } : {}),
    informacionReferencia: [...had.filter((r) => (r as { numero?: unknown } | null)?.numero !== rejected.clave), reference],
  };
}
