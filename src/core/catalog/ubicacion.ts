/**
 * Costa Rica's location codification as Hacienda's v4.4 catalogue "Codificacionubicacion_V4.4" has it: provincia
 * (1 digit), cantón (2), distrito (2), with their names (ubicacion-data.ts, generated; sources and what could not be
 * verified in fixtures/ubicacion/SOURCES.md). For people: the PDF prints the names, `fecr emisor register` offers
 * them. A code missing here is not refused by fecr (Hacienda's registry is the judge); it is shown as the code.
 */
import { codeTable } from '../code-table.js';
import { CANTONES_DATA, DISTRITOS_DATA, PROVINCIAS_DATA } from './ubicacion-data.js';

const PROVINCIAS = codeTable(Object.fromEntries(PROVINCIAS_DATA));
const CANTONES = codeTable(Object.fromEntries(CANTONES_DATA));
const DISTRITOS = codeTable(Object.fromEntries(DISTRITOS_DATA));

export interface Place {
  code: string;
  name: string;
}

/** The names of a provincia, cantón and distrito, each undefined when the codification does not have it. */
export function ubicacionNames(provincia: string, canton: string, distrito: string): { provincia?: string; canton?: string; distrito?: string } {
  const out: { provincia?: string; canton?: string; distrito?: string } = {};
  const p = PROVINCIAS[provincia];
  if (p) out.provincia = p;
  const c = CANTONES[`${provincia}-${canton}`];
  if (c) out.canton = c;
  const d = DISTRITOS[`${provincia}-${canton}-${distrito}`];
  if (d) out.distrito = d;
  return out;
}

/** The seven provincias, by code. */
export function provincias(): Place[] {
  return PROVINCIAS_DATA.map(([code, name]) => ({ code, name }));
}

/** The cantones of a provincia, by code (`01`, `02`, …). */
export function cantonesOf(provincia: string): Place[] {
  return CANTONES_DATA.filter(([k]) => k.startsWith(`${provincia}-`)).map(([k, name]) => ({ code: k.slice(-2), name }));
}

/** The distritos of a cantón, by code. */
export function distritosOf(provincia: string, canton: string): Place[] {
  const prefix = `${provincia}-${canton}-`;
  return DISTRITOS_DATA.filter(([k]) => k.startsWith(prefix)).map(([k, name]) => ({ code: k.slice(-2), name }));
}
