/**
 * The rules that depend on the kind of comprobante (ANEXOS v4.4 "Condición del campo" columns, Notas 4, 5, 10, 17):
 * who the receptor may be (or, in a factura de compra, the proveedor), which condiciones de venta and references a
 * kind takes, and the line fields only some kinds carry. Findings name the field path of the body.
 */
import { isClave } from '../clave.js';
import {
  CODIGOS_REFERENCIA,
  CODIGOS_REFERENCIA_SOLO_REP,
  CONDICIONES_VENTA,
  TIPOS_DOC_REFERENCIA,
  TIPOS_IDENTIFICACION,
} from '../codes.js';
import { parseIsoDateTime } from '../dates.js';
import type { DocumentKind } from '../model.js';
import { dec } from '../money.js';
import { esServicioCabys } from '../totals.js';
import type { Add } from './figures.js';
import type { DocumentBody, RepDocumentBody, RepLineaInput } from './schema.js';
import { parseTelefono } from './to-model.js';

type Body = DocumentBody | RepDocumentBody;

/** Kinds whose receptor is a Costa Rican taxpayer (identificación 01-04), as in a factura. */
const RECEPTOR_NACIONAL = new Set<DocumentKind>(['FE', 'NC', 'ND', 'REP']);
/** Kinds that must reference another document (InformacionReferencia 1..10 in their XSDs). */
const REFERENCIA_OBLIGATORIA: Partial<Record<DocumentKind, string>> = {
  NC: 'a nota de crédito',
  ND: 'a nota de débito',
  FEC: 'a factura electrónica de compra',
  REP: 'a recibo electrónico de pago',
};
/** Nota 5: 09 and 11 are the payments of 08 and 10, only in a recibo de pago; 12 only in a factura. */
const CONDICIONES_REP = new Set(['09', '11']);
/** What a recibo de pago may reference (ANEXOS p.56): FE, ND, NC, TE and FEC... as TipoDocIR 01-04, 08. */
const TIPOS_DOC_IR_REP = new Set(['01', '02', '03', '04', '08']);
/** TipoDocIR whose Numero is the clave of the referenced document. */
const TIPOS_DOC_IR_CLAVE = new Set(['01', '02', '03', '04', '09', '11', '12', '15', '19', '20']);

/** The spec's tipoDoc values, for the finding on an unknown one. */
export const TIPO_DOC_RULE =
  'must be "1" (factura), "2" (nota de débito), "3" (nota de crédito), "4" (tiquete), "8" (factura de compra), ' +
  '"9" (factura de exportación) or "10" (recibo de pago)';

function checkIdentificacion(path: string, id: { tipo: string; numero: string }, add: Add): void {
  const t = TIPOS_IDENTIFICACION[id.tipo];
  if (!t) add(`${path}.tipo`, 'must be 01, 02, 03, 04, 05 or 06');
  else if (!t.pattern.test(id.numero)) add(`${path}.numero`, `must be ${t.rule} for identificacion tipo ${id.tipo}`);
}

/** Receptor (and, for an FEC, proveedor) by kind. */
export function checkParties(b: Body, kind: DocumentKind | undefined, condicionVenta: string, add: Add): void {
  const tipoDoc = b.tipoDoc;
  if (kind === 'FEC') {
    if (b.receptor !== '')
      add('receptor', 'must be "" for a factura electrónica de compra (tipoDoc "8"): its Receptor is the issuer itself, the buyer; the seller goes in proveedor');
    const p = b.proveedor;
    if (!p) add('proveedor', 'is required for a factura electrónica de compra (tipoDoc "8"): the seller {nombre, identificacion, …}, written as its Emisor');
    else {
      checkIdentificacion('proveedor.identificacion', p.identificacion, add);
      if (p.identificacion.tipo === '06' && condicionVenta !== '13')
        add('proveedor.identificacion.tipo', '06 (no contribuyente) is only for condicionVenta "13" (bienes usados de un no contribuyente, Nota 4)');
      if (p.identificacion.tipo === '05' && !p.otrasSenasExtranjero)
        add('proveedor.otrasSenasExtranjero', 'is required for a seller abroad (identificacion tipo 05)');
      if (p.identificacion.tipo !== '05' && p.otrasSenasExtranjero !== undefined)
        add('proveedor.otrasSenasExtranjero', 'is only for a seller abroad (identificacion tipo 05); use ubicacion');
      if (p.telefono !== undefined && !parseTelefono(p.telefono)) add('proveedor.telefono', 'must be a phone number of 8 to 20 digits');
    }
    return;
  }
  // An unknown tipoDoc (its own finding) says nothing of whether a proveedor belongs: not judged then.
  if (kind && b.proveedor !== undefined) add('proveedor', `is only for a factura electrónica de compra (tipoDoc "8"), not tipoDoc ${tipoDoc}`);
  if (kind && RECEPTOR_NACIONAL.has(kind)) {
    if (b.receptor === '') add('receptor', `must be a receiver object for tipoDoc ${tipoDoc} (only a ticket, tipoDoc "4", may have receptor "")`);
    else if (!['01', '02', '03', '04'].includes(b.receptor.identificacion.tipo) && !(kind === 'FE' && condicionVenta === '12' && b.receptor.identificacion.tipo === '05'))
      add('receptor.identificacion.tipo', `must be 01, 02, 03 or 04 for tipoDoc ${tipoDoc}; a foreign receiver (05) goes on a ticket, tipoDoc "4", or a factura de exportación, tipoDoc "9"`);
  }
  if (kind === 'FEE') {
    if (b.receptor === '') add('receptor', 'must be the foreign buyer for a factura de exportación (tipoDoc "9")');
    else {
      if (b.receptor.identificacion.tipo !== '05')
        add('receptor.identificacion.tipo', 'must be 05 (extranjero) for a factura de exportación (tipoDoc "9"): the buyer is abroad; a sale in Costa Rica is a factura, tipoDoc "1"');
      if (b.receptor.ubicacion !== undefined) add('receptor.ubicacion', 'is not part of a factura de exportación: a buyer abroad has otrasSenasExtranjero');
    }
  }
  if (b.receptor !== '') {
    checkIdentificacion('receptor.identificacion', b.receptor.identificacion, add);
    if (b.receptor.telefono !== undefined && !parseTelefono(b.receptor.telefono)) add('receptor.telefono', 'must be a phone number of 8 to 20 digits');
  }
}

/** Condición de venta, activity codes, other charges and the line fields only some kinds have. */
export function checkKindFields(b: Body, kind: DocumentKind | undefined, add: Add): void {
  const cv = b.condicionVenta;
  if (kind === 'REP') {
    if (cv === undefined) add('condicionVenta', 'is required for a recibo de pago: "09" (pago de servicios prestados al Estado) or "11" (pago de venta a crédito en IVA hasta 90 días)');
    else if (!CONDICIONES_REP.has(cv)) add('condicionVenta', 'must be "09" or "11" for a recibo de pago: the payment of a sale with condicionVenta 08 or 10');
    if ((b.otrosCargos ?? []).length > 0) add('otrosCargos', 'is not part of a recibo de pago');
    (b as RepDocumentBody).detalleServicio.forEach((l, i) => checkRepLine(l, i, add));
  } else if (cv !== undefined) {
    // "Only for kind X" is not judged when the kind is unknown (tipoDoc's own finding says why).
    if (CONDICIONES_REP.has(cv)) {
      if (kind) add('condicionVenta', `"${cv}" is only for a recibo de pago (tipoDoc "10")`);
    }
    else if (!CONDICIONES_VENTA[cv]) add('condicionVenta', 'is not a known condición de venta (Nota 5)');
    else if (kind && cv === '12' && kind !== 'FE' && kind !== 'NC' && kind !== 'ND') add('condicionVenta', '"12" (mercancía no nacionalizada) is only for a factura, tipoDoc "1"');
  }
  if (b.codigoActividadReceptor !== undefined && (kind === 'TE' || kind === 'FEE' || kind === 'REP'))
    add('codigoActividadReceptor', `is not part of tipoDoc ${b.tipoDoc}`);
  if (kind === 'REP') return;
  (b as DocumentBody).detalleServicio.forEach((line, i) => {
    const p = `detalleServicio[${i}]`;
    if (kind && line.partidaArancelaria !== undefined && kind !== 'FEE' && kind !== 'NC' && kind !== 'ND')
      add(`${p}.partidaArancelaria`, 'is only for a factura de exportación (and the notas that adjust one)');
    if (kind === 'FEE' && line.partidaArancelaria === undefined && !esServicioCabys(line.codigo))
      add(`${p}.partidaArancelaria`, 'is required for an exported good (CABYS 0-4): the 12-digit partida arancelaria (Nota 17)');
    if (line.ivaCobradoFabrica !== undefined && (kind === 'FEE' || kind === 'FEC'))
      add(`${p}.ivaCobradoFabrica`, `is not part of tipoDoc ${b.tipoDoc}`);
    if (kind === 'FEE')
      line.impuesto.forEach((t, j) => {
        if (t.exoneracion) add(`${p}.impuesto[${j}].exoneracion`, 'is not part of a factura de exportación');
      });
  });
}

/** A payment line: what is paid cannot exceed what was invoiced. */
function checkRepLine(line: RepLineaInput, i: number, add: Add): void {
  const p = `detalleServicio[${i}]`;
  if (line.numeroLinea !== i + 1) add(`${p}.numeroLinea`, `must be ${i + 1}: lines are numbered consecutively from 1`);
  if (dec(line.subTotal).lte(0)) add(`${p}.subTotal`, 'must be greater than 0: the amount originally invoiced, without taxes');
  if (dec(line.montoTotal).lte(0)) add(`${p}.montoTotal`, 'must be greater than 0: the amount of this payment, without taxes');
  else if (dec(line.montoTotal).gt(dec(line.subTotal))) add(`${p}.montoTotal`, 'must not exceed subTotal: a payment is at most the amount invoiced');
}

/** InformacionReferencia: required by some kinds, and what each kind may reference. */
export function checkReferences(b: Body, kind: DocumentKind | undefined, add: Add): void {
  const refs = b.informacionReferencia ?? [];
  const required = kind && REFERENCIA_OBLIGATORIA[kind];
  if (required && refs.length === 0)
    add('informacionReferencia', `is required for ${required}: the referenced document (tipoDocIR, numero, fechaEmision, codigo, razon)`);
  const nota = kind === 'NC' || kind === 'ND';
  refs.forEach((r, i) => {
    const p = `informacionReferencia[${i}]`;
    if (!TIPOS_DOC_REFERENCIA[r.tipoDocIR]) add(`${p}.tipoDocIR`, 'is not a known tipo de documento de referencia (Nota 10)');
    else if (kind === 'REP' && !TIPOS_DOC_IR_REP.has(r.tipoDocIR))
      add(`${p}.tipoDocIR`, 'must be 01, 02, 03, 04 or 08 in a recibo de pago: the comprobante it pays');
    else if (kind && r.tipoDocIR === '16' && kind !== 'FEC') add(`${p}.tipoDocIR`, '16 (proveedor no domiciliado) is only for a factura electrónica de compra');
    if (r.tipoDocIR === '99' && !r.tipoDocRefOtro) add(`${p}.tipoDocRefOtro`, 'is required when tipoDocIR is "99"');
    if (TIPOS_DOC_IR_CLAVE.has(r.tipoDocIR) && !isClave(r.numero ?? ''))
      add(`${p}.numero`, `must be the 50-character clave of the referenced document for tipoDocIR ${r.tipoDocIR}`);
    if ((r.tipoDocIR !== '13' || kind === 'REP') && !r.numero) add(`${p}.numero`, 'is required');
    if (!parseIsoDateTime(r.fechaEmision)) add(`${p}.fechaEmision`, 'must be a valid ISO 8601 date-time');
    if (nota && r.codigo === undefined) add(`${p}.codigo`, `is required for ${REFERENCIA_OBLIGATORIA[kind!]} (Nota 9, e.g. "01" anula)`);
    if (r.codigo !== undefined && !CODIGOS_REFERENCIA[r.codigo]) add(`${p}.codigo`, 'is not a known código de referencia (Nota 9)');
    else if (kind && r.codigo !== undefined && CODIGOS_REFERENCIA_SOLO_REP.has(r.codigo) && kind !== 'REP')
      add(`${p}.codigo`, `"${r.codigo}" (${CODIGOS_REFERENCIA[r.codigo]}) is only for a recibo electrónico de pago`);
    if (r.codigo === '99' && !r.codigoReferenciaOtro) add(`${p}.codigoReferenciaOtro`, 'is required when codigo is "99"');
    if (nota && !r.razon) add(`${p}.razon`, `is required for ${REFERENCIA_OBLIGATORIA[kind!]}`);
  });
}
