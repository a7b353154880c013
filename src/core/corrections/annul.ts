/**
 * The nota de crédito that annuls a comprobante completely (issue 30, `fecr documents annul`): a body (the spec's
 * "Electronic document") made from the original's signed XML as core/xml/parse-comprobante.ts reads it, with its
 * lines, taxes, exoneraciones, otros cargos, currency and rate, and every figure copied, so that the service
 * computing them again (core/totals.ts) checks that they are the original's. Pure.
 *
 * Its InformacionReferencia names the original: TipoDocIR of its kind (Nota 10), Numero its clave, FechaEmisionIR its
 * FechaEmision, Codigo 01 "Anula documento de referencia" (Nota 9). Its receptor is the original's: "En REP, NC y ND,
 * los datos registrados deben coincidir con el comprobante original" (ANEXOS v4.4, Receptor > Identificacion).
 */
import { parseConsecutivo } from '../clave.js';
import { CODIGOS_REFERENCIA } from '../codes.js';
import { RESUMEN_TOTAL_FIELDS } from '../input/schema.js';
import { dec, money, sum } from '../money.js';
import type { ParsedComprobante, ParsedImpuesto, ParsedLinea } from '../xml/parse-comprobante.js';
import { ANNULLABLE_KINDS, CODIGO_ANULA, TIPO_DOC_IR_OF_KIND } from './references.js';

/** Why a comprobante cannot be the base of a derived document: one line, in English. */
export class CorrectionRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorrectionRefused';
  }
}

/** Default Razon of an annulment (3-180 characters, Nota 9's wording). */
export const DEFAULT_ANNUL_RAZON = CODIGOS_REFERENCIA[CODIGO_ANULA] ?? 'Anula documento de referencia';

type Body = Record<string, unknown>;

const RECEPTOR_NC = new Set(['01', '02', '03', '04']);

/** The NC body that annuls `original` in full; `fechaEmision` is the NC's (Costa Rica date-time). */
export function annulmentBody(original: ParsedComprobante, opts: { fechaEmision: string; razon?: string }): Body {
  const tipoDocIR = TIPO_DOC_IR_OF_KIND[original.kind];
  if (!ANNULLABLE_KINDS.has(original.kind) || tipoDocIR === undefined) {
    throw new CorrectionRefused(`${original.clave} is ${KIND_WORDS[original.kind] ?? original.kind}: a nota de crédito made here annuls an FE, TE or ND`);
  }
  // An NC's receptor is a Costa Rican taxpayer (01-04), as the original's must be (core/input/kind-rules.ts
  // RECEPTOR_NACIONAL): a ticket without one, or to a foreign buyer, cannot be annulled by an NC made from it.
  const tipo = original.receptor?.identificacion?.tipo;
  if (tipo === undefined || !RECEPTOR_NC.has(tipo)) {
    throw new CorrectionRefused(`${original.clave} has ${tipo === undefined ? 'no receptor' : `a foreign receptor (${tipo})`}: a nota de crédito names a receptor with a Costa Rican identificación (01-04)`);
  }
  const lines = original.lineas.map((l) => lineBody(l, original.clave));
  const razon = (opts.razon ?? '').trim() || DEFAULT_ANNUL_RAZON;
  return {
    ...commonOf(original),
    tipoDoc: '3',
    fechaEmision: opts.fechaEmision,
    ...(original.condicionVentaOtros ? { condicionVentaOtros: original.condicionVentaOtros } : {}),
    ...(original.plazoCredito !== undefined ? { plazoCredito: Number(original.plazoCredito) } : {}),
    ...(original.codigoActividadReceptor ? { codigoActividadReceptor: original.codigoActividadReceptor } : {}),
    detalleServicio: lines,
    ...(original.otrosCargos.length > 0 ? { otrosCargos: original.otrosCargos.map(cargoBody) } : {}),
    resumenFactura: resumenBody(original),
    informacionReferencia: [{ tipoDocIR, numero: original.clave, fechaEmision: original.fechaEmision, codigo: CODIGO_ANULA, razon }],
  };
}

/** What every body derived from `original` shares: the issuer, its activity, sucursal and terminal, the receptor. */
export function commonOf(original: ParsedComprobante): Body {
  const parts = parseConsecutivo(original.numeroConsecutivo);
  return {
    emisor: original.emisor.identificacion.numero,
    ...(original.codigoActividadEmisor ? { codigoActividad: original.codigoActividadEmisor } : {}),
    folioType: 'INVOICE',
    ...(parts ? { sucursal: parts.sucursal, terminal: parts.terminal } : {}),
    ...(original.proveedorSistemas ? { proveedorSistemas: original.proveedorSistemas } : {}),
    receptor: receptorBody(original),
    condicionVenta: original.condicionVenta,
  };
}

const KIND_WORDS: Record<string, string> = {
  NC: 'a nota de crédito (an ND reverses it)',
  REP: 'a recibo electrónico de pago',
  FEC: 'a factura electrónica de compra (its notes are the buyer\'s, TipoDocIR 17)',
  FEE: 'a factura electrónica de exportación (its receptor is foreign: write its NC as a body, fecr send)',
};

function receptorBody(p: ParsedComprobante): Body | '' {
  const r = p.receptor;
  if (!r || !r.identificacion) return '';
  const u = r.ubicacion;
  return {
    nombre: r.nombre,
    identificacion: { tipo: r.identificacion.tipo, numero: r.identificacion.numero },
    ...(r.correoElectronico ? { correoElectronico: r.correoElectronico } : {}),
    ...(r.nombreComercial ? { nombreComercial: r.nombreComercial } : {}),
    ...(u && u.otrasSenas ? { ubicacion: { provincia: u.provincia, canton: u.canton, distrito: u.distrito, ...(u.barrio ? { barrio: u.barrio } : {}), direccion: u.otrasSenas } } : {}),
    ...(r.otrasSenasExtranjero ? { otrasSenasExtranjero: r.otrasSenasExtranjero } : {}),
    ...(r.telefono ? { telefono: `+${r.telefono.codigoPais} ${r.telefono.numTelefono}` } : {}),
  };
}

function lineBody(l: ParsedLinea, clave: string): Body {
  if (l.tieneSurtido || l.codigoCABYS === undefined || l.cantidad === undefined || l.precioUnitario === undefined || l.unidadMedida === undefined) {
    throw new CorrectionRefused(`${clave}: line ${l.numeroLinea} (a surtido, or without CABYS, quantity or price) cannot be copied into a nota de crédito`);
  }
  const descuento = sum(l.descuentos.map((d) => dec(d.montoDescuento)));
  const first = l.descuentos[0];
  return {
    numeroLinea: Number(l.numeroLinea),
    ...(l.partidaArancelaria ? { partidaArancelaria: l.partidaArancelaria } : {}),
    codigo: l.codigoCABYS,
    ...(l.codigoComercial.length > 0 ? { codigoComercial: l.codigoComercial.map((c) => ({ tipo: c.tipo, codigo: c.codigo })) } : {}),
    cantidad: l.cantidad,
    unidadMedida: l.unidadMedida,
    ...(l.tipoTransaccion ? { tipoTransaccion: l.tipoTransaccion } : {}),
    ...(l.unidadMedidaComercial ? { unidadMedidaComercial: l.unidadMedidaComercial } : {}),
    detalle: l.detalle,
    precioUnitario: l.precioUnitario,
    // The body's names are the spec's: its subTotal is the XML's MontoTotal (cantidad × precio), its montoTotal the
    // XML's SubTotal (after discounts); see fixtures/documents/09-nc-devolucion.json.
    subTotal: l.montoTotal,
    // The body carries one discount: several of the original's are written as their sum, under the first's code.
    ...(first && descuento.gt(0)
      ? { descuento: money(descuento), codigoDescuento: first.codigoDescuento, ...(first.naturalezaDescuento ? { naturalezaDescuento: first.naturalezaDescuento } : {}) }
      : {}),
    montoTotal: l.subTotal,
    ...(l.ivaCobradoFabrica ? { ivaCobradoFabrica: l.ivaCobradoFabrica } : {}),
    impuesto: l.impuestos.map(impuestoBody),
    impuestoNeto: l.impuestoNeto ?? money(sum(l.impuestos.map((i) => dec(i.monto)))),
    montoTotalLinea: l.montoTotalLinea,
  };
}

function impuestoBody(i: ParsedImpuesto): Body {
  const x = i.exoneracion;
  return {
    codigo: i.codigo,
    ...(i.codigoImpuestoOtro ? { codigoImpuestoOtro: i.codigoImpuestoOtro } : {}),
    ...(i.codigoTarifaIVA ? { codigoTarifa: i.codigoTarifaIVA } : {}),
    tarifa: tarifaText(i.tarifa ?? '0'),
    ...(i.factorCalculoIVA ? { factorCalculoIVA: i.factorCalculoIVA } : {}),
    monto: i.monto,
    ...(x
      ? {
          exoneracion: {
            tipoDocumento: x.tipoDocumento,
            ...(x.tipoDocumentoOtro ? { tipoDocumentoOtro: x.tipoDocumentoOtro } : {}),
            numeroDocumento: x.numeroDocumento,
            ...(x.articulo ? { articulo: x.articulo } : {}),
            ...(x.inciso ? { inciso: x.inciso } : {}),
            nombreInstitucion: x.nombreInstitucion,
            ...(x.nombreInstitucionOtros ? { nombreInstitucionOtros: x.nombreInstitucionOtros } : {}),
            fechaEmision: x.fechaEmision,
            porcentajeExoneracion: x.tarifaExonerada,
          },
        }
      : {}),
  };
}

/** The XML's Tarifa (decimal 4,2: "13.00") as the body writes it ("13", "0.5"). */
export function tarifaText(tarifa: string): string {
  return dec(tarifa).toFixed();
}

function cargoBody(o: ParsedComprobante['otrosCargos'][number]): Body {
  return {
    tipoDocumento: o.tipoDocumento,
    ...(o.tipoDocumentoOtros ? { tipoDocumentoOtros: o.tipoDocumentoOtros } : {}),
    ...(o.identificacionTercero ? { identificacionTercero: { tipo: o.identificacionTercero.tipo, numero: o.identificacionTercero.numero } } : {}),
    ...(o.nombreTercero ? { nombreTercero: o.nombreTercero } : {}),
    detalle: o.detalle,
    ...(o.porcentaje ? { porcentaje: o.porcentaje } : {}),
    montoCargo: o.montoCargo,
  };
}

function resumenBody(p: ParsedComprobante): Body {
  const r = p.resumen as unknown as Record<string, string | undefined>;
  const totals = Object.fromEntries(RESUMEN_TOTAL_FIELDS.filter((f) => r[f] !== undefined).map((f) => [f, r[f]]));
  const medios = p.mediosPago.filter((m) => m.tipoMedioPago !== undefined);
  return {
    codigoTipoMoneda: { codigoMoneda: p.resumen.codigoMoneda, tipoCambio: p.resumen.tipoCambio },
    ...(medios.length > 0
      ? {
          mediosPago: medios.map((m) => ({
            tipoMedioPago: m.tipoMedioPago,
            ...(m.medioPagoOtros ? { medioPagoOtros: m.medioPagoOtros } : {}),
            ...(m.totalMedioPago ? { totalMedioPago: m.totalMedioPago } : {}),
          })),
        }
      : {}),
    ...totals,
  };
}
