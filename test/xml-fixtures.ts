/**
 * Hand-made comprobantes with hand-computed totals (independent of computeTotals), used by the
 * XML builder, parser and XSD tests.
 */
import type { Comprobante, Emisor, Linea, Receptor } from '../src/core/model.js';
import { dec, type Decimal } from '../src/core/money.js';
import type { ClaseIVA, LineaTotals, ResumenTotals, Totals } from '../src/core/totals.js';

const d = (v: string | number): Decimal => dec(v);
const Z = d(0);

export const EMISOR: Emisor = {
  nombre: 'Soluciones Ñandú & Hijos S.A.',
  identificacion: { tipo: '02', numero: '3101123456' },
  nombreComercial: 'Ñandú <Café> & Más',
  ubicacion: { provincia: '1', canton: '01', distrito: '08', barrio: 'Barrio Escalante', otrasSenas: '200 m norte de la iglesia Santa Teresita' },
  telefono: { codigoPais: '506', numTelefono: '22223333' },
  correoElectronico: ['facturacion@nandu.example.cr'],
};

export const RECEPTOR: Receptor = {
  nombre: 'María José Pérez Solís',
  identificacion: { tipo: '01', numero: '112345678' },
  // A v4.3-style barrio code: does not fit v4.4 (5-50 chars) and must be left out.
  ubicacion: { provincia: '2', canton: '01', distrito: '01', barrio: '01', otrasSenas: 'Frente al parque central' },
  correoElectronico: 'maria.perez@example.com',
};

export const RECEPTOR_EXTRANJERO: Receptor = {
  nombre: 'John O\'Brien',
  identificacion: { tipo: '05', numero: 'P12345678' },
  otrasSenasExtranjero: '1600 Pennsylvania Ave, Washington DC, USA',
  correoElectronico: 'john@example.com',
};

/** 506 + DDMMYY + cédula(12) + consecutivo(20) + situación(1) + código(8). */
export function clave(cedula: string, consecutivo: string): string {
  return `506${'150525'}${cedula.padStart(12, '0')}${consecutivo}1${'87654321'}`;
}

const FECHA = '2025-05-15T10:30:00-06:00';

function base(kind: Comprobante['kind'], tipo: string, numero: number): Pick<
  Comprobante,
  'kind' | 'clave' | 'numeroConsecutivo' | 'situacion' | 'proveedorSistemas' | 'codigoActividadEmisor' | 'fechaEmision' | 'emisor'
> {
  const consecutivo = `00100001${tipo}${String(numero).padStart(10, '0')}`;
  return {
    kind,
    clave: clave(EMISOR.identificacion.numero, consecutivo),
    numeroConsecutivo: consecutivo,
    situacion: '1',
    proveedorSistemas: '3101123456',
    codigoActividadEmisor: '6201.0',
    fechaEmision: FECHA,
    emisor: EMISOR,
  };
}

function iva13(): Linea['impuestos'][number] {
  return { codigo: '01', codigoTarifaIVA: '08', tarifa: d(13) };
}

function lineTotals(x: {
  montoTotal: string;
  descuentos?: string;
  montos: string[];
  exoneraciones?: (string | undefined)[];
  servicio: boolean;
  clase?: ClaseIVA;
  montoExonerado?: string;
}): LineaTotals {
  const montoTotal = d(x.montoTotal);
  const totalDescuentos = d(x.descuentos ?? 0);
  const subTotal = montoTotal.minus(totalDescuentos);
  const impuestos = x.montos.map((m, i) => {
    const exo = x.exoneraciones?.[i];
    return exo === undefined ? { monto: d(m), neto: d(m) } : { monto: d(m), montoExoneracion: d(exo), neto: d(m).minus(d(exo)) };
  });
  const impuestoNeto = impuestos.reduce((s, i) => s.plus(i.neto), Z);
  const clase = x.clase ?? 'gravado';
  const montoExonerado = d(x.montoExonerado ?? 0);
  return {
    montoTotal,
    totalDescuentos,
    subTotal,
    baseImponible: subTotal,
    impuestos,
    impuestoAsumidoEmisorFabrica: Z,
    impuestoNeto,
    montoTotalLinea: subTotal.plus(impuestoNeto),
    esServicio: x.servicio,
    clase,
    montoGravado: clase === 'gravado' ? montoTotal.minus(montoExonerado) : Z,
    montoExonerado,
  };
}

type ResumenInput = Partial<Record<Exclude<keyof ResumenTotals, 'totalDesgloseImpuesto'>, string>> & Pick<ResumenTotals, 'totalDesgloseImpuesto'>;

function resumen(r: ResumenInput): ResumenTotals {
  const g = (k: Exclude<keyof ResumenTotals, 'totalDesgloseImpuesto'>) => d(r[k] ?? 0);
  return {
    totalServGravados: g('totalServGravados'),
    totalServExentos: g('totalServExentos'),
    totalServExonerado: g('totalServExonerado'),
    totalServNoSujeto: g('totalServNoSujeto'),
    totalMercanciasGravadas: g('totalMercanciasGravadas'),
    totalMercanciasExentas: g('totalMercanciasExentas'),
    totalMercExonerada: g('totalMercExonerada'),
    totalMercNoSujeta: g('totalMercNoSujeta'),
    totalGravado: g('totalGravado'),
    totalExento: g('totalExento'),
    totalExonerado: g('totalExonerado'),
    totalNoSujeto: g('totalNoSujeto'),
    totalVenta: g('totalVenta'),
    totalDescuentos: g('totalDescuentos'),
    totalVentaNeta: g('totalVentaNeta'),
    totalDesgloseImpuesto: r.totalDesgloseImpuesto,
    totalImpuesto: g('totalImpuesto'),
    totalImpAsumEmisorFabrica: g('totalImpAsumEmisorFabrica'),
    totalIVADevuelto: g('totalIVADevuelto'),
    totalOtrosCargos: g('totalOtrosCargos'),
    totalComprobante: g('totalComprobante'),
  };
}

export interface Fixture {
  name: string;
  doc: Comprobante;
  totals: Totals;
}

/** FE: a taxed service, taxed goods with a discount, exempt goods, an OtrosCargos, two payment methods. */
export function feFixture(): Fixture {
  const doc: Comprobante = {
    ...base('FE', '01', 1),
    codigoActividadReceptor: '7020.0',
    receptor: RECEPTOR,
    condicionVenta: '01',
    lineas: [
      {
        numeroLinea: 1,
        codigoCABYS: '8314100000100',
        codigoComercial: [{ tipo: '04', codigo: 'SRV-001' }],
        cantidad: d(2),
        unidadMedida: 'Sp',
        tipoTransaccion: '01',
        detalle: 'Servicio de consultoría <A&B> "año" ₡ > 0',
        precioUnitario: d(50000),
        descuentos: [],
        impuestos: [iva13()],
      },
      {
        numeroLinea: 2,
        codigoCABYS: '2399999000000',
        codigoComercial: [],
        cantidad: d('3'),
        unidadMedida: 'Unid',
        unidadMedidaComercial: 'caja',
        detalle: 'Tornillos de acero inoxidable',
        precioUnitario: d('1000.5'),
        descuentos: [{ montoDescuento: d('300.15'), codigoDescuento: '07' }],
        impuestos: [iva13()],
      },
      {
        numeroLinea: 3,
        codigoCABYS: '0111100000000',
        codigoComercial: [],
        cantidad: d('1.25'),
        unidadMedida: 'Kg',
        detalle: 'Arroz exento',
        precioUnitario: d(400),
        descuentos: [],
        impuestos: [{ codigo: '01', codigoTarifaIVA: '10', tarifa: d(0) }],
      },
    ],
    otrosCargos: [{ tipoDocumento: '06', detalle: 'Impuesto de servicio 10%', porcentaje: d(10), montoCargo: d(10000) }],
    moneda: { codigoMoneda: 'CRC', tipoCambio: d(1) },
    mediosPago: [
      { tipoMedioPago: '01', totalMedioPago: d('26552.5255') },
      { tipoMedioPago: '02', totalMedioPago: d(100000) },
    ],
    informacionReferencia: [],
  };
  const totals: Totals = {
    lineas: [
      lineTotals({ montoTotal: '100000', montos: ['13000'], servicio: true }),
      lineTotals({ montoTotal: '3001.5', descuentos: '300.15', montos: ['351.1755'], servicio: false }),
      lineTotals({ montoTotal: '500', montos: ['0'], servicio: false, clase: 'exento' }),
    ],
    resumen: resumen({
      totalServGravados: '100000',
      totalMercanciasGravadas: '3001.5',
      totalMercanciasExentas: '500',
      totalGravado: '103001.5',
      totalExento: '500',
      totalVenta: '103501.5',
      totalDescuentos: '300.15',
      totalVentaNeta: '103201.35',
      totalDesgloseImpuesto: [
        { codigo: '01', codigoTarifaIVA: '08', totalMontoImpuesto: d('13351.1755') },
        { codigo: '01', codigoTarifaIVA: '10', totalMontoImpuesto: d(0) },
      ],
      totalImpuesto: '13351.1755',
      totalOtrosCargos: '10000',
      totalComprobante: '126552.5255',
    }),
  };
  return { name: 'FE', doc, totals };
}

/** FE with a partial exoneración (6.5 of 13 points) on a service. */
export function feExoneracionFixture(): Fixture {
  const doc: Comprobante = {
    ...base('FE', '01', 2),
    receptor: { ...RECEPTOR, ubicacion: undefined },
    condicionVenta: '02',
    plazoCredito: 30,
    lineas: [
      {
        numeroLinea: 1,
        codigoCABYS: '8314100000100',
        codigoComercial: [],
        cantidad: d(1),
        unidadMedida: 'Sp',
        detalle: 'Servicio exonerado parcialmente',
        precioUnitario: d(100000),
        descuentos: [],
        impuestos: [
          {
            ...iva13(),
            exoneracion: {
              tipoDocumento: '03',
              numeroDocumento: 'AL-00012345-25',
              articulo: '5',
              inciso: '2',
              nombreInstitucion: '01',
              fechaEmision: '2025-01-10T08:00:00-06:00',
              tarifaExonerada: d('6.5'),
            },
          },
        ],
      },
    ],
    otrosCargos: [],
    moneda: { codigoMoneda: 'USD', tipoCambio: d('505.12') },
    mediosPago: [],
    informacionReferencia: [],
  };
  const totals: Totals = {
    lineas: [lineTotals({ montoTotal: '100000', montos: ['13000'], exoneraciones: ['6500'], servicio: true, montoExonerado: '50000' })],
    resumen: resumen({
      totalServGravados: '50000',
      totalServExonerado: '50000',
      totalGravado: '50000',
      totalExonerado: '50000',
      totalVenta: '100000',
      totalVentaNeta: '100000',
      totalDesgloseImpuesto: [{ codigo: '01', codigoTarifaIVA: '08', totalMontoImpuesto: d(6500) }],
      totalImpuesto: '6500',
      totalComprobante: '106500',
    }),
  };
  return { name: 'FE exoneración', doc, totals };
}

function notaFixture(kind: 'NC' | 'ND'): Fixture {
  const fe = feFixture();
  const doc: Comprobante = {
    ...base(kind, kind === 'NC' ? '03' : '02', 1),
    codigoActividadReceptor: '7020.0',
    receptor: RECEPTOR,
    condicionVenta: '01',
    lineas: [{ ...fe.doc.lineas[1]!, numeroLinea: 1, cantidad: d(1), descuentos: [] }],
    otrosCargos: [],
    moneda: { codigoMoneda: 'CRC', tipoCambio: d(1) },
    mediosPago: [{ tipoMedioPago: '04' }],
    informacionReferencia: [
      {
        tipoDocIR: '01',
        numero: fe.doc.clave,
        fechaEmisionIR: fe.doc.fechaEmision,
        codigo: kind === 'NC' ? '06' : '04',
        razon: kind === 'NC' ? 'Devolución de una unidad & cambio' : 'Cargo adicional por flete',
      },
    ],
  };
  const totals: Totals = {
    lineas: [lineTotals({ montoTotal: '1000.5', montos: ['130.065'], servicio: false })],
    resumen: resumen({
      totalMercanciasGravadas: '1000.5',
      totalGravado: '1000.5',
      totalVenta: '1000.5',
      totalVentaNeta: '1000.5',
      totalDesgloseImpuesto: [{ codigo: '01', codigoTarifaIVA: '08', totalMontoImpuesto: d('130.065') }],
      totalImpuesto: '130.065',
      totalComprobante: '1130.565',
    }),
  };
  return { name: kind, doc, totals };
}

export const ncFixture = (): Fixture => notaFixture('NC');
export const ndFixture = (): Fixture => notaFixture('ND');

function teBase(numero: number, receptor?: Receptor): Fixture {
  const doc: Comprobante = {
    ...base('TE', '04', numero),
    // TE has no CodigoActividadReceptor: the builder must leave it out.
    codigoActividadReceptor: '7020.0',
    receptor,
    condicionVenta: '01',
    lineas: [
      {
        numeroLinea: 1,
        codigoCABYS: '2399999000000',
        codigoComercial: [{ tipo: '01', codigo: '7441234567890' }],
        cantidad: d('2.125'),
        unidadMedida: 'Kg',
        tipoTransaccion: '01', // not in TE: left out
        detalle: 'Clavos a granel',
        precioUnitario: d(2000),
        descuentos: [],
        impuestos: [{ codigo: '01', codigoTarifaIVA: '04', tarifa: d(4) }],
      },
    ],
    otrosCargos: [],
    moneda: { codigoMoneda: 'CRC', tipoCambio: d(1) },
    mediosPago: [{ tipoMedioPago: '06' }],
    informacionReferencia: [],
  };
  const totals: Totals = {
    lineas: [lineTotals({ montoTotal: '4250', montos: ['170'], servicio: false })],
    resumen: resumen({
      totalMercanciasGravadas: '4250',
      totalGravado: '4250',
      totalVenta: '4250',
      totalVentaNeta: '4250',
      totalDesgloseImpuesto: [{ codigo: '01', codigoTarifaIVA: '04', totalMontoImpuesto: d(170) }],
      totalImpuesto: '170',
      totalComprobante: '4420',
    }),
  };
  return { name: receptor ? 'TE receptor extranjero' : 'TE sin receptor', doc, totals };
}

export const teFixture = (): Fixture => teBase(1);
export const teExtranjeroFixture = (): Fixture => teBase(2, RECEPTOR_EXTRANJERO);

/** FEE: a foreign buyer (no Ubicacion), an exported good at tarifa 0 (code 01). */
export function feeFixture(): Fixture {
  const doc: Comprobante = {
    ...base('FEE', '09', 1),
    receptor: { ...RECEPTOR_EXTRANJERO, ubicacion: RECEPTOR.ubicacion },
    condicionVenta: '01',
    lineas: [
      {
        numeroLinea: 1,
        codigoCABYS: '0111100000000',
        codigoComercial: [],
        cantidad: d(10),
        unidadMedida: 'Kg',
        detalle: 'Café en grano de exportación',
        precioUnitario: d(15),
        descuentos: [],
        impuestos: [{ codigo: '01', codigoTarifaIVA: '01', tarifa: d(0) }],
      },
    ],
    otrosCargos: [],
    moneda: { codigoMoneda: 'USD', tipoCambio: d('505.12') },
    mediosPago: [{ tipoMedioPago: '04' }],
    informacionReferencia: [],
  };
  const totals: Totals = {
    lineas: [lineTotals({ montoTotal: '150', montos: ['0'], servicio: false })],
    resumen: resumen({
      // Exports are taxed at 0 % (FEE has no NoSujeto/Exonerado totals).
      totalMercanciasGravadas: '150',
      totalGravado: '150',
      totalVenta: '150',
      totalVentaNeta: '150',
      totalDesgloseImpuesto: [{ codigo: '01', codigoTarifaIVA: '01', totalMontoImpuesto: d(0) }],
      totalComprobante: '150',
    }),
  };
  return { name: 'FEE', doc, totals };
}

/** FEC: the buyer (our emisor field is the seller, a non-registered farmer) issues it. */
export function fecFixture(): Fixture {
  const te = teFixture();
  const doc: Comprobante = {
    ...base('FEC', '08', 1),
    emisor: { ...EMISOR, nombre: 'Juan Agricultor Mora', identificacion: { tipo: '01', numero: '301230456' }, nombreComercial: undefined },
    codigoActividadReceptor: '6201.0',
    receptor: { ...RECEPTOR, identificacion: { tipo: '02', numero: '3101123456' } },
    condicionVenta: '01',
    lineas: te.doc.lineas.map((l) => ({ ...l, ivaCobradoFabrica: '01' })), // no IVACobradoFabrica in FEC: left out
    otrosCargos: [],
    moneda: { codigoMoneda: 'CRC', tipoCambio: d(1) },
    mediosPago: [{ tipoMedioPago: '01' }],
    informacionReferencia: [
      { tipoDocIR: '14', fechaEmisionIR: FECHA, codigo: '04', razon: 'Compra a proveedor de régimen especial' },
    ],
  };
  return { name: 'FEC', doc, totals: te.totals };
}

/** REP: payment of a credit sale to the State (CondicionVenta 09). */
export function repFixture(): Fixture {
  const fe = feFixture();
  const doc: Comprobante = {
    ...base('REP', '10', 1),
    receptor: RECEPTOR,
    condicionVenta: '09',
    lineas: [
      {
        numeroLinea: 1,
        codigoCABYS: '8314100000100',
        codigoComercial: [],
        cantidad: d(1),
        unidadMedida: 'Sp',
        detalle: 'Pago parcial de la factura 0000000001',
        precioUnitario: d(50000),
        descuentos: [],
        impuestos: [iva13()],
      },
    ],
    otrosCargos: [],
    moneda: { codigoMoneda: 'CRC', tipoCambio: d(1) },
    mediosPago: [{ tipoMedioPago: '04', totalMedioPago: d(50000) }],
    informacionReferencia: [{ tipoDocIR: '01', numero: fe.doc.clave, fechaEmisionIR: FECHA, codigo: '04', razon: 'Pago' }],
  };
  const totals: Totals = {
    lineas: [lineTotals({ montoTotal: '50000', montos: ['6500'], servicio: true })],
    resumen: resumen({
      totalVenta: '50000',
      totalVentaNeta: '50000',
      totalDesgloseImpuesto: [{ codigo: '01', codigoTarifaIVA: '08', totalMontoImpuesto: d(6500) }],
      totalImpuesto: '6500',
      totalComprobante: '50000',
    }),
  };
  return { name: 'REP', doc, totals };
}

export const ALL_FIXTURES = (): Fixture[] => [
  feFixture(),
  feExoneracionFixture(),
  ncFixture(),
  ndFixture(),
  teFixture(),
  teExtranjeroFixture(),
  feeFixture(),
  fecFixture(),
  repFixture(),
];
