/**
 * Hacienda's DetalleMensaje (MensajeHacienda, NOTES §6.3) as data, and back: the one reader of its list of codes.
 *
 * The layouts, word for word (NOTES §6.3; real production answers of 2026):
 * - the opening: the sandbox's sentence (`Este comprobante fue recibido en el ambiente de pruebas, …`) or
 *   production's lone `.`; alone when nothing is listed;
 * - accepted with warnings: an empty line, then `codigo, mensaje, fila, columna` and one line per warning;
 * - rejected: an empty line, `El comprobante electrónico tiene los siguientes errores: `, `[`, the same heading, one
 *   line per item (warnings listed too), an empty line, `]`.
 * Line ends inside the list are CR LF (the CR written `&#13;` in the XML); an item reads `-408, ""mensaje"", 0, 0`:
 * the code, the text between doubled quotes (a quote inside is `\"`), then fila and columna (`0, 0` unless the
 * item points into the XML: Xerces' schema errors, code -1, give the line and column). Some failures (the
 * signature's) are a plain sentence without code. Older answers wrote the text between single double quotes.
 *
 * `codigo` is Hacienda's code as the integer it writes (-408), null for a plain sentence; `fila`/`columna` the
 * position the item gives (null for `0, 0`); `aviso` true for a warning: every item of an accepted answer, and in a
 * rejection the codes Hacienda uses for warnings (AVISOS, core/rules/hacienda-codes.ts).
 * Pure, and total: any string gives an array (never a throw), in time linear in its length.
 */
import { esAviso } from '../rules/hacienda-codes.js';

/** One item of Hacienda's list, as `--json`, the API's extra endpoints and fecr's webhook events carry it. */
export interface ErrorHacienda {
  /** Hacienda's code (-408); null for a plain sentence (Hacienda lists signature failures so). */
  codigo: number | null;
  mensaje: string;
  /** Where the item points in the XML (Xerces' schema errors); null when Hacienda writes 0. */
  fila: number | null;
  columna: number | null;
  /** A warning: the document stands. */
  aviso: boolean;
}

export const LIST_HEADER = 'codigo, mensaje, fila, columna';
const ERRORS_HEADING = 'El comprobante electrónico tiene los siguientes errores:';

/** At most this many digits in a code, a fila or a columna (longer: not an item, a plain line). */
const MAX_DIGITS = 9;

/**
 * The list of a DetalleMensaje. `aceptado`: the answer's verdict was acceptance (Mensaje 1), so every item is a
 * warning. Lines outside the list (the opening, production's `.`, the headings, the brackets) are not items, except a
 * coded line, which is one wherever it is.
 */
export function parseDetalleMensaje(detalle: unknown, opts: { aceptado?: boolean } = {}): ErrorHacienda[] {
  if (typeof detalle !== 'string' || detalle === '') return [];
  const out: ErrorHacienda[] = [];
  let inList = false;
  for (const raw of detalle.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (line === LIST_HEADER || line === `[${LIST_HEADER}`) {
      inList = true;
      continue;
    }
    const item = codedLine(line);
    if (item) {
      out.push({ ...item, aviso: opts.aceptado === true || esAviso(item.codigo, item.mensaje) });
      continue;
    }
    if (!inList || line === '' || line === '[' || line === ']' || line.startsWith(ERRORS_HEADING)) continue;
    out.push({ codigo: null, mensaje: line, fila: null, columna: null, aviso: opts.aceptado === true });
  }
  return out;
}

const isInt = (s: string): boolean => /^-?\d+$/.test(s) && s.replace('-', '').length <= MAX_DIGITS;
const position = (s: string): number | null => (Number(s) > 0 ? Number(s) : null);

/**
 * `-52, ""text"", 0, 0` (optionally in brackets, with a trailing comma), or `-52, "text", 0, 0` with `""` for a
 * quote; null when the line is not one. By hand, from both ends (no backtracking on a long line).
 */
function codedLine(line: string): Omit<ErrorHacienda, 'aviso'> | null {
  let s = line;
  if (s.startsWith('[')) s = s.slice(1).trimStart();
  if (s.endsWith(',')) s = s.slice(0, -1).trimEnd();
  if (s.endsWith(']')) s = s.slice(0, -1).trimEnd();
  const first = s.indexOf(',');
  if (first < 0) return null;
  const codigo = s.slice(0, first).trim();
  if (!isInt(codigo)) return null;
  const last = s.lastIndexOf(',');
  const beforeLast = s.lastIndexOf(',', last - 1);
  if (beforeLast <= first) return null;
  const columna = s.slice(last + 1).trim();
  const fila = s.slice(beforeLast + 1, last).trim();
  if (!isInt(fila) || !isInt(columna)) return null;
  const quoted = s.slice(first + 1, beforeLast).trim();
  let mensaje: string;
  if (quoted.length >= 4 && quoted.startsWith('""') && quoted.endsWith('""')) mensaje = quoted.slice(2, -2).replace(/\\"/g, '"');
  else if (quoted.length >= 2 && quoted.startsWith('"') && quoted.endsWith('"')) mensaje = quoted.slice(1, -1).replace(/""/g, '"').replace(/\\"/g, '"');
  else return null;
  return { codigo: Number(codigo), mensaje, fila: position(fila), columna: position(columna) };
}

/** One item to write: coded (`-52, ""…"", 0, 0`) or a plain sentence. */
export interface DetalleItem {
  codigo: number;
  mensaje: string;
  fila?: number;
  columna?: number;
  /** A plain sentence, without code, fila and columna. */
  sinCodigo?: boolean;
}

/**
 * DetalleMensaje as Hacienda writes it (the inverse of parseDetalleMensaje): the opening (the sandbox's sentence;
 * production's `.`), alone when there is no item, else an empty line, then the items. Accepted (warnings only): the
 * list heading and the items, without the "errores" heading. Rejected: "El comprobante electrónico tiene los
 * siguientes errores: ", the bracketed list, an empty line before the closing bracket. Line ends inside the list are
 * CR LF.
 */
export function formatDetalleMensaje(opening: string, accepted: boolean, items: readonly DetalleItem[]): string {
  if (items.length === 0) return opening;
  const lines = items.map((e) => (e.sinCodigo ? e.mensaje : `${e.codigo}, ""${e.mensaje.replace(/"/g, '\\"').replace(/\r?\n/g, ' ')}"", ${e.fila ?? 0}, ${e.columna ?? 0}`));
  const list = `${LIST_HEADER}\r\n${lines.map((l) => `${l}\r\n`).join('')}`;
  if (accepted) return `${opening}\n\n${list}`;
  return `${opening}\n\n${ERRORS_HEADING} \r\n[\r\n${list}\r\n]`;
}

/** The list alone, as in a rejection (for callers that format a few errors). */
export function formatDetalleErrors(errors: readonly DetalleItem[]): string {
  return formatDetalleMensaje('', false, errors).replace(/^\n\n/, '');
}

/** One item as one line of text: `-408 El Código …` (`(fila 1, columna 255)` when it points into the XML). */
export function errorLine(e: ErrorHacienda): string {
  const at = e.fila !== null ? ` (fila ${e.fila}${e.columna !== null ? `, columna ${e.columna}` : ''})` : '';
  return `${e.codigo !== null ? `${e.codigo} ` : ''}${e.mensaje}${at}`;
}
