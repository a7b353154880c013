/**
 * Economic activity codes (CodigoActividadEmisor / CodigoActividadReceptor) as Hacienda writes them, and what is known
 * of its catalogue (../shared/reference/hacienda/actividades/SOURCES.md; data in actividades-data.ts):
 *
 * - Since TRIBU-CR (2025-10-06) an activity is a CIIU-4 code written `NNNN.N` (`6201.0`): six characters, the form
 *   `/fe/ae` returns in `actividades[].codigo`. The public lists of these codes are third-party and known to be
 *   incomplete (369 codes here).
 * - The former catalogue's six-digit codes (`722003`; 715 known, three copies that agree) were still accepted by the
 *   real sandbox in March 2026 (`512102` accepted, NOTES §6.3); for how long is not documented anywhere we found.
 * - Six digits that are not a code of the former catalogue are refused with -408 (`462000`, `046200`, `007410`: the
 *   digit-only renderings of CIIU-4 codes, NOTES §6.3).
 */
import { ANTIGUAS_CODES, CIIU4_CODES } from './actividades-codes.js';

export const CIIU4_PATTERN = /^\d{4}\.\d$/;
export const ANTIGUA_PATTERN = /^\d{6}$/;

// The codes only (actividades-codes.ts, 13 KB): every `fecr validate` classifies a code. The names are in
// actividades-nombres.ts, loaded only where they are shown.
let ciiu4: Set<string> | undefined;
let antiguas: Map<string, string> | undefined;

function ciiu4Set(): Set<string> {
  return (ciiu4 ??= new Set(CIIU4_CODES.split(' ')));
}
function antiguasMap(): Map<string, string> {
  return (antiguas ??= new Map(ANTIGUAS_CODES.split(' ').map((e) => e.split('>') as [string, string])));
}

/** Whether a code is of the known CIIU-4 list. */
export function esCiiu4Conocido(code: string): boolean {
  return ciiu4Set().has(code);
}

/** A code of the former six-digit catalogue: its CIIU-4 successor ('' when none is known); undefined when it is not one. */
export function sucesorAntigua(code: string): string | undefined {
  return antiguasMap().get(code);
}

/** The old codes whose CIIU-4 successor is `code` (what `/fe/ae` lists under `ciiu3`). */
export function codigosAntiguosDe(code: string): string[] {
  const out: string[] = [];
  for (const [c, s] of antiguasMap()) if (s === code) out.push(c);
  return out;
}

/**
 * An activity code as given in JSON or CSV, as Hacienda writes it. A string is kept as it is (trimmed). Digits that a
 * spreadsheet or a JSON number left of a code are read back only when they give a code of the known catalogues: up to
 * four digits (or a number with one decimal) are a CIIU-4 code (`6201` → `6201.0`, `114` → `0114.0`, `4711.2` →
 * `4711.2`: JSON writes `6201.0` as 6201), five digits a code of the former catalogue that lost its leading zero
 * (`11102` → `011102`). Anything else is kept as its text, which the checks then judge (a six-digit number such as
 * 620100 stays `620100`, which Hacienda refuses with -408).
 */
export function actividadFromInput(v: string | number): string {
  const text = typeof v === 'string' ? v.trim() : String(v);
  let n: number;
  if (typeof v === 'number') n = v;
  else if (/^\d{1,5}(\.\d)?$/.test(text)) n = Number(text);
  else return text;
  if (!Number.isFinite(n) || n < 0) return text;
  let candidate: string | undefined;
  if (Number.isInteger(n) && n >= 10_000 && n <= 99_999) candidate = String(n).padStart(6, '0');
  else if (n < 10_000 && Math.abs(Math.round(n * 10) / 10 - n) < 1e-9) {
    const s = String(Math.round(n * 10)).padStart(5, '0');
    candidate = `${s.slice(0, 4)}.${s.slice(4)}`;
  }
  if (candidate === undefined || candidate === text) return text;
  return ciiu4Set().has(candidate) || antiguasMap().has(candidate) ? candidate : text;
}

/** What the catalogue checks know of a code. */
export type ActividadClase =
  /** `NNNN.N` in the known CIIU-4 list. */
  | 'ciiu4'
  /** `NNNN.N` that the known (incomplete) list lacks. */
  | 'ciiu4-desconocido'
  /** A code of the former six-digit catalogue. */
  | 'antigua'
  /** Six characters that are neither: Hacienda answers -408. */
  | 'invalida';

export function claseActividad(code: string): ActividadClase {
  if (CIIU4_PATTERN.test(code)) return ciiu4Set().has(code) ? 'ciiu4' : 'ciiu4-desconocido';
  if (ANTIGUA_PATTERN.test(code) && antiguasMap().has(code)) return 'antigua';
  return 'invalida';
}

/**
 * The CIIU-4 code a code stands for: itself when it is `NNNN.N`, its successor when it is an old code with one. Two
 * codes name the same activity when they stand for the same CIIU-4 code (or are equal).
 */
export function ciiu4De(code: string): string | undefined {
  if (CIIU4_PATTERN.test(code)) return code;
  const s = antiguasMap().get(code);
  return s ? s : undefined;
}

/** One activity a taxpayer has registered: its code and, as `/fe/ae` lists them under `ciiu3`, its old code(s). */
export interface ActividadRegistrada {
  codigo: string;
  ciiu3?: readonly { codigo: string }[];
}

/** Whether `code` is one of the taxpayer's registered activities (by code, by old code, or by CIIU-4 successor). */
export function actividadRegistrada(code: string, registered: readonly ActividadRegistrada[]): boolean {
  const target = ciiu4De(code);
  for (const a of registered) {
    if (a.codigo === code || (a.ciiu3 ?? []).some((o) => o.codigo === code)) return true;
    if (target !== undefined && ciiu4De(a.codigo) === target) return true;
  }
  return false;
}
