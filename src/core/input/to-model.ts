/**
 * The checked body → the domain model (src/core/model.ts): lines, taxes, parties, addresses, phone numbers and dates
 * as the XML builder and the totals want them.
 */
import { formatCr, parseIsoDateTime } from '../dates.js';
import type { Emisor, Impuesto, Linea, Receptor, Telefono, Ubicacion } from '../model.js';
import { dec } from '../money.js';
import type { DocumentBody, ImpuestoInput, IssuerRecord, LineaInput, ProveedorInput, RepLineaInput } from './schema.js';

export function lineOf(line: LineaInput): Linea {
  const descuento = dec(line.descuento ?? '0');
  return {
    numeroLinea: line.numeroLinea,
    codigoCABYS: line.codigo,
    codigoComercial: line.codigoComercial ?? [],
    cantidad: dec(line.cantidad),
    unidadMedida: line.unidadMedida,
    unidadMedidaComercial: line.unidadMedidaComercial,
    tipoTransaccion: line.tipoTransaccion,
    detalle: line.detalle,
    precioUnitario: dec(line.precioUnitario),
    descuentos: descuento.gt(0)
      ? [{ montoDescuento: descuento, codigoDescuento: line.codigoDescuento ?? '07', naturalezaDescuento: line.naturalezaDescuento }]
      : [],
    ivaCobradoFabrica: line.ivaCobradoFabrica,
    impuestos: line.impuesto.map(taxOf),
    partidaArancelaria: line.partidaArancelaria,
  };
}

/**
 * A payment line of a recibo de pago: MontoTotal is the amount invoiced (cantidad 1 × that amount), SubTotal the
 * payment (`montoPago`); no CABYS, quantity or unit reach its XML.
 */
export function repLineOf(line: RepLineaInput): Linea {
  return {
    numeroLinea: line.numeroLinea,
    codigoCABYS: '',
    codigoComercial: [],
    cantidad: dec(1),
    unidadMedida: 'Unid',
    detalle: line.detalle,
    precioUnitario: dec(line.subTotal),
    descuentos: [],
    impuestos: line.impuesto.map(taxOf),
    montoPago: dec(line.montoTotal),
  };
}

/** The seller of a factura de compra, as its Emisor. */
export function proveedorOf(p: ProveedorInput): Emisor {
  return {
    nombre: p.nombre,
    identificacion: p.identificacion,
    nombreComercial: p.nombreComercial,
    ubicacion: p.ubicacion && ubicacionOf(p.ubicacion),
    otrasSenasExtranjero: p.otrasSenasExtranjero,
    telefono: p.telefono === undefined ? undefined : (parseTelefono(p.telefono) ?? undefined),
    correoElectronico: p.correoElectronico ? [p.correoElectronico] : [],
  };
}

/** The issuer as the Receptor of its own factura de compra (the buyer). */
export function issuerAsReceptor(issuer: IssuerRecord): Receptor {
  const e = emisorOf(issuer);
  return {
    nombre: e.nombre,
    identificacion: e.identificacion,
    nombreComercial: e.nombreComercial,
    ubicacion: e.ubicacion,
    telefono: e.telefono,
    correoElectronico: e.correoElectronico[0],
  };
}

export function taxOf(tax: ImpuestoInput): Impuesto {
  const ex = tax.exoneracion;
  return {
    codigo: tax.codigo,
    codigoImpuestoOtro: tax.codigoImpuestoOtro,
    codigoTarifaIVA: tax.codigoTarifa,
    tarifa: dec(tax.tarifa),
    factorCalculoIVA: tax.factorCalculoIVA === undefined ? undefined : dec(tax.factorCalculoIVA),
    exoneracion: ex && {
      tipoDocumento: ex.tipoDocumento,
      tipoDocumentoOtro: ex.tipoDocumentoOtro,
      numeroDocumento: ex.numeroDocumento,
      articulo: ex.articulo === undefined ? undefined : String(ex.articulo),
      inciso: ex.inciso === undefined ? undefined : String(ex.inciso),
      nombreInstitucion: ex.nombreInstitucion,
      nombreInstitucionOtros: ex.nombreInstitucionOtros,
      fechaEmision: crDateTimeOr(ex.fechaEmision),
      tarifaExonerada: dec(ex.porcentajeExoneracion),
    },
  };
}

export function emisorOf(issuer: IssuerRecord): Emisor {
  return {
    nombre: issuer.nombre ?? issuer.nombreComercial,
    identificacion: { tipo: issuer.tipoIdentificacion, numero: issuer.identificacion },
    nombreComercial: issuer.nombreComercial,
    ubicacion: ubicacionOf(issuer.ubicacion),
    telefono: parseTelefono(issuer.telefono) ?? undefined,
    correoElectronico: [issuer.correoElectronico],
  };
}

export function receptorOf(r: Exclude<DocumentBody['receptor'], ''>): Receptor {
  return {
    nombre: r.nombre,
    identificacion: r.identificacion,
    nombreComercial: r.nombreComercial,
    ubicacion: r.ubicacion && ubicacionOf(r.ubicacion),
    otrasSenasExtranjero: r.otrasSenasExtranjero,
    telefono: r.telefono === undefined ? undefined : (parseTelefono(r.telefono) ?? undefined),
    correoElectronico: r.correoElectronico,
  };
}

export function ubicacionOf(u: { provincia: string; canton: string; distrito: string; barrio?: string; direccion: string }): Ubicacion {
  // v4.4 Barrio is free text of 5-50 characters; a 2-digit barrio code does not fit and is left out.
  const barrio = u.barrio && u.barrio.length >= 5 ? u.barrio : undefined;
  return { provincia: u.provincia, canton: u.canton, distrito: u.distrito, barrio, otrasSenas: u.direccion };
}

/** The Costa Rica xs:dateTime of a text, or the text itself when invalid (a finding already says so). */
export function crDateTimeOr(text: string): string {
  const d = parseIsoDateTime(text);
  return d ? formatCr(d) : text;
}

/** "+506 2222-3333", "22223333", "50622223333" → {506, 22223333}; null when not a phone number. */
export function parseTelefono(text: string): Telefono | null {
  const digits = text.replace(/[\s\-().]/g, '');
  const m = /^(?:\+(\d{1,3})\s*)?(\d+)$/.exec(digits);
  if (!m) return null;
  let country = m[1];
  let number = m[2]!;
  if (!country && number.length === 11 && number.startsWith('506')) {
    country = '506';
    number = number.slice(3);
  }
  if (number.length < 8 || number.length > 20 || number.startsWith('0')) return null;
  return { codigoPais: (country ?? '506').padStart(3, '0'), numTelefono: number };
}
