import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildComprobanteXml, KIND_RULES, KINDS } from '../src/core/xml/build.js';
import { buildMensajeHaciendaXml } from '../src/core/xml/mensaje.js';
import { dec } from '../src/core/money.js';
import { ALL_FIXTURES, feExoneracionFixture, feFixture, ncFixture, teExtranjeroFixture, teFixture } from './xml-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'fecr-xml-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Exclusive C14N of `xml` as computed by libxml2 (`xmllint --exc-c14n`). */
function excC14n(xml: string, name: string): string {
  const file = join(dir, name);
  writeFileSync(file, xml, 'utf8');
  return execFileSync('xmllint', ['--nonet', '--exc-c14n', file], { encoding: 'utf8' });
}

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

describe('buildComprobanteXml', () => {
  it.each(ALL_FIXTURES().map((f) => [f.name, f] as const))('%s: root declares only its v4.4 default namespace', (_n, f) => {
    const xml = buildComprobanteXml(f.doc, f.totals);
    const k = KINDS[f.doc.kind];
    expect(k.namespace).toBe(`https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/${k.rootName[0]!.toLowerCase()}${k.rootName.slice(1)}`);
    expect(xml.startsWith(`<${k.rootName} xmlns="${k.namespace}"><Clave>${f.doc.clave}</Clave>`)).toBe(true);
    expect(xml).toMatch(new RegExp(`</(ResumenFactura|InformacionReferencia)></${k.rootName}>$`));
    expect(count(xml, 'xmlns')).toBe(1);
    expect(xml).not.toMatch(/xsi|schemaLocation|<\?xml|Signature|\/>/);
  });

  it('KINDS metadata covers every kind with its tipo de comprobante and XSD', () => {
    expect(Object.fromEntries(Object.values(KINDS).map((k) => [k.kind, [k.rootName, k.tipoComprobante, k.xsdFile]]))).toEqual({
      FE: ['FacturaElectronica', '01', '2026/v4.4/FacturaElectronica_V4.4.xsd'],
      ND: ['NotaDebitoElectronica', '02', '2026/v4.4/NotaDebitoElectronica_V4.4.xsd'],
      NC: ['NotaCreditoElectronica', '03', '2026/v4.4/NotaCreditoElectronica_V4.4.xsd'],
      TE: ['TiqueteElectronico', '04', '2026/v4.4/TiqueteElectronico_V4.4.xsd'],
      FEC: ['FacturaElectronicaCompra', '08', '2026/v4.4/FacturaElectronicaCompra_V4.4.xsd'],
      FEE: ['FacturaElectronicaExportacion', '09', '2026/v4.4/FacturaElectronicaExportacion_V4.4.xsd'],
      REP: ['ReciboElectronicoPago', '10', '2026/v4.4/ReciboElectronicoPago_V4.4.xsd'],
    });
  });

  it('formats amounts, quantities and rates as the XSD types require', () => {
    const fe = buildComprobanteXml(feFixture().doc, feFixture().totals);
    expect(fe).toContain('<Cantidad>2</Cantidad>');
    expect(fe).toContain('<Cantidad>1.25</Cantidad>');
    expect(fe).toContain('<PrecioUnitario>1000.50000</PrecioUnitario>');
    expect(fe).toContain('<Monto>351.17550</Monto>');
    expect(fe).toContain('<Tarifa>13</Tarifa>');
    expect(fe).toContain('<PorcentajeOC>10</PorcentajeOC>');
    expect(fe).toContain('<TipoCambio>1.00000</TipoCambio>');
    const exo = buildComprobanteXml(feExoneracionFixture().doc, feExoneracionFixture().totals);
    expect(exo).toContain(
      '<Exoneracion><TipoDocumentoEX1>03</TipoDocumentoEX1><NumeroDocumento>AL-00012345-25</NumeroDocumento><Articulo>5</Articulo><Inciso>2</Inciso><NombreInstitucion>01</NombreInstitucion><FechaEmisionEX>2025-01-10T08:00:00-06:00</FechaEmisionEX><TarifaExonerada>6.5</TarifaExonerada><MontoExoneracion>6500.00000</MontoExoneracion></Exoneracion>',
    );
    expect(exo).toContain('<ImpuestoNeto>6500.00000</ImpuestoNeto><MontoTotalLinea>106500.00000</MontoTotalLinea>');
    expect(exo).toContain('<CondicionVenta>02</CondicionVenta><PlazoCredito>30</PlazoCredito>');
    const te = buildComprobanteXml(teFixture().doc, teFixture().totals);
    expect(te).toContain('<Cantidad>2.125</Cantidad>');
  });

  it('keeps a Barrio that fits 5-50 characters and leaves out one that does not', () => {
    const xml = buildComprobanteXml(feFixture().doc, feFixture().totals);
    expect(xml).toContain('<Distrito>08</Distrito><Barrio>Barrio Escalante</Barrio><OtrasSenas>');
    expect(xml).toContain('<Distrito>01</Distrito><OtrasSenas>Frente al parque central</OtrasSenas>');
    expect(count(xml, '<Barrio>')).toBe(1);
  });

  it('applies the per-kind rules: TE has no CodigoActividadReceptor nor TipoTransaccion; FE has both', () => {
    const te = buildComprobanteXml(teFixture().doc, teFixture().totals);
    expect(te).not.toContain('CodigoActividadReceptor');
    expect(te).not.toContain('TipoTransaccion');
    expect(te).not.toContain('<Receptor>');
    const fe = buildComprobanteXml(feFixture().doc, feFixture().totals);
    expect(fe).toContain('<CodigoActividadEmisor>6201.0</CodigoActividadEmisor><CodigoActividadReceptor>7020.0</CodigoActividadReceptor>');
    expect(fe).toContain('<TipoTransaccion>01</TipoTransaccion>');
    expect(KIND_RULES.FEE.baseImponible).toBe(false);
    expect(KIND_RULES.REP.lineaMercancia).toBe(false);
  });

  it('writes a foreign receptor with OtrasSenasExtranjero and no Ubicacion', () => {
    const xml = buildComprobanteXml(teExtranjeroFixture().doc, teExtranjeroFixture().totals);
    expect(xml).toContain(
      "<Receptor><Nombre>John O'Brien</Nombre><Identificacion><Tipo>05</Tipo><Numero>P12345678</Numero></Identificacion><OtrasSenasExtranjero>1600 Pennsylvania Ave, Washington DC, USA</OtrasSenasExtranjero><CorreoElectronico>john@example.com</CorreoElectronico></Receptor>",
    );
  });

  it('writes every line figure from totals, not from the document', () => {
    const f = feFixture();
    f.totals.lineas[0]!.montoTotalLinea = dec('123.456789');
    expect(buildComprobanteXml(f.doc, f.totals)).toContain('<MontoTotalLinea>123.45679</MontoTotalLinea>');
  });

  it('ResumenFactura: classification totals always, situational totals only when they apply', () => {
    const fe = feFixture();
    const xml = buildComprobanteXml(fe.doc, fe.totals);
    const resumen = xml.slice(xml.indexOf('<ResumenFactura>'), xml.indexOf('</ResumenFactura>'));
    const names = [...resumen.matchAll(/<(Total\w+)>/g)].map((m) => m[1]);
    expect(names).toEqual([
      'TotalServGravados', 'TotalServExentos', 'TotalServExonerado', 'TotalServNoSujeto',
      'TotalMercanciasGravadas', 'TotalMercanciasExentas', 'TotalMercExonerada', 'TotalMercNoSujeta',
      'TotalGravado', 'TotalExento', 'TotalExonerado', 'TotalNoSujeto', 'TotalVenta', 'TotalDescuentos',
      'TotalVentaNeta', 'TotalDesgloseImpuesto', 'TotalMontoImpuesto', 'TotalDesgloseImpuesto', 'TotalMontoImpuesto',
      'TotalImpuesto', 'TotalOtrosCargos', 'TotalMedioPago', 'TotalMedioPago', 'TotalComprobante',
    ]);
    expect(resumen).toContain('<TotalServExonerado>0.00000</TotalServExonerado>');
    expect(resumen).toContain(
      '<MedioPago><TipoMedioPago>01</TipoMedioPago><TotalMedioPago>26552.52550</TotalMedioPago></MedioPago><MedioPago><TipoMedioPago>02</TipoMedioPago><TotalMedioPago>100000.00000</TotalMedioPago></MedioPago><TotalComprobante>126552.52550</TotalComprobante>',
    );
    // No OtrosCargos → no TotalOtrosCargos; non-zero asumido / devuelto → emitted.
    const nc = ncFixture();
    nc.totals.resumen.totalImpAsumEmisorFabrica = dec(5);
    nc.totals.resumen.totalIVADevuelto = dec(7);
    const ncXml = buildComprobanteXml(nc.doc, nc.totals);
    expect(ncXml).not.toContain('TotalOtrosCargos');
    expect(ncXml).toContain('<TotalImpuesto>130.06500</TotalImpuesto><TotalImpAsumEmisorFabrica>5.00000</TotalImpAsumEmisorFabrica><TotalIVADevuelto>7.00000</TotalIVADevuelto><MedioPago>');
  });

  it('writes InformacionReferencia after ResumenFactura (NC)', () => {
    const nc = ncFixture();
    const xml = buildComprobanteXml(nc.doc, nc.totals);
    expect(xml).toMatch(
      new RegExp(`</ResumenFactura><InformacionReferencia><TipoDocIR>01</TipoDocIR><Numero>${nc.doc.informacionReferencia[0]!.numero}</Numero><FechaEmisionIR>2025-05-15T10:30:00-06:00</FechaEmisionIR><Codigo>06</Codigo><Razon>Devolución de una unidad &amp; cambio</Razon></InformacionReferencia></NotaCreditoElectronica>$`),
    );
  });

  it('rejects totals that do not match the document, and characters XML cannot carry', () => {
    const f = feFixture();
    expect(() => buildComprobanteXml(f.doc, { ...f.totals, lineas: f.totals.lineas.slice(1) })).toThrow(/2 lines, the document has 3/);
    const g = feExoneracionFixture();
    delete g.totals.lineas[0]!.impuestos[0]!.montoExoneracion;
    expect(() => buildComprobanteXml(g.doc, g.totals)).toThrow(/montoExoneracion/);
    const h = feFixture();
    h.doc.lineas[0]!.detalle = 'bad \u0001 char';
    expect(() => buildComprobanteXml(h.doc, h.totals)).toThrow(/Detalle/);
  });
});

describe('canonical by construction', () => {
  it.each(ALL_FIXTURES().map((f) => [f.name, f] as const))('%s: xmllint --exc-c14n of the output is the output', (name, f) => {
    const xml = buildComprobanteXml(f.doc, f.totals);
    expect(excC14n(xml, `${name.replace(/\W/g, '_')}.xml`)).toBe(xml);
  });

  it('text with & < > quotes, accents, ₡, tabs and CR/LF survives C14N byte for byte', () => {
    const f = feFixture();
    f.doc.lineas[0]!.detalle = 'Línea «1» & <2> "tres" \'cuatro\' ₡5\tseis\r\nsiete ñ ü Ω';
    f.doc.emisor = { ...f.doc.emisor, nombreComercial: 'A&B <C> > D' };
    const xml = buildComprobanteXml(f.doc, f.totals);
    expect(xml).toContain('<Detalle>Línea «1» &amp; &lt;2&gt; "tres" \'cuatro\' ₡5\tseis&#xD;\nsiete ñ ü Ω</Detalle>');
    expect(excC14n(xml, 'special.xml')).toBe(xml);
  });

  it('MensajeHacienda output is canonical too', () => {
    const xml = buildMensajeHaciendaXml({
      clave: feFixture().doc.clave,
      nombreEmisor: 'Ñandú & <Hijos>',
      tipoIdentificacionEmisor: '02',
      numeroCedulaEmisor: '3101123456',
      mensaje: 3,
      detalleMensaje: 'Línea 1\r\nLínea 2 "x" & <y> ₡',
      totalFactura: '100',
    });
    expect(excC14n(xml, 'mh.xml')).toBe(xml);
  });
});
