/**
 * The emulator plays suppliers (issue 16): test suppliers, each with a test certificate of its own, issue signed
 * v4.4 comprobantes (FE, ND, NC, FEC) addressed to a given receptor, so the buyer's side of fecr (import, check,
 * MensajeReceptor) can be shown offline. A supplier's document is also received by this emulator as if the supplier
 * had sent it (see routes-suppliers.ts): it is validated like any document and gets its MensajeHacienda, so the
 * buyer's GET /recepcion/{clave} finds it and a MensajeReceptor can reference it.
 *
 * The suppliers are taxpayers of the emulator's registry (fixtures/hacienda-registry.json), so their activity codes
 * pass the catalogue checks (-407/-408). Their .p12 files are made once per emulator data file (kept in its
 * metadata) with the core's test-certificate maker, issued by fecr's fixed test root (trusted by buyers in env local).
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { buildClave, buildConsecutivo } from '../core/clave.js';
import { formatCr } from '../core/dates.js';
import { dec } from '../core/money.js';
import type { Comprobante, DocumentKind, Linea, Receptor } from '../core/model.js';
import { loadP12, type SigningCredentials } from '../core/sign/p12.js';
import { TEST_ROOT_CERTIFICATE_PEM } from '../core/sign/test-ca.js';
import { createTestP12 } from '../core/sign/testcert.js';
import { signCanonical } from '../core/sign/xades.js';
import { computeTotals, type Totals } from '../core/totals.js';
import { buildComprobanteXml } from '../core/xml/build.js';
import type { EmulatorStore } from './store.js';
import { codeTable } from '../core/code-table.js';

export interface TestSupplier {
  identificacion: string;
  tipoIdentificacion: '01' | '02';
  nombre: string;
  /** Six-digit activity, as comprobantes write it. */
  codigoActividad: string;
  correo: string;
  /** The lines this supplier sells by default (various IVA rates, so a monthly summary has several tarifas). */
  lineas: SupplierLine[];
}

export interface SupplierLine {
  detalle: string;
  cabys: string;
  cantidad: string;
  precioUnitario: string;
  /** CodigoTarifaIVA (Nota 8.1): 08 13 %, 04 4 %, 02 1 %, 10 exenta … */
  codigoTarifaIVA: string;
  unidadMedida?: string;
}

const RATE: Record<string, string> = codeTable({ '01': '0', '02': '1', '03': '2', '04': '4', '08': '13', '09': '0.5', '10': '0', '11': '0' });

export const SUPPLIER_KINDS = ['FE', 'ND', 'NC', 'FEC'] as const;
export type SupplierKind = (typeof SUPPLIER_KINDS)[number];

export const TEST_SUPPLIERS: readonly TestSupplier[] = [
  {
    identificacion: '3101987654',
    tipoIdentificacion: '02',
    nombre: 'DISTRIBUIDORA EL CAFETAL LIMITADA',
    codigoActividad: '4630.9',
    correo: 'facturacion@elcafetal.cr',
    lineas: [
      { detalle: 'Paquete de software de desarrollo', cabys: '4781400000000', cantidad: '4', precioUnitario: '12500.00', codigoTarifaIVA: '08', unidadMedida: 'Unid' },
      { detalle: 'Transporte aéreo local de personal', cabys: '6413400000100', cantidad: '1', precioUnitario: '30000.00', codigoTarifaIVA: '04', unidadMedida: 'Sp' },
    ],
  },
  {
    identificacion: '4000001021',
    tipoIdentificacion: '02',
    nombre: 'BANCO NACIONAL DE COSTA RICA',
    codigoActividad: '6492.0',
    correo: 'facturas@bncr.fi.cr',
    lineas: [{ detalle: 'Consultoría en gestión estratégica', cabys: '8311200000000', cantidad: '2', precioUnitario: '45000.00', codigoTarifaIVA: '08', unidadMedida: 'Sp' }],
  },
  {
    identificacion: '114560789',
    tipoIdentificacion: '01',
    nombre: 'MARIA FERNANDA ROJAS SOLANO',
    codigoActividad: '7020.0',
    correo: 'mfrojas@correo.cr',
    lineas: [
      { detalle: 'Asesoría en planificación', cabys: '8311200000000', cantidad: '1', precioUnitario: '60000.00', codigoTarifaIVA: '08', unidadMedida: 'Sp' },
      { detalle: 'Semilla de trigo para siembra', cabys: '0111100000100', cantidad: '10', precioUnitario: '1500.00', codigoTarifaIVA: '02', unidadMedida: 'Kg' },
    ],
  },
];

let testRoot: X509Certificate | undefined;

/** Whether a certificate was issued by fecr's fixed test root. */
function issuedByTestRoot(der: Buffer): boolean {
  testRoot ??= new X509Certificate(TEST_ROOT_CERTIFICATE_PEM);
  const cert = new X509Certificate(der);
  return cert.checkIssued(testRoot) && cert.verify(testRoot.publicKey);
}

/** The PIN of every test supplier's .p12 (a test value, like the certificates themselves). */
const SUPPLIER_PIN = '1234';

export interface SupplierRequest {
  /** The buyer: identificación, and optionally its name (else the registry's, else a placeholder). */
  receptor: { tipo: string; numero: string; nombre?: string };
  kind: SupplierKind;
  /** A supplier's identificación (default: the first test supplier that is not the receptor, in turn). */
  supplier?: string;
  lineas?: SupplierLine[];
  /** NC/ND: the clave of the document they modify. */
  referencia?: { clave: string; fechaEmision: string };
  /** 8 digits (default random). */
  securityCode?: string;
  /** Default colones. */
  moneda?: { codigoMoneda: string; tipoCambio: string };
}

export interface SupplierDocument {
  supplier: TestSupplier;
  doc: Comprobante;
  totals: Totals;
  /** The unsigned XML (canonical), for signers other than fecr's own (tests sign it with xmlsec1). */
  unsignedXml: string;
}

function supplierReceptor(r: SupplierRequest['receptor']): Receptor {
  return {
    nombre: r.nombre?.trim() || `CONTRIBUYENTE ${r.numero}`,
    identificacion: { tipo: r.tipo, numero: r.numero },
    correoElectronico: `facturas.${r.numero}@example.cr`,
  };
}

function toLinea(l: SupplierLine, i: number): Linea {
  return {
    numeroLinea: i + 1,
    codigoCABYS: l.cabys,
    codigoComercial: [],
    cantidad: dec(l.cantidad),
    unidadMedida: l.unidadMedida ?? 'Unid',
    detalle: l.detalle,
    precioUnitario: dec(l.precioUnitario),
    descuentos: [],
    impuestos: [{ codigo: '01', codigoTarifaIVA: l.codigoTarifaIVA, tarifa: dec(RATE[l.codigoTarifaIVA] ?? '13') }],
  };
}

/**
 * Builds a supplier's comprobante (unsigned). Pure but for the numbering, which the caller passes in `numero`.
 * FEC: the buyer issues it, so the test supplier is its Receptor (and signer) and the given receptor its Emisor.
 */
export function supplierComprobante(req: SupplierRequest, supplier: TestSupplier, numero: number, at: Date): SupplierDocument {
  const tipo = { FE: '01', ND: '02', NC: '03', FEC: '08' }[req.kind];
  const numeroConsecutivo = buildConsecutivo({ sucursal: 1, terminal: 1, tipoComprobante: tipo, numero });
  const fechaEmision = formatCr(at);
  const clave = buildClave({
    fechaEmision: at,
    identificacion: supplier.identificacion,
    consecutivo: numeroConsecutivo,
    situacion: '1',
    codigoSeguridad: req.securityCode ?? String(randomBytes(4).readUInt32BE() % 100_000_000).padStart(8, '0'),
  });
  const supplierParty = {
    nombre: supplier.nombre,
    identificacion: { tipo: supplier.tipoIdentificacion, numero: supplier.identificacion },
    ubicacion: { provincia: '1', canton: '01', distrito: '01', otrasSenas: 'Frente al parque central' },
    correoElectronico: [supplier.correo],
  };
  const buyer = supplierReceptor(req.receptor);
  const lineas = (req.lineas?.length ? req.lineas : supplier.lineas).map(toLinea);
  const doc: Comprobante = {
    kind: req.kind as DocumentKind,
    clave,
    numeroConsecutivo,
    situacion: '1',
    proveedorSistemas: supplier.identificacion,
    codigoActividadEmisor: supplier.codigoActividad,
    // A FEC's Receptor is the buyer who issues it: its activity goes with it.
    ...(req.kind === 'FEC' ? { codigoActividadReceptor: supplier.codigoActividad } : {}),
    fechaEmision,
    ...(req.kind === 'FEC'
      ? {
          emisor: { ...buyer, ubicacion: { provincia: '1', canton: '01', distrito: '01', otrasSenas: 'Sin otras señas conocidas' }, correoElectronico: [buyer.correoElectronico!] },
          receptor: { ...supplierParty, correoElectronico: supplier.correo },
        }
      : { emisor: supplierParty, receptor: buyer }),
    condicionVenta: '01',
    lineas,
    otrosCargos: [],
    moneda: req.moneda ? { codigoMoneda: req.moneda.codigoMoneda, tipoCambio: dec(req.moneda.tipoCambio) } : { codigoMoneda: 'CRC', tipoCambio: dec(1) },
    mediosPago: [{ tipoMedioPago: '04' }],
    informacionReferencia:
      req.kind === 'NC' || req.kind === 'ND'
        ? [
            {
              tipoDocIR: '01',
              numero: req.referencia?.clave ?? clave,
              fechaEmisionIR: req.referencia?.fechaEmision ?? fechaEmision,
              codigo: '02', // Corrige monto
              razon: req.kind === 'NC' ? 'Corrige monto: descuento acordado' : 'Corrige monto: cargo adicional',
            },
          ]
        : req.kind === 'FEC'
          ? [{ tipoDocIR: '14', numero: `RE-${numeroConsecutivo}`, fechaEmisionIR: fechaEmision, codigo: '04', razon: 'Compra a contribuyente de régimen especial' }]
          : [],
  };
  const totals = computeTotals(doc);
  return { supplier, doc, totals, unsignedXml: buildComprobanteXml(doc, totals) };
}

/** The test suppliers' keys and numbering, kept in the emulator store's metadata. */
export class SupplierBook {
  private readonly creds = new Map<string, SigningCredentials>();
  private turn = 0;

  constructor(
    private readonly store: EmulatorStore,
    private readonly now: () => number,
  ) {}

  find(identificacion: string): TestSupplier | undefined {
    return TEST_SUPPLIERS.find((s) => s.identificacion === identificacion.replace(/^0+/, ''));
  }

  /** The given supplier, or the next test supplier (in turn) that is not the receptor. */
  pick(receptorNumero: string, wanted?: string): TestSupplier | undefined {
    if (wanted !== undefined) return this.find(wanted);
    const others = TEST_SUPPLIERS.filter((s) => s.identificacion !== receptorNumero.replace(/^0+/, ''));
    return others[this.turn++ % others.length];
  }

  /**
   * The supplier's credentials; its .p12 is made on first use and kept (PKCS#12 base64) in the store. One kept by an
   * older fecr, whose test CA was made anew in each process, is made again: a buyer trusts test suppliers (env local)
   * only through fecr's fixed test root (core/sign/test-ca.ts).
   */
  credentials(s: TestSupplier): SigningCredentials {
    const cached = this.creds.get(s.identificacion);
    if (cached) return cached;
    const key = `emulator.supplier.${s.identificacion}.p12`;
    const at = new Date(this.now());
    const kept = this.store.getMeta(key);
    let creds: SigningCredentials | undefined;
    try {
      creds = kept ? loadP12(Buffer.from(kept, 'base64'), SUPPLIER_PIN, at) : undefined;
    } catch {
      creds = undefined; // expired, or unreadable: made again
    }
    if (!creds || !issuedByTestRoot(creds.certificateDer)) {
      const p12 = createTestP12({ id: s.identificacion, type: s.tipoIdentificacion, pin: SUPPLIER_PIN, name: s.nombre, now: at });
      this.store.setMeta(key, p12.toString('base64'));
      creds = loadP12(p12, SUPPLIER_PIN, at);
    }
    this.creds.set(s.identificacion, creds);
    return creds;
  }

  /** The supplier's .p12 and PIN (tests re-sign its documents with other signers). */
  p12(s: TestSupplier): { p12: Buffer; pin: string } {
    this.credentials(s);
    return { p12: Buffer.from(this.store.getMeta(`emulator.supplier.${s.identificacion}.p12`)!, 'base64'), pin: SUPPLIER_PIN };
  }

  /** The next consecutivo number of a supplier and kind. */
  nextNumero(s: TestSupplier, kind: SupplierKind): number {
    const key = `emulator.supplier.${s.identificacion}.${kind}.next`;
    const n = Number(this.store.getMeta(key) ?? '1');
    this.store.setMeta(key, String(n + 1));
    return n;
  }

  /** Builds and signs a supplier's document with the supplier's own certificate. */
  issue(req: SupplierRequest, supplier: TestSupplier): SupplierDocument & { xml: string } {
    const at = new Date(this.now());
    const built = supplierComprobante(req, supplier, this.nextNumero(supplier, req.kind), at);
    const xml = signCanonical(built.unsignedXml, this.credentials(supplier), { signingTime: at, newId: () => randomBytes(8).toString('hex') });
    return { ...built, xml };
  }
}
