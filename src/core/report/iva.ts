/**
 * The sales side of a month's IVA figures (issue 29), pure: the issuer's accepted comprobantes, parsed from their
 * signed XML, summed in colones (each amount × the document's TipoCambio; CRC: 1) by what the IVA return asks:
 *  - gravado: base and IVA débito by CodigoTarifaIVA and Tarifa (lines without an exoneración);
 *  - exonerado: lines with an exoneración: base, IVA before exoneración, MontoExoneracion and the IVA left (neto);
 *  - exento: CodigoTarifaIVA 10; no sujeto: 01 and 11 (ANEXOS v4.4 nota 8.1, p.51-52), and lines without IVA;
 *  - exportaciones: every line of an FEE (base and any IVA stated);
 *  - pagos recibidos: REPs apart (see REP_NOTA), not in the débito.
 * FE, TE, FEE and ND add; NC subtracts. FEC is the buyer's self-assessed IVA: `autoliquidado`, by tarifa.
 * Every figure is kept exact (Decimal) and rounded half-up to 5 decimals once, at the end.
 */
import { dec, money, ZERO, type Decimal } from '../money.js';
import type { ParsedComprobante, ParsedLinea } from '../xml/parse-comprobante.js';

export const REP_NOTA =
  'ANEXOS v4.4 (LineaDetalle, SubTotal): a Recibo Electrónico de Pago records the payment of a comprobante issued on credit under CondicionVenta 08 or 10 (nota 5), its SubTotal being "el monto del pago a registrar para el cálculo del IVA respectivo"; the ANEXOS do not say whether that IVA replaces the invoice\'s: fecr counts the invoice when issued and lists the REPs apart, not in the débito';
export const D150_NOTA = 'mapping not sourced: no published D-150 (TRIBU-CR) layout was found to cite; each figure is given by tarifa and kind for the taxpayer to carry over';
export const NO_SUJETO_CODES = ['01', '11'];
export const EXENTO_CODE = '10';

interface Acc {
  base: Decimal;
  impuesto: Decimal;
  claves: Set<string>;
}
const acc = (): Acc => ({ base: ZERO, impuesto: ZERO, claves: new Set() });

export interface IvaTarifaLine {
  codigoTarifaIVA: string;
  tarifa: string;
  base: string;
  impuesto: string;
  documentos: number;
}
export interface IvaBucket {
  base: string;
  impuesto: string;
  documentos: number;
}
export interface ExoneradoBucket extends IvaBucket {
  montoExoneracion: string;
  impuestoNeto: string;
}
export interface SalesFigures {
  gravado: IvaTarifaLine[];
  exento: IvaBucket;
  noSujeto: IvaBucket;
  exonerado: ExoneradoBucket;
  exportaciones: IvaBucket;
  /** IVA débito: Σ gravado.impuesto + exonerado.impuestoNeto + exportaciones.impuesto. */
  ivaDebito: string;
  documentos: number;
  pagosRecibidos: IvaBucket & { nota: string };
  /** FEC the issuer made: the IVA it self-assesses, by tarifa. */
  autoliquidado: IvaTarifaLine[];
  ivaAutoliquidado: string;
  documentosFec: number;
}

/** The IVA Impuesto of a line (Codigo 01), if any. */
function ivaOf(l: ParsedLinea) {
  return l.impuestos.find((t) => t.codigo === '01');
}

function tarifaLines(m: Map<string, Acc & { tarifa: string }>): IvaTarifaLine[] {
  return [...m.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => ({ codigoTarifaIVA: k.split('|')[0]!, tarifa: v.tarifa, base: money(v.base), impuesto: money(v.impuesto), documentos: v.claves.size }));
}
const bucket = (a: Acc): IvaBucket => ({ base: money(a.base), impuesto: money(a.impuesto), documentos: a.claves.size });

/** Sums the sales side over `docs` (each already known accepted by Hacienda and dated in the month). */
export function salesIvaFigures(docs: ParsedComprobante[]): SalesFigures {
  const gravado = new Map<string, Acc & { tarifa: string }>();
  const autoliq = new Map<string, Acc & { tarifa: string }>();
  const exento = acc();
  const noSujeto = acc();
  const exportaciones = acc();
  const rep = acc();
  const exo = { ...acc(), exoneracion: ZERO };
  const sales = new Set<string>();
  const fec = new Set<string>();
  for (const d of docs) {
    const tc = d.resumen.codigoMoneda === 'CRC' ? dec(1) : dec(d.resumen.tipoCambio);
    const sign = d.kind === 'NC' ? -1 : 1;
    const crc = (v: string | undefined) => dec(v ?? '0').times(tc).times(sign);
    for (const l of d.lineas) {
      const t = ivaOf(l);
      const base = crc(l.baseImponible ?? l.subTotal);
      const impuesto = crc(t?.monto);
      const add = (a: Acc) => {
        a.base = a.base.plus(base);
        a.impuesto = a.impuesto.plus(impuesto);
        a.claves.add(d.clave);
      };
      if (d.kind === 'REP') add(rep);
      else if (d.kind === 'FEC') {
        const k = `${t?.codigoTarifaIVA ?? ''}|${t?.tarifa ?? ''}`;
        const cur = autoliq.get(k) ?? { ...acc(), tarifa: t?.tarifa ?? '' };
        add(cur);
        autoliq.set(k, cur);
      } else if (d.kind === 'FEE') add(exportaciones);
      else if (!t || NO_SUJETO_CODES.includes(t.codigoTarifaIVA ?? '')) add(noSujeto);
      else if (t.codigoTarifaIVA === EXENTO_CODE) add(exento);
      else if (t.exoneracion) {
        add(exo);
        exo.exoneracion = exo.exoneracion.plus(crc(t.exoneracion.montoExoneracion));
      } else {
        const k = `${t.codigoTarifaIVA ?? ''}|${t.tarifa ?? ''}`;
        const cur = gravado.get(k) ?? { ...acc(), tarifa: t.tarifa ?? '' };
        add(cur);
        gravado.set(k, cur);
      }
    }
    if (d.kind === 'FEC') fec.add(d.clave);
    else if (d.kind !== 'REP') sales.add(d.clave);
  }
  const g = tarifaLines(gravado);
  const exoNeto = exo.impuesto.minus(exo.exoneracion);
  const debito = g.reduce((a, l) => a.plus(dec(l.impuesto)), ZERO).plus(dec(money(exoNeto))).plus(dec(money(exportaciones.impuesto)));
  const a = tarifaLines(autoliq);
  return {
    gravado: g,
    exento: bucket(exento),
    noSujeto: bucket(noSujeto),
    exonerado: { ...bucket(exo), montoExoneracion: money(exo.exoneracion), impuestoNeto: money(exoNeto) },
    exportaciones: bucket(exportaciones),
    ivaDebito: money(debito),
    documentos: sales.size,
    pagosRecibidos: { ...bucket(rep), nota: REP_NOTA },
    autoliquidado: a,
    ivaAutoliquidado: money(a.reduce((s, l) => s.plus(dec(l.impuesto)), ZERO)),
    documentosFec: fec.size,
  };
}
