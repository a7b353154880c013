/**
 * Findings of a body built from batch CSV rows, pointed back at the row and column they came from
 * (docs/batch-csv.md): `detalleServicio[1].cantidad` → `row 7.cantidad`, `receptor.identificacion.numero` →
 * `row 2.receptorNumero`, `informacionReferencia[1].numero` → the row of that reference's `referenciaNumero`.
 */
import type { Finding } from '../../core/model.js';
import { codeTable } from '../../core/code-table.js';

/** Where a CSV document's parts came from: the file line of each line item's row and of each reference's row. */
export interface CsvRowMap {
  lines: number[];
  refs: number[];
  /** A recibo de pago: its line figures subTotal and montoTotal are the columns montoPagado and baseImponible. */
  rep?: boolean;
}

/** Document-level body paths → their column (the longest prefix wins; an unnamed path keeps its body path). */
const DOCUMENT_PATHS: Readonly<Record<string, string>> = codeTable({
  receptor: 'receptorNombre',
  'receptor.nombre': 'receptorNombre',
  'receptor.identificacion': 'receptorTipo',
  'receptor.identificacion.tipo': 'receptorTipo',
  'receptor.identificacion.numero': 'receptorNumero',
  'receptor.correoElectronico': 'receptorCorreo',
  'receptor.otrasSenasExtranjero': 'receptorOtrasSenasExtranjero',
  proveedor: 'proveedorNombre',
  'proveedor.nombre': 'proveedorNombre',
  'proveedor.identificacion': 'proveedorTipo',
  'proveedor.identificacion.tipo': 'proveedorTipo',
  'proveedor.identificacion.numero': 'proveedorNumero',
  'proveedor.correoElectronico': 'proveedorCorreo',
  'proveedor.telefono': 'proveedorTelefono',
  'proveedor.ubicacion': 'proveedorProvincia',
  'proveedor.ubicacion.provincia': 'proveedorProvincia',
  'proveedor.ubicacion.canton': 'proveedorCanton',
  'proveedor.ubicacion.distrito': 'proveedorDistrito',
  'proveedor.ubicacion.direccion': 'proveedorDireccion',
  'proveedor.otrasSenasExtranjero': 'proveedorOtrasSenasExtranjero',
  'resumenFactura.codigoTipoMoneda': 'moneda',
  'resumenFactura.codigoTipoMoneda.codigoMoneda': 'moneda',
  'resumenFactura.codigoTipoMoneda.tipoCambio': 'tipoCambio',
  'resumenFactura.mediosPago': 'medioPago',
  'resumenFactura.mediosPago[0]': 'medioPago',
  'resumenFactura.mediosPago[0].tipoMedioPago': 'medioPago',
  informacionReferencia: 'referenciaTipoDocIR',
});

const REFERENCE_FIELDS: Readonly<Record<string, string>> = codeTable({
  tipoDocIR: 'referenciaTipoDocIR',
  numero: 'referenciaNumero',
  fechaEmision: 'referenciaFechaEmision',
  codigo: 'referenciaCodigo',
  razon: 'referenciaRazon',
});

/** A line's body fields → columns: the row has one tax, so `impuesto[0].tarifa` is the row's `tarifa`. */
const LINE_FIELDS: Readonly<Record<string, string>> = codeTable({
  'impuesto[0].tarifa': 'tarifa',
  'impuesto[0].codigoTarifa': 'codigoTarifa',
  'impuesto[0].codigo': 'impuestoCodigo',
});
const REP_LINE_FIELDS: Readonly<Record<string, string>> = codeTable({ ...LINE_FIELDS, subTotal: 'montoPagado', montoTotal: 'baseImponible' });

/** The column of a document-level path: the longest known prefix, else the path itself. */
function documentColumn(path: string): string {
  for (let p = path; ; ) {
    const col = DOCUMENT_PATHS[p];
    if (col) return col;
    const parent = p.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
    if (parent === p) return path;
    p = parent;
  }
}

export function findingForRows(f: Finding, map: CsvRowMap): Finding {
  const line = /^detalleServicio\[(\d+)\](?:\.(.*))?$/.exec(f.path);
  if (line) {
    const row = map.lines[Number(line[1])];
    if (row !== undefined) {
      const field = line[2];
      const col = field === undefined ? undefined : ((map.rep ? REP_LINE_FIELDS : LINE_FIELDS)[field] ?? field);
      return { path: `row ${row}${col ? '.' + col : ''}`, message: f.message };
    }
  }
  const ref = /^informacionReferencia\[(\d+)\](?:\.(\w+))?/.exec(f.path);
  if (ref) {
    const row = map.refs[Number(ref[1])];
    if (row !== undefined) return { path: `row ${row}.${REFERENCE_FIELDS[ref[2] ?? ''] ?? 'referenciaTipoDocIR'}`, message: f.message };
  }
  return { path: `row ${map.lines[0]}.${documentColumn(f.path)}`, message: f.message };
}
