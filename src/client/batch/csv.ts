/**
 * The batch CSV layout (docs/batch-csv.md): one row per line item; the document columns repeat on every row and
 * consecutive rows with the same emisor + tipoDoc + numeroReferencia form one document. The line figures the body
 * needs (subTotal, montoTotal, impuesto monto, impuestoNeto, montoTotalLinea) and the summary totals are computed
 * here with the core's formulas (`computeTotals`, decimal.js), so a CSV never carries them.
 */
import { TARIFAS_IVA } from '../../core/codes.js';
import type { Finding, Linea } from '../../core/model.js';
import { dec, isDecimalString, money, plain, ZERO } from '../../core/money.js';
import { computeTotals } from '../../core/totals.js';

export const DOCUMENT_COLUMNS = [
  'emisor',
  'numeroReferencia',
  'tipoDoc',
  'fechaEmision',
  'codigoActividad',
  'receptorNombre',
  'receptorTipo',
  'receptorNumero',
  'receptorCorreo',
  'moneda',
  'tipoCambio',
  'medioPago',
  'condicionVenta',
  'plazoCredito',
  'sucursal',
  'terminal',
] as const;

export const LINE_COLUMNS = [
  'codigo',
  'detalle',
  'cantidad',
  'unidadMedida',
  'precioUnitario',
  'descuento',
  'codigoDescuento',
  'impuestoCodigo',
  'codigoTarifa',
  'tarifa',
] as const;

export const REQUIRED_COLUMNS = ['emisor', 'numeroReferencia', 'tipoDoc', 'fechaEmision', 'codigoActividad', 'codigo', 'detalle', 'cantidad', 'unidadMedida', 'precioUnitario', 'codigoTarifa'] as const;

const KNOWN = new Set<string>([...DOCUMENT_COLUMNS, ...LINE_COLUMNS]);

/** A data row: its line number in the file and its cells by column name ('' when empty or absent). */
export interface CsvRow {
  line: number;
  cells: Record<string, string>;
}

/** Checks a header row; returns the problem, or undefined when usable. */
export function checkHeader(header: string[]): string | undefined {
  const unknown = header.filter((h) => !KNOWN.has(h));
  if (unknown.length) return `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')} (see docs/batch-csv.md)`;
  const missing = REQUIRED_COLUMNS.filter((c) => !header.includes(c));
  if (missing.length) return `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (see docs/batch-csv.md)`;
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h)) return `column "${h}" appears twice`;
    seen.add(h);
  }
  return undefined;
}

/** The grouping key of a row: emisor + tipoDoc + numeroReferencia. */
export function groupKey(row: CsvRow): string {
  return `${row.cells.emisor ?? ''}|${row.cells.tipoDoc ?? ''}|${row.cells.numeroReferencia ?? ''}`;
}

const get = (row: CsvRow, col: string): string => (row.cells[col] ?? '').trim();

/** Builds the document body of consecutive rows of one document, or the findings that stop it (paths name rows). */
export function documentFromRows(rows: CsvRow[]): { body: Record<string, unknown> } | { errors: Finding[] } {
  const first = rows[0]!;
  const errors: Finding[] = [];
  const at = (row: CsvRow, col: string, message: string) => errors.push({ path: `row ${row.line}.${col}`, message });

  // Document columns: taken from the first row; a later row may leave them empty but not contradict them.
  for (const row of rows.slice(1)) {
    for (const col of DOCUMENT_COLUMNS) {
      const v = get(row, col);
      if (v !== '' && v !== get(first, col)) at(row, col, `is "${v}" but the document's first row (row ${first.line}) says "${get(first, col)}"`);
    }
  }

  const lineas: Linea[] = [];
  /** The tarifa of each row as written: the body carries it, and the core says when it does not fit codigoTarifa. */
  const tarifas: string[] = [];
  rows.forEach((row, i) => {
    const before = errors.length;
    const amount = (col: string, opts: { optional?: boolean; positive?: boolean }): string | undefined => {
      const v = get(row, col);
      if (v === '') {
        if (!opts.optional) at(row, col, 'is required');
        return undefined;
      }
      if (!isDecimalString(v) || v.startsWith('-')) {
        at(row, col, `must be a non-negative decimal number with a dot for decimals, e.g. "1250.50" (got "${v}")`);
        return undefined;
      }
      if (opts.positive && dec(v).lte(0)) at(row, col, `must be greater than 0 (got "${v}")`);
      return v;
    };
    const cantidad = amount('cantidad', { positive: true });
    const precio = amount('precioUnitario', { positive: true });
    const descuento = amount('descuento', { optional: true });
    const codigoTarifa = get(row, 'codigoTarifa').padStart(2, '0');
    const impuestoCodigo = (get(row, 'impuestoCodigo') || '01').padStart(2, '0');
    let tarifa = get(row, 'tarifa');
    if (get(row, 'codigoTarifa') === '') at(row, 'codigoTarifa', 'is required (Nota 8.1, e.g. "08" for 13 %, "10" exenta)');
    else if (tarifa === '') {
      const known = TARIFAS_IVA[codigoTarifa];
      if (known) tarifa = known.rate;
      else at(row, 'codigoTarifa', `"${codigoTarifa}" is not a código de tarifa del IVA (Nota 8.1)`);
    } else if (!isDecimalString(tarifa) || tarifa.startsWith('-')) at(row, 'tarifa', `must be a percentage, e.g. "13" (got "${tarifa}")`);
    if (errors.length > before || cantidad === undefined || precio === undefined) return;
    const desc = descuento === undefined ? ZERO : dec(descuento);
    // The figures are computed with the rate of codigoTarifa (IVA 01), the one the core's finding on a tarifa that
    // does not fit it calls right: that finding alone then says what to fix in the row.
    const rate = impuestoCodigo === '01' ? (TARIFAS_IVA[codigoTarifa]?.rate ?? tarifa) : tarifa;
    tarifas.push(tarifa);
    lineas.push({
      numeroLinea: i + 1,
      codigoCABYS: get(row, 'codigo'),
      codigoComercial: [],
      cantidad: dec(cantidad),
      unidadMedida: get(row, 'unidadMedida'),
      detalle: get(row, 'detalle'),
      precioUnitario: dec(precio),
      descuentos: desc.gt(0) ? [{ montoDescuento: desc, codigoDescuento: get(row, 'codigoDescuento').padStart(2, '0') || '07' }] : [],
      impuestos: [{ codigo: impuestoCodigo, codigoTarifaIVA: codigoTarifa, tarifa: dec(rate) }],
    });
  });
  if (errors.length) return { errors };

  const medio = get(first, 'medioPago');
  let totals;
  try {
    totals = computeTotals({ lineas, otrosCargos: [], mediosPago: medio ? [{ tipoMedioPago: medio.padStart(2, '0') }] : [] });
  } catch (e) {
    return { errors: [{ path: `row ${first.line}`, message: `cannot compute the totals: ${(e as Error).message}` }] };
  }

  const detalleServicio = lineas.map((l, i) => {
    const t = totals.lineas[i]!;
    const row = rows[i]!;
    const line: Record<string, unknown> = {
      numeroLinea: l.numeroLinea,
      codigo: l.codigoCABYS,
      detalle: l.detalle,
      cantidad: plain(l.cantidad, 3),
      unidadMedida: l.unidadMedida,
      precioUnitario: money(l.precioUnitario),
      subTotal: money(t.montoTotal),
      descuento: money(t.totalDescuentos),
      montoTotal: money(t.subTotal),
      impuestoNeto: money(t.impuestoNeto),
      montoTotalLinea: money(t.montoTotalLinea),
      impuesto: l.impuestos.map((imp, j) => ({
        codigo: imp.codigo,
        codigoTarifa: imp.codigoTarifaIVA,
        tarifa: plain(dec(tarifas[i]!), 2),
        monto: money(t.impuestos[j]!.monto),
      })),
    };
    if (get(row, 'codigoDescuento') !== '' && t.totalDescuentos.gt(0)) line.codigoDescuento = get(row, 'codigoDescuento');
    return line;
  });

  const resumenFactura: Record<string, unknown> = {
    codigoTipoMoneda: { codigoMoneda: get(first, 'moneda') || 'CRC', ...(get(first, 'tipoCambio') ? { tipoCambio: get(first, 'tipoCambio') } : {}) },
  };
  if (medio) resumenFactura.mediosPago = [{ tipoMedioPago: medio }];
  const r = totals.resumen;
  for (const [k, v] of Object.entries(r)) {
    if (k === 'totalDesgloseImpuesto' || k === 'totalIVADevuelto' || k === 'totalImpAsumEmisorFabrica') continue;
    const d = v as ReturnType<typeof dec>;
    if (d.gt(0) || k === 'totalComprobante' || k === 'totalVenta' || k === 'totalVentaNeta' || k === 'totalImpuesto') resumenFactura[k] = money(d);
  }

  const receptorCols = ['receptorNombre', 'receptorTipo', 'receptorNumero', 'receptorCorreo'];
  const hasReceptor = receptorCols.some((c) => get(first, c) !== '');
  const receptor = hasReceptor
    ? {
        nombre: get(first, 'receptorNombre'),
        identificacion: { tipo: get(first, 'receptorTipo'), numero: get(first, 'receptorNumero') },
        ...(get(first, 'receptorCorreo') ? { correoElectronico: get(first, 'receptorCorreo') } : {}),
      }
    : '';

  const numero = get(first, 'numeroReferencia');
  const body: Record<string, unknown> = {
    emisor: get(first, 'emisor'),
    numeroReferencia: /^\d{1,15}$/.test(numero) ? Number(numero) : numero,
    codigoActividad: get(first, 'codigoActividad'),
    tipoDoc: get(first, 'tipoDoc'),
    folioType: 'INVOICE',
    fechaEmision: get(first, 'fechaEmision'),
    receptor,
    detalleServicio,
    resumenFactura,
  };
  for (const col of ['condicionVenta', 'plazoCredito', 'sucursal', 'terminal'] as const) {
    const v = get(first, col);
    if (v !== '') body[col] = v;
  }
  return { body };
}

/**
 * Maps a finding of a body built from CSV rows back to the row: `detalleServicio[1].cantidad` → `row 7.cantidad`
 * (the document's second row); document-level paths get the first row.
 */
export function findingForRows(f: Finding, rowLines: number[]): Finding {
  const m = /^detalleServicio\[(\d+)\](?:\.(.*))?$/.exec(f.path);
  if (m) {
    const line = rowLines[Number(m[1])];
    if (line !== undefined) return { path: `row ${line}${m[2] ? '.' + m[2] : ''}`, message: f.message };
  }
  return { path: `row ${rowLines[0]}.${f.path}`, message: f.message };
}
