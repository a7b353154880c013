/**
 * The dialect of a batch CSV (docs/batch-csv.md): its separator, "," ";" or a tab, read from the header line (or
 * told, `--delimiter`), and its decimal mark. Excel in a Spanish locale writes ";" and decimal commas with "." between
 * thousands (`1.250,50`): with `--decimal-comma` the amounts are read so; without it, an amount written so in a file
 * that is not comma-separated stops the batch with the hint, never guessed (`50.000` is fifty thousand there, fifty
 * elsewhere). csv-parse still does the parsing; this only picks its delimiter and reads the amount cells.
 */
import { echo } from '../../core/echo.js';

export type CsvDelimiter = ',' | ';' | '\t';

/** The value of `--delimiter`: ",", ";", or a tab (`tab`, `\t`); undefined when it names none. */
export function delimiterOf(value: string): CsvDelimiter | undefined {
  if (value === ',' || value === ';' || value === '\t') return value;
  const v = value.trim().toLowerCase();
  return v === 'tab' || v === '\\t' ? '\t' : undefined;
}

const CANDIDATES: readonly CsvDelimiter[] = [',', ';', '\t'];

/** How the separator is named to people: `","`, `";"`, `a tab`. */
export function delimiterName(d: string): string {
  return d === '\t' ? 'a tab' : `"${d}"`;
}

/** How many of the header line's cells, split at `d`, are columns of the layout. */
function score(headerLine: string, d: CsvDelimiter, known: ReadonlySet<string>): number {
  return headerLine.split(d).filter((c) => known.has(c.trim().replace(/^"(.*)"$/, '$1').trim())).length;
}

/** The separator of a header line: the one that splits it into the most known columns ("," when none does). */
export function detectDelimiter(headerLine: string, known: ReadonlySet<string>): CsvDelimiter {
  let best: CsvDelimiter = ',';
  let bestScore = score(headerLine, ',', known);
  for (const d of CANDIDATES) {
    const s = score(headerLine, d, known);
    if (s > bestScore) [best, bestScore] = [d, s];
  }
  return best;
}

/**
 * Why a header of one column does not parse: what it saw and what it expected, e.g. `the header has 1 column
 * "tipoDoc;sucursal;…" — the separator looks like ";" (pass --delimiter ";")`; undefined for a header of several
 * columns (the layout check says what is wrong with them).
 */
export function explainHeader(header: string[], used: CsvDelimiter, known: ReadonlySet<string>): string | undefined {
  if (header.length !== 1) return undefined;
  const text = header[0]!;
  const seen = detectDelimiter(text, known);
  const shown = `"${echo(cut(text))}"`;
  if (seen !== used && score(text, seen, known) > 0) {
    return `line 1: the header has 1 column ${shown} — the separator looks like ${delimiterName(seen)} (pass --delimiter ${seen === '\t' ? 'tab' : `"${seen}"`})`;
  }
  return `line 1: the header has 1 column ${shown} — expected the columns of docs/batch-csv.md separated by ",", ";" or a tab`;
}

/** At most 40 characters, cut after a separator-like character when longer. */
function cut(text: string): string {
  if (text.length <= 40) return text;
  const head = text.slice(0, 40);
  const at = Math.max(...[',', ';', '\t', '|'].map((c) => head.lastIndexOf(c)));
  return `${at > 0 ? head.slice(0, at + 1) : head}…`;
}

/** The columns that hold amounts (docs/batch-csv.md): the ones a decimal mark matters in. */
export const AMOUNT_COLUMNS = ['cantidad', 'precioUnitario', 'descuento', 'tarifa', 'montoPagado', 'baseImponible', 'tipoCambio'] as const;

/** `1.250,50`, `1250,5`, `50.000`, `13`: a number as a decimal-comma locale writes it. */
const COMMA_NUMBER = /^(\d{1,3}(?:\.\d{3})+|\d+)(?:,(\d+))?$/;
/** A decimal comma: `1250,50`, `1.250,50`. */
const HAS_DECIMAL_COMMA = /^\d[\d.]*,\d+$/;
/** Dots between groups of three digits and no comma: `50.000`, `1.250.000`. */
const THOUSANDS_DOTS = /^\d{1,3}(?:\.\d{3})+$/;

/**
 * The amount cells of a row, read as the dialect says: with `decimalComma`, `1.250,50` → `1250.50` (a cell that is
 * not such a number is left as written, for the row's own finding). Without it, in a file separated by ";" or a tab,
 * an amount written with a decimal comma or with dots between thousands is a problem of the whole file: returned,
 * for the reader to stop on (`line 3: precioUnitario "1.250,50" has a decimal comma …`).
 */
export function readAmounts(cells: Record<string, string>, line: number, o: { delimiter: CsvDelimiter; decimalComma: boolean }): string | undefined {
  for (const col of AMOUNT_COLUMNS) {
    const v = cells[col]?.trim();
    if (!v) continue;
    if (o.decimalComma) {
      const m = COMMA_NUMBER.exec(v);
      if (m) cells[col] = `${m[1]!.replace(/\./g, '')}${m[2] !== undefined ? `.${m[2]}` : ''}`;
      continue;
    }
    if (o.delimiter === ',') continue;
    const sep = delimiterName(o.delimiter);
    if (HAS_DECIMAL_COMMA.test(v)) {
      const m = COMMA_NUMBER.exec(v);
      const as = m ? ` as ${m[1]!.replace(/\./g, '')}.${m[2]}` : '';
      return `line ${line}: ${col} "${echo(v)}" has a decimal comma and the file is separated by ${sep}: pass --decimal-comma to read it${as}`;
    }
    if (THOUSANDS_DOTS.test(v)) {
      return `line ${line}: ${col} "${echo(v)}" is ambiguous in a file separated by ${sep} (Excel in a Spanish locale writes decimal commas and "." between thousands): pass --decimal-comma to read it as ${v.replace(/\./g, '')}`;
    }
  }
  return undefined;
}
