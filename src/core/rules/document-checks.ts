/**
 * What Hacienda checks of a document against its catalogues and its clock, as `fecr validate` and `fecr batch
 * --dry-run` report it before sending: the same rules the emulator answers with (registry-rules.ts), at the body's
 * field paths, each message opening with Hacienda's code (`codigoActividad: -408 El Código …`). What Hacienda rejects
 * is a finding; what it only warns about (and fecr's notes) a warning, which does not fail validation.
 */
import type { DocumentKind, Finding } from '../model.js';
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
  /** Paths of the body the document has no real value for (core/document.ts ParseResult `held`): not checked. */
  held?: readonly string[];
  /** Where the findings point: the body's fields (the default) or, for a document read from XML, its elements. */
  paths?: CheckPaths;
}

/** The path of each thing checked. */
export interface CheckPaths {
  actividad: (kind: DocumentKind) => string;
  cabys: (index: number) => string;
  fecha: string;
}

export const BODY_PATHS: CheckPaths = {
  actividad: (kind) => (kind === 'FEC' ? 'proveedor.codigoActividad' : 'codigoActividad'),
  cabys: (i) => `detalleServicio[${i}].codigo`,
  fecha: 'fechaEmision',
};

export const XML_PATHS: CheckPaths = {
  actividad: () => 'CodigoActividadEmisor',
  cabys: (i) => `DetalleServicio.LineaDetalle[${i}].CodigoCABYS`,
  fecha: 'FechaEmision',
};

/** What the checks read of a document: a built one (core/model.ts) or one read from XML (core/xml/parse-comprobante.ts). */
export interface CheckedDocument {
  kind: DocumentKind;
  codigoActividadEmisor?: string;
  fechaEmision: string;
  lineas: readonly { numeroLinea: number | string; codigoCABYS?: string }[];
}

export function haciendaChecks(doc: CheckedDocument, o: HaciendaCheckOptions): HaciendaChecks {
  const out: HaciendaChecks = { findings: [], warnings: [] };
  const p = o.paths ?? BODY_PATHS;
  const held = o.held ?? [];
  const add = (path: string, items: RuleItem[]) => {
    if (held.some((h) => path === h || path.startsWith(`${h}.`) || path.startsWith(`${h}[`))) return;
    for (const i of items) (i.aviso ? out.warnings : out.findings).push({ path, message: `${i.codigo} ${i.mensaje}` });
  };
  if (doc.codigoActividadEmisor) add(p.actividad(doc.kind), actividadItems(doc.codigoActividadEmisor));
  if (o.hasCabys) {
    doc.lineas.forEach((l, i) => {
      if (l.codigoCABYS) add(p.cabys(i), cabysItems([{ linea: String(l.numeroLinea), codigo: l.codigoCABYS }], o.hasCabys!));
    });
  }
  const fecha = parseIsoDateTime(doc.fechaEmision);
  if (fecha) add(p.fecha, fechaEmisionItems(fecha, o.now));
  return out;
}
