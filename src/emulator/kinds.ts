/**
 * The rules of the emulator that depend on the kind of comprobante (issue 15: ND, FEC, FEE, REP beside FE, NC, TE).
 *
 * Read from the document alone (`kindErrors`, in analyze.ts check 6):
 *  - who may be the other party (ANEXOS Nota 4): a foreign receptor (05) in a factura only with CondicionVenta 12;
 *    an FEC's Emisor (the seller) 06 only with CondicionVenta 13, and its Receptor (the buyer, who issues it) a
 *    Costa Rican taxpayer 01-04; an FEE's receptor abroad (05): this emulator's reading of Nota 4 (a sale in Costa
 *    Rica is a factura);
 *  - what a kind may reference (ANEXOS p.56): TipoDocIR 16 only in an FEC ("se rechazará"), a REP only 01-04 and 08.
 * That an NC, ND, FEC or REP references a document at all, and which CondicionVenta and CodigoReferencia each kind
 * takes, are in their XSDs (InformacionReferencia 1..10; the REP's CondicionVenta 09|11): the schema check says so.
 *
 * Read against what this emulator received before (`referenceErrors`, in the processor): a REP pays a comprobante
 * with the CondicionVenta its own answers to (09 pays 08, 11 pays 10; Nota 5, footnotes 19 and 21), and a
 * comprobante this Hacienda rejected cannot be paid, adjusted or annulled, only replaced (CodigoReferencia 16, TipoDocIR 10:
 * "Sustituye comprobante electrónico rechazado", Notas 9 and 10 of the April-2026 revision). A clave this emulator never received is
 * not judged: Hacienda knows documents this emulator cannot (other systems, other environments).
 */
import type { ParsedComprobante } from '../core/xml/parse-comprobante.js';
import { CODIGOS, err } from './codes.js';
import type { EmulatorEnvironment, EmulatorStore, ValidationErrorItem } from './store.js';
import { codeTable } from '../core/code-table.js';

const NACIONAL = new Set(['01', '02', '03', '04']);
const TIPOS_DOC_IR_REP = new Set(['01', '02', '03', '04', '08']);
/** The REP's CondicionVenta → the CondicionVenta of the sale it pays. */
const PAGA: Record<string, string> = codeTable({ '09': '08', '11': '10' });

/** The kind's rules that the document alone shows. */
export function kindErrors(doc: ParsedComprobante): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  const add = (mensaje: string) => out.push(err(CODIGOS.TIPO_IDENTIFICACION, mensaje));
  const receptorTipo = doc.receptor?.identificacion?.tipo;
  if (doc.kind === 'FE' && receptorTipo === '05' && doc.condicionVenta !== '12') {
    add('El tipo de identificación 05 (Extranjero No Domiciliado) del receptor de una Factura Electrónica solo se permite con la condición de venta 12.');
  }
  if (doc.kind === 'FEC') {
    if (doc.emisor.identificacion.tipo === '06' && doc.condicionVenta !== '13') {
      add('El tipo de identificación 06 (No Contribuyente) del emisor de una Factura Electrónica de Compra solo se permite con la condición de venta 13.');
    }
    if (receptorTipo !== undefined && !NACIONAL.has(receptorTipo)) {
      add(`El receptor de una Factura Electrónica de Compra es quien la emite y debe ser un contribuyente (tipo de identificación 01 a 04), no ${receptorTipo}.`);
    }
  }
  if (doc.kind === 'FEE' && receptorTipo !== undefined && receptorTipo !== '05') {
    add(`El receptor de una Factura Electrónica de Exportación debe ser Extranjero No Domiciliado (tipo de identificación 05), no ${receptorTipo}.`);
  }
  for (const r of doc.informacionReferencia) {
    if (r.tipoDocIR === '16' && doc.kind !== 'FEC') {
      out.push(err(CODIGOS.REFERENCIA, 'El tipo de documento de referencia 16 (Comprobante de Proveedor No Domiciliado) únicamente puede utilizarse en la Factura Electrónica de Compra.'));
    }
    if (doc.kind === 'REP' && !TIPOS_DOC_IR_REP.has(r.tipoDocIR)) {
      out.push(err(CODIGOS.REFERENCIA, `En el Recibo Electrónico de Pago únicamente pueden utilizarse los tipos de documento de referencia 01, 02, 03, 04 y 08, no ${r.tipoDocIR}.`));
    }
  }
  return out;
}

/** What a document's references say against the comprobantes this emulator received in the same environment. */
export function referenceErrors(
  store: EmulatorStore,
  env: EmulatorEnvironment,
  doc: { tipoComprobante?: string; condicionVenta?: string; referencias?: { tipoDoc: string; numero: string; codigo?: string }[] },
): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  const rep = doc.tipoComprobante === '10';
  for (const r of doc.referencias ?? []) {
    if (!/^[A-Za-z0-9]{50}$/.test(r.numero)) continue;
    const ref = store.getReception(env, r.numero);
    if (!ref || ref.consecutivoReceptor) continue; // not known here: not judged
    if (ref.estado === 'rechazado') {
      if (r.codigo === '16' && r.tipoDoc === '10') continue; // its replacement: what a rejected comprobante gets
      out.push(err(CODIGOS.REFERENCIA, `El comprobante de referencia ${r.numero} fue rechazado por el Ministerio de Hacienda.`));
      continue;
    }
    const paga = rep && doc.condicionVenta ? PAGA[doc.condicionVenta] : undefined;
    if (paga && ref.condicionVenta !== undefined && ref.condicionVenta !== paga) {
      out.push(
        err(
          CODIGOS.REFERENCIA,
          `El Recibo Electrónico de Pago con condición de venta ${doc.condicionVenta} debe referirse a un comprobante con condición de venta ${paga}; ` +
            `el comprobante ${r.numero} tiene condición de venta ${ref.condicionVenta}.`,
        ),
      );
    }
  }
  return out;
}
