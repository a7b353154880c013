import { describe, expect, it } from 'vitest';
import { dec, money, sum } from '../src/core/money.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { buildMensajeHaciendaXml, buildMensajeReceptorXml, type MensajeHaciendaInput } from '../src/core/xml/mensaje.js';
import { parseComprobanteXml } from '../src/core/xml/parse-comprobante.js';
import { parseMensajeHaciendaXml, parseMensajeReceptorXml, parseMensajeXml } from '../src/core/xml/parse-mensaje.js';
import { XmlParseError } from '../src/core/xml/raw-document.js';
import { createXsdValidator, withPlaceholderSignature } from '../src/adapters/xsd/index.js';
import { ALL_FIXTURES, feExoneracionFixture, feFixture, ncFixture, teExtranjeroFixture, teFixture } from './xml-fixtures.js';

const xsd = createXsdValidator();
const CLAVE = feFixture().doc.clave;

const MH_INPUT: MensajeHaciendaInput = {
  clave: CLAVE,
  nombreEmisor: 'Soluciones Ñandú & Hijos S.A.',
  tipoIdentificacionEmisor: '02',
  numeroCedulaEmisor: '003101123456',
  nombreReceptor: 'María José Pérez Solís',
  tipoIdentificacionReceptor: '01',
  numeroCedulaReceptor: '112345678',
  mensaje: 3,
  detalleMensaje:
    'Este comprobante fue procesado en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios\n' +
    '-37, "La provincia, cantón y distrito del \'emisor\' no concuerdan <registro> & más", 0, 0',
  montoTotalImpuesto: dec('13351.1755'),
  totalFactura: '126552.5255',
};

describe('MensajeHacienda', () => {
  it('builds a document valid against MensajeHacienda_V4.4.xsd (the 2026 set) and parses it back identically', async () => {
    const xml = buildMensajeHaciendaXml(MH_INPUT);
    expect(xml.startsWith('<MensajeHacienda xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/mensajeHacienda"><Clave>')).toBe(true);
    expect(xml).toContain('<Mensaje>3</Mensaje><EstadoMensaje>Rechazado</EstadoMensaje>');
    const withSig = withPlaceholderSignature(xml);
    expect(await xsd.validate([withSig, withSig], 'MH')).toEqual([{ valid: true, errors: [] }, { valid: true, errors: [] }]);
    expect((await xsd.validate(withSig, 'MH'))[0]!.valid).toBe(true);
    expect(parseMensajeHaciendaXml(withSig)).toEqual({
      version: '4.4',
      clave: CLAVE,
      nombreEmisor: MH_INPUT.nombreEmisor,
      tipoIdentificacionEmisor: '02',
      numeroCedulaEmisor: '003101123456',
      nombreReceptor: MH_INPUT.nombreReceptor,
      tipoIdentificacionReceptor: '01',
      numeroCedulaReceptor: '112345678',
      mensaje: 3,
      estadoMensaje: 'Rechazado',
      detalleMensaje: MH_INPUT.detalleMensaje,
      montoTotalImpuesto: '13351.17550',
      totalFactura: '126552.52550',
      signatureCount: 1,
    });
  });

  it('signed with the XAdES signer: valid against the XSD and parsed back', async () => {
    const creds = loadP12(createTestP12({ id: '4000042138', type: '02', pin: 'x' }), 'x', new Date());
    const xml = buildMensajeHaciendaXml({ ...MH_INPUT, mensaje: 1, detalleMensaje: 'Aceptado' });
    const signed = signCanonical(xml, creds, { signingTime: new Date('2025-05-15T16:31:00Z'), newId: () => 'mh1' });
    expect(await xsd.validate(signed, 'MH')).toEqual([{ valid: true, errors: [] }]);
    const parsed = parseMensajeHaciendaXml(signed);
    expect(parsed).toMatchObject({ clave: CLAVE, mensaje: 1, estadoMensaje: 'Aceptado', signatureCount: 1 });
  });

  it('omits optional parts and reports an invalid one through the XSD', async () => {
    const xml = buildMensajeHaciendaXml({ ...MH_INPUT, nombreReceptor: undefined, tipoIdentificacionReceptor: undefined, numeroCedulaReceptor: undefined, montoTotalImpuesto: undefined, mensaje: 1, detalleMensaje: 'ok' });
    expect(xml).not.toMatch(/Receptor|MontoTotalImpuesto/);
    expect((await xsd.validate(withPlaceholderSignature(xml), 'MH'))[0]!.valid).toBe(true);
    const bad = buildMensajeHaciendaXml({ ...MH_INPUT, estadoMensaje: 'Aceptado parcialmente' });
    const [r] = await xsd.validate(withPlaceholderSignature(bad), 'MH');
    expect(r!.errors[0]!.message).toMatch(/^Element 'EstadoMensaje': \[facet 'maxLength'\]/);
  });

  it('tolerates v4.3 and v4.2 namespaces, prefixes, CDATA, character references and keeps leading zeros', () => {
    const v42 =
      '<?xml version="1.0" encoding="UTF-8"?>\n<mh:MensajeHacienda xmlns:mh="https://tribunet.hacienda.go.cr/docs/esquemas/2017/v4.2/mensajeHacienda">\n' +
      '  <mh:Clave>00612345678901234567890123456789012345678901234567</mh:Clave>\n' +
      '  <mh:NombreEmisor><![CDATA[Ñandú & <Hijos>]]></mh:NombreEmisor>\n' +
      '  <mh:TipoIdentificacionEmisor>02</mh:TipoIdentificacionEmisor>\n  <mh:NumeroCedulaEmisor>003101123456</mh:NumeroCedulaEmisor>\n' +
      '  <mh:Mensaje>1</mh:Mensaje>\n  <mh:DetalleMensaje>a &amp;#233; &#233; &#x20A1; &lt;b&gt;</mh:DetalleMensaje>\n' +
      '  <mh:MontoTotalImpuesto>0010.50</mh:MontoTotalImpuesto>\n  <mh:TotalFactura>1e3</mh:TotalFactura>\n</mh:MensajeHacienda>';
    expect(parseMensajeHaciendaXml(v42)).toMatchObject({
      version: '4.2',
      clave: '00612345678901234567890123456789012345678901234567',
      nombreEmisor: 'Ñandú & <Hijos>',
      numeroCedulaEmisor: '003101123456',
      mensaje: 1,
      detalleMensaje: 'a &#233; é ₡ <b>',
      montoTotalImpuesto: '0010.50',
      totalFactura: '1e3',
      signatureCount: 0,
    });
    const v43 = buildMensajeHaciendaXml(MH_INPUT).replace('/v4.4/', '/v4.3/');
    expect(parseMensajeHaciendaXml(v43).version).toBe('4.3');
  });

  it('rejects what is not a MensajeHacienda', () => {
    const xml = buildMensajeHaciendaXml(MH_INPUT);
    expect(() => parseMensajeHaciendaXml(xml.replace('<Mensaje>3<', '<Mensaje>4<'))).toThrow(/Mensaje: expected 1, 2 or 3/);
    expect(() => parseMensajeHaciendaXml(xml.replace('/v4.4/mensajeHacienda', '/v9/mensajeHacienda'))).toThrow(/unknown namespace/);
    expect(() => parseMensajeHaciendaXml(xml.replace(/<NombreEmisor>.*<\/NombreEmisor>/, ''))).toThrow(/missing element NombreEmisor/);
    expect(() => parseMensajeHaciendaXml('<MensajeHacienda><Clave>1</MensajeHacienda>')).toThrow(XmlParseError);
    expect(() => parseMensajeHaciendaXml('<!DOCTYPE x [<!ENTITY a "aaaa">]><MensajeHacienda/>')).toThrow(/DOCTYPE/);
    expect(() => parseMensajeHaciendaXml(buildComprobanteXml(feFixture().doc, feFixture().totals))).toThrow(/expected a MensajeHacienda/);
  });
});

describe('MensajeReceptor', () => {
  it('builds a valid MensajeReceptor v4.4 and parses it back', async () => {
    const input = {
      clave: CLAVE,
      numeroCedulaEmisor: '3101123456',
      fechaEmisionDoc: '2025-05-16T09:00:00-06:00',
      mensaje: 2 as const,
      detalleMensaje: 'Aceptado parcialmente: faltó una caja',
      montoTotalImpuesto: '13351.1755',
      codigoActividad: '7020.0',
      condicionImpuesto: '02',
      montoTotalImpuestoAcreditar: dec('10000'),
      montoTotalDeGastoAplicable: dec('0'),
      totalFactura: dec('126552.5255'),
      numeroCedulaReceptor: '112345678',
      numeroConsecutivoReceptor: '00100001060000000001',
    };
    const xml = buildMensajeReceptorXml(input);
    const withSig = withPlaceholderSignature(xml);
    expect(await xsd.validate(withSig, 'MR')).toEqual([{ valid: true, errors: [] }]);
    expect((await xsd.validate(withSig, 'MR'))[0]!.valid).toBe(true);
    expect(parseMensajeReceptorXml(withSig)).toEqual({
      version: '4.4',
      ...input,
      montoTotalImpuesto: '13351.17550',
      montoTotalImpuestoAcreditar: '10000.00000',
      montoTotalDeGastoAplicable: '0.00000',
      totalFactura: '126552.52550',
      signatureCount: 1,
    });
    expect(parseMensajeXml(xml).type).toBe('MensajeReceptor');
    expect(parseMensajeXml(buildMensajeHaciendaXml(MH_INPUT)).type).toBe('MensajeHacienda');
  });
});

describe('parseComprobanteXml', () => {
  it.each(ALL_FIXTURES().map((f) => [f.name, f] as const))('%s: extracts identity, lines and every resumen figure', (_n, f) => {
    const xml = withPlaceholderSignature(buildComprobanteXml(f.doc, f.totals));
    const p = parseComprobanteXml(xml);
    expect(p.kind).toBe(f.doc.kind);
    expect(p.clave).toBe(f.doc.clave);
    expect(p.numeroConsecutivo).toBe(f.doc.numeroConsecutivo);
    expect(p.fechaEmision).toBe(f.doc.fechaEmision);
    expect(p.emisor.identificacion).toEqual(f.doc.emisor.identificacion);
    expect(p.receptor?.identificacion).toEqual(f.doc.receptor?.identificacion);
    expect(p.signatureCount).toBe(1);
    expect(p.lineas).toHaveLength(f.doc.lineas.length);
    p.lineas.forEach((l, i) => {
      const t = f.totals.lineas[i]!;
      expect(l.montoTotal).toBe(money(t.montoTotal));
      expect(l.subTotal).toBe(money(t.subTotal));
      expect(l.montoTotalLinea).toBe(money(t.montoTotalLinea));
      expect(l.impuestos.map((x) => x.monto)).toEqual(t.impuestos.map((x) => money(x.monto)));
    });
    const r = f.totals.resumen;
    expect(p.resumen.totalVenta).toBe(money(r.totalVenta));
    expect(p.resumen.totalVentaNeta).toBe(money(r.totalVentaNeta));
    expect(p.resumen.totalComprobante).toBe(money(r.totalComprobante));
    expect(p.resumen.totalDesgloseImpuesto).toEqual(
      r.totalDesgloseImpuesto.map((d) => ({ codigo: d.codigo, codigoTarifaIVA: d.codigoTarifaIVA, totalMontoImpuesto: money(d.totalMontoImpuesto) })),
    );
    expect(p.mediosPago.map((m) => m.tipoMedioPago)).toEqual(f.doc.mediosPago.map((m) => m.tipoMedioPago));
  });

  it('FE: gives everything needed to recompute the totals', () => {
    const f = feFixture();
    const p = parseComprobanteXml(buildComprobanteXml(f.doc, f.totals));
    expect(p).toMatchObject({
      codigoActividadEmisor: '6201.0',
      codigoActividadReceptor: '7020.0',
      proveedorSistemas: '3101123456',
      condicionVenta: '01',
      emisor: { nombre: 'Soluciones Ñandú & Hijos S.A.', ubicacion: { provincia: '1', canton: '01', distrito: '08' }, correoElectronico: ['facturacion@nandu.example.cr'] },
      otrosCargos: [{ tipoDocumento: '06', detalle: 'Impuesto de servicio 10%', porcentaje: '10', montoCargo: '10000.00000' }],
      mediosPago: [
        { tipoMedioPago: '01', totalMedioPago: '26552.52550' },
        { tipoMedioPago: '02', totalMedioPago: '100000.00000' },
      ],
      informacionReferencia: [],
      signatureCount: 0,
    });
    expect(p.lineas[1]).toEqual({
      numeroLinea: '2',
      codigoCABYS: '2399999000000',
      codigoComercial: [],
      cantidad: '3',
      unidadMedida: 'Unid',
      unidadMedidaComercial: 'caja',
      detalle: 'Tornillos de acero inoxidable',
      precioUnitario: '1000.50000',
      montoTotal: '3001.50000',
      descuentos: [{ montoDescuento: '300.15000', codigoDescuento: '07' }],
      subTotal: '2701.35000',
      baseImponible: '2701.35000',
      impuestos: [{ codigo: '01', codigoTarifaIVA: '08', tarifa: '13', monto: '351.17550' }],
      impuestoAsumidoEmisorFabrica: '0.00000',
      impuestoNeto: '351.17550',
      montoTotalLinea: '3052.52550',
      tieneSurtido: false,
    });
    expect(p.lineas[0]!.detalle).toBe('Servicio de consultoría <A&B> "año" ₡ > 0');
    expect(p.lineas[0]!.codigoComercial).toEqual([{ tipo: '04', codigo: 'SRV-001' }]);
    const res = p.resumen;
    expect(res).toMatchObject({ codigoMoneda: 'CRC', tipoCambio: '1.00000', totalServGravados: '100000.00000', totalMercanciasExentas: '500.00000', totalServExonerado: '0.00000', totalDescuentos: '300.15000', totalImpuesto: '13351.17550', totalOtrosCargos: '10000.00000' });
    expect(res.totalIVADevuelto).toBeUndefined();
    // Independent recomputation from the strings.
    const lineSum = sum(p.lineas.map((l) => dec(l.montoTotal)));
    expect(money(lineSum)).toBe(res.totalVenta);
    const expected = dec(res.totalVentaNeta).plus(dec(res.totalImpuesto!)).plus(dec(res.totalOtrosCargos!));
    expect(money(expected)).toBe(res.totalComprobante);
    expect(money(sum(p.mediosPago.map((m) => dec(m.totalMedioPago!))))).toBe(res.totalComprobante);
  });

  it('FE exoneración, NC reference, TE receptor extranjero', () => {
    const exo = parseComprobanteXml(buildComprobanteXml(feExoneracionFixture().doc, feExoneracionFixture().totals));
    expect(exo.lineas[0]!.impuestos[0]!.exoneracion).toEqual({
      tipoDocumento: '03', numeroDocumento: 'AL-00012345-25', articulo: '5', inciso: '2', nombreInstitucion: '01',
      fechaEmision: '2025-01-10T08:00:00-06:00', tarifaExonerada: '6.5', montoExoneracion: '6500.00000',
    });
    expect(exo.plazoCredito).toBe('30');
    expect(exo.resumen.codigoMoneda).toBe('USD');
    expect(exo.resumen.tipoCambio).toBe('505.12000');
    const nc = ncFixture();
    expect(parseComprobanteXml(buildComprobanteXml(nc.doc, nc.totals)).informacionReferencia).toEqual([
      { tipoDocIR: '01', numero: CLAVE, fechaEmisionIR: '2025-05-15T10:30:00-06:00', codigo: '06', razon: 'Devolución de una unidad & cambio' },
    ]);
    const te = parseComprobanteXml(buildComprobanteXml(teExtranjeroFixture().doc, teExtranjeroFixture().totals));
    expect(te.receptor).toEqual({
      nombre: "John O'Brien",
      identificacion: { tipo: '05', numero: 'P12345678' },
      correoElectronico: 'john@example.com',
      // Read too since issue 30 (an NC copies its original's receptor).
      otrasSenasExtranjero: '1600 Pennsylvania Ave, Washington DC, USA',
    });
    expect(te.codigoActividadReceptor).toBeUndefined();
    expect(parseComprobanteXml(buildComprobanteXml(teFixture().doc, teFixture().totals)).receptor).toBeUndefined();
  });

  it('accepts a prefixed, pretty-printed document with an XML declaration', () => {
    const f = teFixture();
    const xml = buildComprobanteXml(f.doc, f.totals)
      .replace(' xmlns=', ' xmlns:te=')
      .replace(/<(\/?)(\w+)/g, '<$1te:$2')
      .replace(/></g, '>\n  <');
    const p = parseComprobanteXml(`<?xml version="1.0" encoding="utf-8"?>\n${xml}`);
    expect(p.clave).toBe(f.doc.clave);
    expect(p.lineas[0]!.cantidad).toBe('2.125');
    expect(p.resumen.totalComprobante).toBe('4420.00000');
  });

  it('rejects unknown roots, foreign namespaces and missing figures', () => {
    const f = feFixture();
    const xml = buildComprobanteXml(f.doc, f.totals);
    expect(() => parseComprobanteXml(xml.replace('/v4.4/facturaElectronica', '/v4.3/facturaElectronica'))).toThrow(/is not the v4.4 namespace/);
    expect(() => parseComprobanteXml('<Factura xmlns="x"/>')).toThrow(/unknown root element Factura/);
    expect(() => parseComprobanteXml(xml.replace(/<TotalComprobante>[^<]*<\/TotalComprobante>/, ''))).toThrow(
      '/FacturaElectronica/ResumenFactura: missing element TotalComprobante',
    );
    expect(() => parseComprobanteXml(xml.replace('<MontoTotalLinea>3052.52550</MontoTotalLinea>', ''))).toThrow(
      '/FacturaElectronica/DetalleServicio/LineaDetalle[2]: missing element MontoTotalLinea',
    );
  });
});
