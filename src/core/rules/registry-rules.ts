/**
 * The rules that need Hacienda's catalogues or its clock, shared by the emulator (what it answers, emulator/processor.ts
 * and analyze.ts) and `fecr validate` (the findings it reports): one catalogue, one rule set, two users. Each rule
 * answers with Hacienda's code and words (core/rules/hacienda-codes.ts) and says whether Hacienda rejects (`aviso`
 * false) or only warns. Sources: NOTES §6.3 (real sandbox answers, March 2026) and actividades/SOURCES.md.
 */
import { actividadRegistrada, claseActividad, sucesorAntigua, type ActividadRegistrada } from '../catalog/actividades.js';
import { crParts } from '../dates.js';
import { CODIGOS, TEXTOS } from './hacienda-codes.js';

/** One item of a verdict: Hacienda's code and text; `aviso` leaves the document accepted. */
export interface RuleItem {
  codigo: number;
  mensaje: string;
  aviso?: boolean;
  /** Only `fecr validate` reports it (a note for the user; the real Hacienda lists nothing for it). */
  soloValidacion?: boolean;
}

/**
 * The issuer's activity code (CodigoActividadEmisor). -408 for a code that is neither CIIU-4 nor of the former
 * catalogue (real answers: `462000`, `046200`, `007410`); a CIIU-4-shaped code the known list lacks is a warning only
 * (-9010: the list is incomplete, so fecr cannot say Hacienda refuses it); a code of the former catalogue is taken
 * (sandbox accepted `512102`) with a note in `fecr validate` (-9011); -407 (a warning) when the taxpayer's activities
 * are known and the code is not among them, by code, old code or CIIU-4 successor.
 */
export function actividadItems(code: string, registered?: readonly ActividadRegistrada[]): RuleItem[] {
  const clase = claseActividad(code);
  if (clase === 'invalida') return [{ codigo: CODIGOS.ACTIVIDAD_INVALIDA, mensaje: TEXTOS.actividad408 }];
  const out: RuleItem[] = [];
  if (clase === 'ciiu4-desconocido') out.push({ codigo: CODIGOS.ACTIVIDAD_NO_CATALOGADA, mensaje: TEXTOS.actividadNoCatalogada(code), aviso: true });
  if (clase === 'antigua') {
    out.push({ codigo: CODIGOS.ACTIVIDAD_ANTIGUA, mensaje: TEXTOS.actividadAntigua(code, sucesorAntigua(code) ?? ''), aviso: true, soloValidacion: true });
  }
  if (registered && registered.length > 0 && !actividadRegistrada(code, registered)) {
    out.push({ codigo: CODIGOS.ACTIVIDAD_NO_REGISTRADA, mensaje: TEXTOS.actividad407, aviso: true });
  }
  return out;
}

/** -400 for each line whose CABYS code is not in the catalogue (`has` answers from the catalogue fecr ships). */
export function cabysItems(lines: readonly { linea: string; codigo: string }[], has: (codigo: string) => boolean): RuleItem[] {
  return lines.filter((l) => l.codigo && !has(l.codigo)).map((l) => ({ codigo: CODIGOS.CABYS, mensaje: TEXTOS.cabys400(l.linea) }));
}

/**
 * -53: a FechaEmision on a later day (Costa Rica) than the reception is refused; later the same day is a warning (the
 * hour "does not match the official one"). Within `toleranceMs` of `now`, nothing.
 */
export function fechaEmisionItems(fecha: Date, now: Date, toleranceMs = 10 * 60_000): RuleItem[] {
  if (fecha.getTime() <= now.getTime() + toleranceMs) return [];
  const f = crParts(fecha);
  const n = crParts(now);
  const laterDay = f.year * 10_000 + f.month * 100 + f.day > n.year * 10_000 + n.month * 100 + n.day;
  return [laterDay ? { codigo: CODIGOS.FECHA_EMISION, mensaje: TEXTOS.fechaDia53 } : { codigo: CODIGOS.FECHA_EMISION, mensaje: TEXTOS.fechaHora53, aviso: true }];
}
