/**
 * The rules of one line of detalleServicio and of its taxes, with findings at the field path. A rule that says what
 * an input must be hands the right value to the figure check; one that calls it wrong without one holds it back
 * (FigureInputs, ./figures.ts).
 */
import {
  CODIGOS_DESCUENTO,
  CODIGOS_IMPUESTO,
  INSTITUCIONES_EXONERACION,
  TARIFAS_IVA,
  TIPOS_CODIGO_COMERCIAL,
  TIPOS_EXONERACION,
  TIPOS_TRANSACCION,
  UNIDADES_MEDIDA,
} from '../codes.js';
import { parseIsoDateTime } from '../dates.js';
import { echo } from '../echo.js';
import type { DocumentKind, Finding } from '../model.js';
import { dec, round } from '../money.js';
import type { Add, FigureInputs } from './figures.js';
import type { ImpuestoInput, LineaInput } from './schema.js';

export function checkLine(line: LineaInput, i: number, kind: DocumentKind | undefined, add: Add, judged: FigureInputs): void {
  const p = `detalleServicio[${i}]`;
  if (line.numeroLinea !== i + 1) add(`${p}.numeroLinea`, `must be ${i + 1}: lines are numbered consecutively from 1`);
  if (!UNIDADES_MEDIDA.has(line.unidadMedida)) add(`${p}.unidadMedida`, `"${echo(line.unidadMedida)}" is not a unidad de medida of the v4.4 schema (e.g. "Unid", "Sp", "Os", "Kg")`);
  if (dec(line.precioUnitario).lte(0)) judged.hold(add(`${p}.precioUnitario`, 'must be greater than 0'), { line: i, what: 'precioUnitario' });
  const descuento = dec(line.descuento ?? '0');
  const montoTotal = round(dec(line.cantidad).times(dec(line.precioUnitario)));
  if (descuento.gt(montoTotal)) judged.hold(add(`${p}.descuento`, 'must not exceed cantidad × precioUnitario'), { line: i, what: 'descuento' });
  if (line.codigoDescuento !== undefined && !CODIGOS_DESCUENTO[line.codigoDescuento]) {
    const f = add(`${p}.codigoDescuento`, 'is not a known código de descuento (Nota 20)');
    if (descuento.gt(0)) judged.hold(f, { line: i, what: 'codigoDescuento' });
  }
  if (line.codigoDescuento === '99' && !line.naturalezaDescuento) add(`${p}.naturalezaDescuento`, 'is required when codigoDescuento is "99"');
  if (line.tipoTransaccion !== undefined && !TIPOS_TRANSACCION.has(line.tipoTransaccion)) add(`${p}.tipoTransaccion`, 'is not a known tipo de transacción (Nota 22)');
  if (line.ivaCobradoFabrica !== undefined && !['01', '02'].includes(line.ivaCobradoFabrica))
    judged.hold(add(`${p}.ivaCobradoFabrica`, 'must be "01" or "02"'), { line: i, what: 'clase' });
  line.codigoComercial?.forEach((c, j) => {
    if (!TIPOS_CODIGO_COMERCIAL.has(c.tipo)) add(`${p}.codigoComercial[${j}].tipo`, 'must be 01, 02, 03, 04 or 99');
  });
  line.impuesto.forEach((tax, j) => checkTax(tax, i, j, kind, add, judged));
}

export function checkTax(tax: ImpuestoInput, i: number, j: number, kind: DocumentKind | undefined, add: Add, judged: FigureInputs): void {
  const p = `detalleServicio[${i}].impuesto[${j}]`;
  // An IVA code to fix changes the tax and how the line counts in the resumen: those figures wait for it.
  const holdTax = (f: Finding) => judged.hold(f, { line: i, tax: j, what: 'tarifa' }, { line: i, what: 'clase' });
  if (!CODIGOS_IMPUESTO[tax.codigo]) holdTax(add(`${p}.codigo`, 'is not a known código de impuesto (Nota 8; "01" is IVA)'));
  if (['03', '04', '05', '06'].includes(tax.codigo))
    add(`${p}.codigo`, `tax codigo ${tax.codigo} needs DatosImpuestoEspecifico (specific taxes per unit), which fecr does not support yet`);
  if (tax.codigo === '99' && !tax.codigoImpuestoOtro) add(`${p}.codigoImpuestoOtro`, 'is required when codigo is "99"');
  const ncnd = kind === 'NC' || kind === 'ND';
  if (tax.codigo === '01' || tax.codigo === '07') {
    if (tax.codigoTarifa === undefined) holdTax(add(`${p}.codigoTarifa`, `is required for tax codigo ${tax.codigo}`));
    else {
      const t = TARIFAS_IVA[tax.codigoTarifa];
      if (!t) holdTax(add(`${p}.codigoTarifa`, 'is not a known código de tarifa del IVA (Nota 8.1; "08" is 13 %)'));
      else if (t.ncndOnly && !ncnd) holdTax(add(`${p}.codigoTarifa`, `${tax.codigoTarifa} (${t.label}) is only allowed in notas de crédito and débito`));
      else if (tax.codigo === '01' && !dec(tax.tarifa).eq(dec(t.rate))) {
        add(`${p}.tarifa`, `must be "${t.rate}" for codigoTarifa ${tax.codigoTarifa} (${t.label})`);
        judged.correctRate(i, j, dec(t.rate));
      }
    }
  } else if (tax.codigoTarifa !== undefined && !TARIFAS_IVA[tax.codigoTarifa]) {
    add(`${p}.codigoTarifa`, 'is not a known código de tarifa del IVA (Nota 8.1)');
  }
  if (tax.codigo === '08' && tax.factorCalculoIVA === undefined)
    judged.hold(add(`${p}.factorCalculoIVA`, 'is required for tax codigo 08 (bienes usados)'), { line: i, tax: j, what: 'factorCalculoIVA' });
  const ex = tax.exoneracion;
  if (ex) {
    const e = `${p}.exoneracion`;
    const t = TIPOS_EXONERACION[ex.tipoDocumento];
    if (!t) add(`${e}.tipoDocumento`, 'is not a known tipo de documento de exoneración (Nota 10.1)');
    else if (t.ncndOnly && !ncnd) add(`${e}.tipoDocumento`, `${ex.tipoDocumento} (${t.label}) is only allowed in notas de crédito and débito in v4.4`);
    else if (t.requiresArticulo && (ex.articulo === undefined || ex.inciso === undefined))
      add(`${e}.articulo`, `articulo and inciso are required for tipoDocumento ${ex.tipoDocumento}`);
    if (ex.tipoDocumento === '99' && !ex.tipoDocumentoOtro) add(`${e}.tipoDocumentoOtro`, 'is required when tipoDocumento is "99"');
    if (!INSTITUCIONES_EXONERACION[ex.nombreInstitucion]) add(`${e}.nombreInstitucion`, 'is not a known institution code (Nota 23)');
    if (ex.nombreInstitucion === '99' && !ex.nombreInstitucionOtros) add(`${e}.nombreInstitucionOtros`, 'is required when nombreInstitucion is "99"');
    if (!parseIsoDateTime(ex.fechaEmision)) add(`${e}.fechaEmision`, 'must be a valid ISO 8601 date-time');
    const pct = dec(ex.porcentajeExoneracion);
    const rate = judged.rate(i, j, tax.tarifa);
    const held = (f: Finding) => judged.hold(f, { line: i, tax: j, what: 'exoneracion' });
    if (pct.lte(0)) held(add(`${e}.porcentajeExoneracion`, 'must be greater than 0'));
    else if (pct.gt(rate)) held(add(`${e}.porcentajeExoneracion`, `must not exceed the tax rate (${rate.toFixed()})`));
    else if (pct.decimalPlaces() > 2) held(add(`${e}.porcentajeExoneracion`, 'must have at most 2 decimals'));
  }
}
