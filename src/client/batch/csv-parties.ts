/**
 * The parties and references of a batch CSV document (docs/batch-csv.md): the receptor columns, the proveedor
 * columns of a factura de compra (the seller, written as its Emisor), and the reference columns (an NC, ND, FEC or
 * REP's informacionReferencia), read into the body's shapes. The core judges them; this only reads them.
 */
import { anyCell, cell, type At, type CsvRow } from './csv-row.js';

export const RECEPTOR_COLUMNS = ['receptorNombre', 'receptorTipo', 'receptorNumero', 'receptorCorreo', 'receptorOtrasSenasExtranjero'] as const;

/** A factura de compra's seller (tipoDoc 8); all empty = no proveedor. */
export const PROVEEDOR_COLUMNS = [
  'proveedorNombre',
  'proveedorTipo',
  'proveedorNumero',
  'proveedorCorreo',
  'proveedorTelefono',
  'proveedorProvincia',
  'proveedorCanton',
  'proveedorDistrito',
  'proveedorDireccion',
  'proveedorOtrasSenasExtranjero',
] as const;
const PROVEEDOR_UBICACION = ['proveedorProvincia', 'proveedorCanton', 'proveedorDistrito', 'proveedorDireccion'] as const;

/**
 * One informacionReferencia entry per distinct reference of the document's rows, in row order (a row with them all
 * empty adds none): an ND or NC names the document it adjusts once, a recibo de pago may pay one invoice per line.
 */
export const REFERENCE_COLUMNS = ['referenciaTipoDocIR', 'referenciaNumero', 'referenciaFechaEmision', 'referenciaCodigo', 'referenciaRazon'] as const;

/** The body's receptor of the first row, or "" when every receptor column is empty (a tiquete, a factura de compra). */
export function receptorOfRow(first: CsvRow): Record<string, unknown> | '' {
  if (!anyCell(first, RECEPTOR_COLUMNS)) return '';
  return {
    nombre: cell(first, 'receptorNombre'),
    identificacion: { tipo: cell(first, 'receptorTipo'), numero: cell(first, 'receptorNumero') },
    ...(cell(first, 'receptorCorreo') ? { correoElectronico: cell(first, 'receptorCorreo') } : {}),
    ...(cell(first, 'receptorOtrasSenasExtranjero') ? { otrasSenasExtranjero: cell(first, 'receptorOtrasSenasExtranjero') } : {}),
  };
}

/** The body's proveedor of the first row, or undefined when every proveedor column is empty. */
export function proveedorOfRow(first: CsvRow, at: At): Record<string, unknown> | undefined {
  if (!anyCell(first, PROVEEDOR_COLUMNS)) return undefined;
  const p: Record<string, unknown> = {
    nombre: cell(first, 'proveedorNombre'),
    identificacion: { tipo: cell(first, 'proveedorTipo'), numero: cell(first, 'proveedorNumero') },
  };
  if (anyCell(first, PROVEEDOR_UBICACION)) {
    const missing = PROVEEDOR_UBICACION.filter((c) => cell(first, c) === '');
    for (const c of missing) at(first, c, `is required when the seller's address is given (${PROVEEDOR_UBICACION.join(', ')}); or leave them all empty`);
    p.ubicacion = { provincia: cell(first, 'proveedorProvincia'), canton: cell(first, 'proveedorCanton'), distrito: cell(first, 'proveedorDistrito'), direccion: cell(first, 'proveedorDireccion') };
  }
  if (cell(first, 'proveedorOtrasSenasExtranjero')) p.otrasSenasExtranjero = cell(first, 'proveedorOtrasSenasExtranjero');
  if (cell(first, 'proveedorTelefono')) p.telefono = cell(first, 'proveedorTelefono');
  if (cell(first, 'proveedorCorreo')) p.correoElectronico = cell(first, 'proveedorCorreo');
  return p;
}

/** The document's references and, for each, the file line of the row that gave it (to point findings at it). */
export function referencesOfRows(rows: CsvRow[], at: At): { refs: Record<string, unknown>[]; refLines: number[] } {
  const refs: Record<string, unknown>[] = [];
  const refLines: number[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    if (!anyCell(row, REFERENCE_COLUMNS)) continue;
    const key = REFERENCE_COLUMNS.map((c) => cell(row, c)).join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    let complete = true;
    for (const c of ['referenciaTipoDocIR', 'referenciaFechaEmision'] as const) {
      if (cell(row, c) === '') {
        at(row, c, 'is required when the row gives a reference (referenciaTipoDocIR, referenciaNumero, referenciaFechaEmision, referenciaCodigo, referenciaRazon)');
        complete = false;
      }
    }
    if (!complete) continue;
    const ref: Record<string, unknown> = { tipoDocIR: cell(row, 'referenciaTipoDocIR') };
    if (cell(row, 'referenciaNumero')) ref.numero = cell(row, 'referenciaNumero');
    ref.fechaEmision = cell(row, 'referenciaFechaEmision');
    if (cell(row, 'referenciaCodigo')) ref.codigo = cell(row, 'referenciaCodigo');
    if (cell(row, 'referenciaRazon')) ref.razon = cell(row, 'referenciaRazon');
    refs.push(ref);
    refLines.push(row.line);
  }
  return { refs, refLines };
}
