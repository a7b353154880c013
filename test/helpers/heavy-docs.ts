// Large documents for the event-loop tests and bench (issue 25, point 9): suppliers' comprobantes of ~0.9 MB signed by
// a test supplier (the emulator's, fecr's own signer), each a distinct document; and the body of a 1 000-line factura.
import { randomBytes } from 'node:crypto';
import { buildClave, buildConsecutivo } from '../../src/core/clave.js';
import { signCanonical } from '../../src/core/sign/xades.js';
import { MemoryStore } from '../../src/emulator/store.js';
import { SupplierBook, supplierComprobante, TEST_SUPPLIERS, type SupplierLine } from '../../src/emulator/suppliers.js';
import { validInvoice } from './bodies.js';

export interface LargeSupplierXml {
  clave: string;
  xml: string;
}

/** A line of ~890 bytes in the XML: its Detalle the 200 characters the XSD allows, many of them 2 bytes in UTF-8. */
const lineOf = (i: number): SupplierLine => ({
  detalle: `Artículo número ${i + 1}: ${'ñandú, ñañú; '.repeat(16)}`.slice(0, 200),
  cabys: '4781400000000',
  cantidad: String((i % 7) + 1),
  precioUnitario: `${1000 + (i % 13) * 37}.50`,
  codigoTarifaIVA: i % 3 === 0 ? '04' : '08',
  unidadMedida: 'Unid',
});

/**
 * `count` distinct signed FEs of the first test supplier to `buyer`, of `lines` lines (1 000, the XSD's most, ≈ 0.9 MB).
 * Built once and renumbered (clave, consecutivo) before each signature: building 1 000 lines takes most of a second.
 */
export function largeSupplierXmls(count: number, buyer: { tipo: string; numero: string; nombre?: string }, lines = 1000, first = 1): LargeSupplierXml[] {
  const book = new SupplierBook(new MemoryStore(), Date.now);
  const supplier = TEST_SUPPLIERS[0]!;
  const creds = book.credentials(supplier);
  const at = new Date();
  const base = supplierComprobante({ receptor: buyer, kind: 'FE', lineas: Array.from({ length: lines }, (_, i) => lineOf(i)) }, supplier, first, at);
  const out: LargeSupplierXml[] = [];
  for (let n = first; n < first + count; n++) {
    const consecutivo = buildConsecutivo({ sucursal: 1, terminal: 1, tipoComprobante: '01', numero: n });
    const clave = buildClave({ fechaEmision: at, identificacion: supplier.identificacion, consecutivo, situacion: '1', codigoSeguridad: String(randomBytes(4).readUInt32BE() % 100_000_000).padStart(8, '0') });
    const unsigned = base.unsignedXml
      .replace(`<Clave>${base.doc.clave}</Clave>`, `<Clave>${clave}</Clave>`)
      .replace(`<NumeroConsecutivo>${base.doc.numeroConsecutivo}</NumeroConsecutivo>`, `<NumeroConsecutivo>${consecutivo}</NumeroConsecutivo>`);
    out.push({ clave, xml: signCanonical(unsigned, creds, { signingTime: at, newId: () => randomBytes(8).toString('hex') }) });
  }
  return out;
}

/** A factura body of `lines` lines (1 hour of consultoría each, 13 %), for `numeroReferencia`. */
export function largeInvoiceBody(lines = 1000, numeroReferencia = 1): Record<string, any> {
  const body = validInvoice();
  body.numeroReferencia = numeroReferencia;
  body.fechaEmision = new Date(Date.now() - 6 * 3600_000).toISOString().slice(0, 19) + '-06:00';
  body.resumenFactura = { codigoTipoMoneda: { codigoMoneda: 'CRC' }, mediosPago: [{ tipoMedioPago: '04' }] };
  body.detalleServicio = Array.from({ length: lines }, (_, i) => ({
    numeroLinea: i + 1,
    codigo: '8311200000000',
    detalle: `Hora de consultoría número ${i + 1}`,
    cantidad: 1,
    unidadMedida: 'h',
    precioUnitario: '100.00',
    subTotal: '100.00',
    descuento: '0.00',
    montoTotal: '100.00',
    impuestoNeto: 13,
    montoTotalLinea: 113,
    impuesto: [{ codigo: '01', codigoTarifa: '08', tarifa: '13', monto: '13.00' }],
  }));
  return body;
}
