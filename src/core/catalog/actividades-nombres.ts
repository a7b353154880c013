/** The names of the activity codes (actividades-data.ts), for where they are shown: /fe/ae of the emulator, prompts. */
import { ANTIGUAS_DATA, CIIU4_DATA } from './actividades-data.js';

let ciiu4: Map<string, string> | undefined;
let antiguas: Map<string, string> | undefined;

/** The description of a CIIU-4 code of the known list. */
export function ciiu4Descripcion(code: string): string | undefined {
  return (ciiu4 ??= new Map(CIIU4_DATA.map(([c, d]) => [c, d]))).get(code);
}

/** The name of a code of the former six-digit catalogue. */
export function nombreAntigua(code: string): string | undefined {
  return (antiguas ??= new Map(ANTIGUAS_DATA.map(([c, nombre]) => [c, nombre]))).get(code);
}
