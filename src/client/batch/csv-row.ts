/** A row of the batch CSV and how the CSV builders read it and report on it (docs/batch-csv.md). */
import type { Finding } from '../../core/model.js';

/** A data row: its line number in the file and its cells by column name ('' when empty or absent). */
export interface CsvRow {
  line: number;
  cells: Record<string, string>;
}

/** A cell of a row, trimmed; '' when the column is empty or not in the header. */
export const cell = (row: CsvRow, col: string): string => (row.cells[col] ?? '').trim();

/** Whether any of `cols` has a value in `row`. */
export const anyCell = (row: CsvRow, cols: readonly string[]): boolean => cols.some((c) => cell(row, c) !== '');

/** Records a finding at a row's column: `row 7.cantidad`. */
export type At = (row: CsvRow, col: string, message: string) => void;

export function collector(): { errors: Finding[]; at: At } {
  const errors: Finding[] = [];
  return { errors, at: (row, col, message) => errors.push({ path: `row ${row.line}.${col}`, message }) };
}
