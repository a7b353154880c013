/**
 * The items of the emulator's answers. The codes and texts are core's (core/rules/hacienda-codes.ts), shared with
 * `fecr validate`.
 */
import type { ValidationErrorItem } from './store.js';

export { CODIGOS, TEXTOS } from '../core/rules/hacienda-codes.js';

export const err = (codigo: number, mensaje: string, fila = 0, columna = 0): ValidationErrorItem => ({ codigo, mensaje, fila, columna });

/** Accepted when every listed item is a warning (or none is listed). */
export function isAccepted(errors: readonly ValidationErrorItem[]): boolean {
  return errors.every((e) => e.aviso === true);
}
