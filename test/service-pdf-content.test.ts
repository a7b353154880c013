// What the PDF representación gráfica says, read back with pdftotext: the exoneración of each exonerated line
// (tipo and its name, número, institución, fecha, tarifa exonerada, monto exonerado, net tax), the exonerated
// totals of the summary, money always with exactly 2 decimals (half-up from the XML's 5), the tipo de cambio
// of a USD invoice, and the issuer's location and economic activity. Built from fixtures through the real
// pipeline (issueComprobante → signed XML → renderPdf).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIPOS_EXONERACION } from '../src/core/codes.js';
import { issueSigned } from './helpers/issue.js';
import { renderPdf } from '../src/service/pdf.js';
import { ISSUER } from './helpers/bodies.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, any>;

let t: TestIssuer;
let dir: string;
beforeAll(() => {
  t = makeTestIssuer();
  dir = mkdtempSync(join(tmpdir(), 'fecr-pdf-content-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(cmd: string, args: string[]): string {
  const p = spawnSync(cmd, args, { encoding: 'utf8' });
  if (p.status !== 0) throw new Error(`${cmd} failed: ${p.stderr}`);
  return p.stdout.replace(/\u00a0/g, ' '); // the money formatter's no-break spaces, as plain spaces
}

/** The fixture signed and rendered; its text in reading order with whitespace collapsed, and in layout mode. */
async function pdfOf(name: string, body = fixture(`${name}.json`)): Promise<{ text: string; layout: string; xml: string; file: string }> {
  const r = issueSigned(body, t);
  const file = join(dir, `${name}.pdf`);
  writeFileSync(file, await renderPdf(undefined, { xml: r.xml, clave: r.doc.clave, state: 'aceptado' }));
  const text = run('pdftotext', [file, '-']).replace(/\s+/g, ' ');
  return { text, layout: run('pdftotext', ['-layout', file, '-']), xml: r.xml, file };
}

/** Every figure with a decimal comma: none may have more than 2 decimals (quantities here have at most 1). */
function longDecimals(text: string): string[] {
  return [...text.matchAll(/\d[\d ]*,\d{3,}/g)].map((m) => m[0]);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** In the layout text, `label` and then `value` on the same line (a row of the totals). */
function expectRow(layout: string, label: string, value: string): void {
  expect(layout).toMatch(new RegExp(`${escape(label)} +${escape(value)}(?!\\S)`));
}

function expectIssuerHeader(text: string): void {
  expect(text).toContain('Actividad económica: 6201.0');
  // By name from the codification (1-01-08: Mata Redonda, cantón San José), then the codes.
  expect(text).toContain('Barrio Escalante, distrito Mata Redonda, cantón San José, provincia San José (1-01-08)');
  expect(text).toContain(ISSUER.ubicacion.direccion);
}

describe('PDF content', () => {
  it('06 FE exonerada (autorización, 13 of 13 %): each line shows its exoneración; the summary shows the exonerated totals', async () => {
    const { text, layout, xml } = await pdfOf('06-fe-exoneracion-autorizacion');
    expect(xml).toContain('<MontoExoneracion>110500.00000</MontoExoneracion>');
    const tipo = TIPOS_EXONERACION['04']!.label;
    // One exoneración per line, right after the line it belongs to.
    const l1 = text.indexOf('Consultoría en gestión estratégica empresarial');
    const l2 = text.indexOf('Consultoría en gestión financiera: plan de negocios');
    expect(l1).toBeGreaterThan(-1);
    expect(l2).toBeGreaterThan(l1);
    const block1 = text.slice(l1, l2);
    const block2 = text.slice(l2, text.indexOf('Total venta'));
    for (const [block, gross, exonerated] of [
      [block1, '110 500,00', '110 500,00'],
      [block2, '37 050,00', '37 050,00'],
    ] as const) {
      expect(block).toContain('Exoneración');
      expect(block).toContain(`04 ${tipo}`);
      expect(block).toContain('AL-00020402-24');
      expect(block).toContain('Ministerio de Hacienda');
      expect(block).toContain('01/03/2024');
      expect(block).toContain('Tarifa exonerada: 13 %');
      expect(block).toContain(`Impuesto: ₡${gross}`);
      expect(block).toContain(`Monto exonerado: ₡${exonerated}`);
      expect(block).toContain('Impuesto neto: ₡0,00');
    }
    expectRow(layout, 'Total servicios exonerados', '₡1 150 000,00');
    expectRow(layout, 'Total exonerado', '₡1 150 000,00');
    expectRow(layout, 'Total impuesto', '₡0,00');
    expectRow(layout, 'Total comprobante', '₡1 135 000,00');
    // Zero subtotals are not listed.
    expect(text).not.toContain('Total mercancías exoneradas');
    expect(text).not.toContain('Total servicios gravados');
    expect(longDecimals(text)).toEqual([]);
    expectIssuerHeader(text);
  });

  it('13 FE exoneración parcial (10 of 13 %): the net tax in the line, the amount exonerated and the gravado/exonerado split', async () => {
    const { text, layout } = await pdfOf('13-fe-exoneracion-parcial');
    const l1 = text.indexOf('Consultoría en gestión financiera');
    const l2 = text.indexOf('Consultoría en gestión estratégica (horas)');
    expect(l2).toBeGreaterThan(l1);
    const block1 = text.slice(l1, l2);
    const block2 = text.slice(l2, text.indexOf('Total venta'));
    expect(block1).toContain('Tarifa exonerada: 10 %');
    expect(block1).toContain('Impuesto: ₡13 000,00');
    expect(block1).toContain('Monto exonerado: ₡10 000,00');
    expect(block1).toContain('Impuesto neto: ₡3 000,00');
    expect(block1).toMatch(/3 000,00 \(13 %\)/); // the Impuesto column: net tax and its rate
    expect(block2).toContain('Monto exonerado: ₡9 500,00');
    expect(block2).toContain('Impuesto neto: ₡2 850,00');
    expectRow(layout, 'Total servicios gravados', '₡45 000,00');
    expectRow(layout, 'Total servicios exonerados', '₡150 000,00');
    expectRow(layout, 'Total gravado', '₡45 000,00');
    expectRow(layout, 'Total exonerado', '₡150 000,00');
    expectRow(layout, 'Total impuesto', '₡5 850,00');
    expectRow(layout, 'Total comprobante', '₡200 850,00');
    expect(longDecimals(text)).toEqual([]);
    expectIssuerHeader(text);
  });

  it('03 FE with four tarifas: the summary shows the IVA of each (4 %, 2 %, 1 %, 0 %), and no total in colones (CRC)', async () => {
    const { text, layout } = await pdfOf('03-fe-tarifas-reducidas');
    expectRow(layout, 'Total impuesto', '₡1 383,13');
    expectRow(layout, 'IVA 4 %', '₡1 140,00');
    expectRow(layout, 'IVA 2 %', '₡142,53');
    expectRow(layout, 'IVA 1 %', '₡100,60');
    expectRow(layout, 'IVA 0 %', '₡0,00');
    expect(text).not.toContain('Total en colones');
    expectRow(layout, 'Total comprobante', '₡204 569,68');
  });

  it('08 FE in USD: every amount with 2 decimals (half-up), US$ in the totals, the tipo de cambio; quantities keep their precision', async () => {
    const { text, layout } = await pdfOf('08-fe-usd');
    expect(longDecimals(text)).toEqual([]);
    expect(longDecimals(layout)).toEqual([]);
    expect(text).toContain('Tipo de cambio: ₡507,85 por US$1');
    // Line 1: descuento 149.999, impuesto 175.49883, total 1525.48983; line 2: 82.875 and 720.375 (half-up).
    for (const figure of ['1 499,99', '150,00', '175,50', '1 525,49', '85,00', '82,88', '720,38']) expect(text).toContain(figure);
    expect(text).toContain('7,5 h');
    // The IVA of each tarifa under Total impuesto; the total in colones at the document's rate (2245.86 × 507.85).
    expectRow(layout, 'IVA 13 %', 'US$258,37');
    expectRow(layout, 'Total en colones', '₡1 140 560,00');
    expect(text).toContain('US$2 245,86 × tipo de cambio ₡507,85');
    expectRow(layout, 'Total venta', 'US$2 137,49');
    expectRow(layout, 'Total descuentos', 'US$150,00');
    expectRow(layout, 'Total venta neta', 'US$1 987,49');
    expectRow(layout, 'Total impuesto', 'US$258,37');
    expectRow(layout, 'Total comprobante', 'US$2 245,86');
    expect(text).not.toContain('USD 2');
    // Every currency-marked amount: grouped thousands and exactly 2 decimals.
    const marked = [...text.matchAll(/(?:US\$|₡)(\d[\d ]*(?:,\d+)?)/g)].map((m) => m[1]!.trim());
    expect(marked.length).toBeGreaterThan(5);
    for (const m of marked) expect(m).toMatch(/^\d{1,3}(?: \d{3})*,\d{2}$|^\d+$/);
    expectIssuerHeader(text);
  });

  it('an exoneración keeps to its line across page breaks; artículo, inciso and NombreInstitucionOtros are printed; the receptor location and activity too', async () => {
    const body = fixture('06-fe-exoneracion-autorizacion.json');
    body.receptor.ubicacion = { provincia: '4', canton: '01', distrito: '03', barrio: 'Barrio Fátima', direccion: '200 m norte de la iglesia' };
    body.codigoActividadReceptor = '741003';
    const line = body.detalleServicio[0];
    body.detalleServicio = Array.from({ length: 24 }, (_, i) => ({
      ...structuredClone(line),
      numeroLinea: i + 1,
      detalle: `Hora ${i + 1} de consultoría${i % 3 === 0 ? ' con una descripción larga que ocupa varias líneas en la columna de detalle' : ''}`,
      impuesto: [
        {
          ...line.impuesto[0],
          exoneracion: {
            tipoDocumento: '03',
            numeroDocumento: 'LEY-7293-2024',
            nombreInstitucion: '99',
            nombreInstitucionOtros: 'Instituto Costarricense de Electricidad',
            fechaEmision: '2024-03-01T00:00:00-06:00',
            porcentajeExoneracion: 13,
            articulo: 123,
            inciso: 4,
          },
        },
      ],
    }));
    for (const k of ['totalServExonerado', 'totalExonerado', 'totalVenta', 'totalDescuentos', 'totalVentaNeta', 'totalImpuesto', 'totalComprobante']) delete body.resumenFactura[k];
    const { text, file } = await pdfOf('many-exonerated', body);
    expect(text).toContain(`03 ${TIPOS_EXONERACION['03']!.label} · Documento LEY-7293-2024, artículo 123, inciso 4`);
    expect(text).toContain('Institución: 99 Otros (Instituto Costarricense de Electricidad)');
    expect(text).toContain('Barrio Fátima, distrito San Francisco, cantón Heredia, provincia Heredia (4-01-03)');
    expect(text).toContain('200 m norte de la iglesia');
    expect(text).toContain('Actividad económica: 741003');
    const pages = Number(/Pages:\s+(\d+)/.exec(run('pdfinfo', [file]))![1]);
    expect(pages).toBeGreaterThanOrEqual(2);
    let lines = 0;
    for (let p = 1; p <= pages; p++) {
      const page = run('pdftotext', ['-f', String(p), '-l', String(p), file, '-']);
      const n = page.match(/Hora \d+ de consultoría/g)?.length ?? 0;
      expect(page.match(/Exoneración:/g)?.length ?? 0).toBe(n); // every line's exoneración on the line's page
      lines += n;
    }
    expect(lines).toBe(24);
    expect(longDecimals(text)).toEqual([]);
  });
});
