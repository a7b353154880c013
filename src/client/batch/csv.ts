/**
 * The batch CSV layout (docs/batch-csv.md): one row per line item; the document columns repeat on every row and
 * consecutive rows with the same emisor + tipoDoc + numeroReferencia form one document. The rows give what a person
 * decides; the line figures (subTotal, montoTotal, impuesto monto, impuestoNeto, montoTotalLinea) and the summary
 * totals are computed by the core's one completion (core/input/complete.ts, the ANEXOS formulas in decimal.js), as
 * for a JSON body that leaves them out, so a CSV never carries them. Every kind has its rows:
 * a recibo de pago's (tipoDoc 10) are payments (montoPagado, baseImponible) instead of goods and services.
 */
import { TARIFAS_IVA } from '../../core/codes.js';
import { echo } from '../../core/echo.js';
import { TIPO_DOC_RULE } from '../../core/input/kind-rules.js';
import { KIND_OF_TIPO_DOC } from '../../core/lifecycle.js';
import { completedInput } from '../../core/input/complete.js';
import type { Finding } from '../../core/model.js';
import { dec, isDecimalString, money, plain, ZERO } from '../../core/money.js';
import type { CsvRowMap } from './csv-findings.js';
import { PROVEEDOR_COLUMNS, proveedorOfRow, RECEPTOR_COLUMNS, receptorOfRow, REFERENCE_COLUMNS, referencesOfRows } from './csv-parties.js';
import { cell as get, collector, type CsvRow } from './csv-row.js';
import { closestName } from '../../core/input/unknown-keys.js';

export type { CsvRow } from './csv-row.js';

export const DOCUMENT_COLUMNS = [
  'emisor',
  'numeroReferencia',
  'tipoDoc',
  'fechaEmision',
  'codigoActividad',
  ...RECEPTOR_COLUMNS,
  'moneda',
  'tipoCambio',
  'medioPago',
  'condicionVenta',
  'plazoCredito',
  'sucursal',
  'terminal',
  ...PROVEEDOR_COLUMNS,
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
  'partidaArancelaria',
  'montoPagado',
  'baseImponible',
] as const;

/** Columns every layout has. */
export const REQUIRED_COLUMNS = ['emisor', 'numeroReferencia', 'tipoDoc', 'fechaEmision', 'codigoActividad', 'detalle', 'codigoTarifa'] as const;
/** The columns of a good or service line, required in the header unless it has montoPagado (recibos de pago only). */
export const GOODS_COLUMNS = ['codigo', 'cantidad', 'unidadMedida', 'precioUnitario'] as const;
/** A recibo de pago's payment line (tipoDoc 10). */
const PAYMENT_COLUMNS = ['montoPagado', 'baseImponible'] as const;
/** What a payment line has not: it pays an invoiced amount, with no CABYS, quantity or price of its own. */
const NOT_IN_PAYMENT = ['codigo', 'cantidad', 'unidadMedida', 'precioUnitario', 'descuento', 'codigoDescuento', 'partidaArancelaria'] as const;

/** Every column of the layout. */
export const KNOWN_COLUMNS: ReadonlySet<string> = new Set<string>([...DOCUMENT_COLUMNS, ...LINE_COLUMNS, ...REFERENCE_COLUMNS]);

/** Checks a header row; returns the problem, or undefined when usable. */
export function checkHeader(header: string[]): string | undefined {
  const unknown = header.filter((h) => !KNOWN_COLUMNS.has(h));
  if (unknown.length) {
    const named = unknown.map((u) => {
      const near = closestName(u, [...KNOWN_COLUMNS]);
      return `"${echo(u)}"${near ? ` (did you mean "${near}"?)` : ''}`;
    });
    return `unknown column${unknown.length > 1 ? 's' : ''} ${named.join(', ')} (see docs/batch-csv.md)`;
  }
  const missing: string[] = REQUIRED_COLUMNS.filter((c) => !header.includes(c));
  const goods = GOODS_COLUMNS.filter((c) => !header.includes(c));
  if (goods.length && !header.includes('montoPagado')) missing.push(...goods);
  if (missing.length) {
    const hint = goods.length && !header.includes('montoPagado') ? '; a file of recibos de pago only has montoPagado instead of the goods columns' : '';
    return `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (see docs/batch-csv.md${hint})`;
  }
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h)) return `column "${echo(h)}" appears twice`;
    seen.add(h);
  }
  return undefined;
}

/** The grouping key of a row: emisor + tipoDoc + numeroReferencia. */
export function groupKey(row: CsvRow): string {
  return `${row.cells.emisor ?? ''}|${row.cells.tipoDoc ?? ''}|${row.cells.numeroReferencia ?? ''}`;
}

/**
 * Builds the document body of consecutive rows of one document, or the findings that stop it (paths name rows);
 * `rows` says where each line and reference came from, to point the service's findings at them (findingForRows).
 */
export function documentFromRows(rows: CsvRow[]): { body: Record<string, unknown>; rows: CsvRowMap } | { errors: Finding[] } {
  const first = rows[0]!;
  const { errors, at } = collector();
  const kind = KIND_OF_TIPO_DOC[get(first, 'tipoDoc')];
  const rep = kind === 'REP';
  if (!kind) at(first, 'tipoDoc', TIPO_DOC_RULE);

  // Document columns: taken from the first row; a later row may leave them empty but not contradict them.
  for (const row of rows.slice(1)) {
    for (const col of DOCUMENT_COLUMNS) {
      const v = get(row, col);
      if (v !== '' && v !== get(first, col)) at(row, col, `is "${echo(v)}" but the document's first row (row ${first.line}) says "${echo(get(first, col))}"`);
    }
  }

  /** The lines as a person decides them; the core completes their figures (completeBody). */
  const detalleServicio: Record<string, unknown>[] = [];
  rows.forEach((row, i) => {
    const before = errors.length;
    const amount = (col: string, opts: { optional?: boolean; positive?: boolean }): string | undefined => {
      const v = get(row, col);
      if (v === '') {
        if (!opts.optional) at(row, col, 'is required');
        return undefined;
      }
      if (!isDecimalString(v) || v.startsWith('-')) {
        at(row, col, `must be a non-negative decimal number with a dot for decimals, e.g. "1250.50" (got "${echo(v)}")`);
        return undefined;
      }
      if (opts.positive && dec(v).lte(0)) at(row, col, `must be greater than 0 (got "${echo(v)}")`);
      return v;
    };
    let cantidad: string | undefined;
    let precio: string | undefined;
    let descuento: string | undefined;
    let pagado: string | undefined;
    let base: string | undefined;
    if (rep) {
      for (const col of NOT_IN_PAYMENT)
        if (get(row, col) !== '') at(row, col, 'is not part of a recibo de pago (tipoDoc 10): its lines are payments (detalle, montoPagado, baseImponible, the tax); leave it empty');
      pagado = amount('montoPagado', { positive: true });
      base = amount('baseImponible', { optional: true, positive: true });
      if (pagado !== undefined && base !== undefined && dec(base).gt(dec(pagado)))
        at(row, 'baseImponible', `must not exceed montoPagado (${pagado}): the IVA base of a payment is at most the amount paid`);
    } else {
      for (const col of PAYMENT_COLUMNS) if (get(row, col) !== '') at(row, col, 'is only for a recibo de pago (tipoDoc 10); leave it empty');
      cantidad = amount('cantidad', { positive: true });
      precio = amount('precioUnitario', { positive: true });
      descuento = amount('descuento', { optional: true });
    }
    const codigoTarifa = get(row, 'codigoTarifa').padStart(2, '0');
    const impuestoCodigo = (get(row, 'impuestoCodigo') || '01').padStart(2, '0');
    let tarifa = get(row, 'tarifa');
    if (get(row, 'codigoTarifa') === '') at(row, 'codigoTarifa', 'is required (Nota 8.1, e.g. "08" for 13 %, "10" exenta)');
    else if (tarifa === '') {
      const known = TARIFAS_IVA[codigoTarifa];
      if (known) tarifa = known.rate;
      else at(row, 'codigoTarifa', `"${echo(codigoTarifa)}" is not a código de tarifa del IVA (Nota 8.1)`);
    } else if (!isDecimalString(tarifa) || tarifa.startsWith('-')) at(row, 'tarifa', `must be a percentage, e.g. "13" (got "${echo(tarifa)}")`);
    if (errors.length > before || (rep ? pagado === undefined : cantidad === undefined || precio === undefined)) return;
    // The tarifa as written: the core says when it does not fit codigoTarifa (and computes with the rate of codigoTarifa).
    const impuesto = [{ codigo: impuestoCodigo, codigoTarifa, tarifa: plain(dec(tarifa), 2) }];
    if (rep) {
      // A payment line: subTotal the amount paid (the XML's MontoTotal), montoTotal the IVA base (its SubTotal).
      detalleServicio.push({ numeroLinea: i + 1, detalle: get(row, 'detalle'), subTotal: money(dec(pagado!)), montoTotal: money(dec(base ?? pagado!)), impuesto });
      return;
    }
    const desc = descuento === undefined ? ZERO : dec(descuento);
    const line: Record<string, unknown> = {
      numeroLinea: i + 1,
      codigo: get(row, 'codigo'),
      detalle: get(row, 'detalle'),
      cantidad: plain(dec(cantidad!), 3),
      unidadMedida: get(row, 'unidadMedida'),
      precioUnitario: money(dec(precio!)),
      descuento: money(desc),
      impuesto,
    };
    if (get(row, 'codigoDescuento') !== '' && desc.gt(0)) line.codigoDescuento = get(row, 'codigoDescuento');
    if (get(row, 'partidaArancelaria') !== '') line.partidaArancelaria = get(row, 'partidaArancelaria');
    detalleServicio.push(line);
  });
  const proveedor = proveedorOfRow(first, at);
  const { refs, refLines } = referencesOfRows(rows, at);
  if (errors.length) return { errors };

  const medio = get(first, 'medioPago');
  const resumenFactura: Record<string, unknown> = {
    codigoTipoMoneda: { codigoMoneda: get(first, 'moneda') || 'CRC', ...(get(first, 'tipoCambio') ? { tipoCambio: get(first, 'tipoCambio') } : {}) },
  };
  if (medio) resumenFactura.mediosPago = [{ tipoMedioPago: medio }];

  const numero = get(first, 'numeroReferencia');
  const body: Record<string, unknown> = {
    emisor: get(first, 'emisor'),
    numeroReferencia: /^\d{1,15}$/.test(numero) ? Number(numero) : numero,
    codigoActividad: get(first, 'codigoActividad'),
    tipoDoc: get(first, 'tipoDoc'),
    folioType: 'INVOICE',
    fechaEmision: get(first, 'fechaEmision'),
    receptor: receptorOfRow(first),
    detalleServicio,
    resumenFactura,
  };
  for (const col of ['condicionVenta', 'plazoCredito', 'sucursal', 'terminal'] as const) {
    const v = get(first, col);
    if (v !== '') body[col] = v;
  }
  if (proveedor) body.proveedor = proveedor;
  if (refs.length) body.informacionReferencia = refs;
  // Every figure (the lines', the resumen's) by the core's formulas: a CSV never carries one.
  return { body: completedInput(body) as Record<string, unknown>, rows: { lines: rows.map((x) => x.line), refs: refLines, ...(rep ? { rep } : {}) } };
}
