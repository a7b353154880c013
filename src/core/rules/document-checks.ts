/**
 * What Hacienda checks of a document against its catalogues and its clock, as `fecr validate` and `fecr batch
 * --dry-run` report it before sending: the same rules the emulator answers with (registry-rules.ts), at the body's
 * field paths, each message opening with Hacienda's code (`codigoActividad: -408 El Código …`). What Hacienda rejects
 * is a finding; what it only warns about (and fecr's notes) a warning, which does not fail validation.
 */
import type { Comprobante, Finding } from '../model.js';
import { parseIsoDateTime } from '../dates.js';
import { actividadItems, cabysItems, fechaEmisionItems, type RuleItem } from './registry-rules.js';

export interface HaciendaChecks {
  findings: Finding[];
  warnings: Finding[];
}

export interface HaciendaCheckOptions {
  /** Hacienda's clock: a FechaEmision on a later day is -53. */
  now: Date;
  /** Whether a CABYS code is in the catalogue; absent, CABYS codes are not checked. */
  hasCabys?: (codigo: string) => boolean;
}

export function haciendaChecks(doc: Comprobante, o: HaciendaCheckOptions): HaciendaChecks {
  const out: HaciendaChecks = { findings: [], warnings: [] };
  const add = (path: string, items: RuleItem[]) => {
    for (const i of items) (i.aviso ? out.warnings : out.findings).push({ path, message: `${i.codigo} ${i.mensaje}` });
  };
  if (doc.codigoActividadEmisor) add(doc.kind === 'FEC' ? 'proveedor.codigoActividad' : 'codigoActividad', actividadItems(doc.codigoActividadEmisor));
  if (o.hasCabys) {
    doc.lineas.forEach((l, i) => {
      if (l.codigoCABYS) add(`detalleServicio[${i}].codigo`, cabysItems([{ linea: String(l.numeroLinea), codigo: l.codigoCABYS }], o.hasCabys!));
    });
  }
  const fecha = parseIsoDateTime(doc.fechaEmision);
  if (fecha) add('fechaEmision', fechaEmisionItems(fecha, o.now));
  return out;
}
