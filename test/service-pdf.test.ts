// The PDF representación gráfica: one of each kind rendered from the signed XML, checked with poppler
// (pdftotext: title, clave, consecutivo, parties, figures, ₡ and the state; pdftoppm: the page is not blank).
// What the page says about exoneraciones, 2-decimal money and the issuer's location: service-pdf-content.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueSigned } from './helpers/issue.js';
import { renderPdf } from '../src/service/pdf.js';
import { formatAmount } from '../src/service/pdf-content.js';
import { formatMoney } from '../src/core/money-format.js';
import type { DocumentRow } from '../src/store/schema.js';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { pngInk } from './helpers/e2e.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, any>;

let t: TestIssuer;
let dir: string;
beforeAll(() => {
  t = makeTestIssuer();
  dir = mkdtempSync(join(tmpdir(), 'fecr-pdf-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function signed(body: Record<string, any>): { xml: string; clave: string; consecutivo: string } {
  const r = issueSigned(body, t);
  return { xml: r.xml, clave: r.doc.clave, consecutivo: r.doc.numeroConsecutivo };
}

function run(cmd: string, args: string[]): string {
  const p = spawnSync(cmd, args, { encoding: 'utf8' });
  if (p.status !== 0) throw new Error(`${cmd} failed: ${p.stderr}`);
  return p.stdout.replace(/\u00a0/g, ' '); // the money formatter's no-break spaces, as plain spaces
}


describe('renderPdf', () => {
  const cases = [
    { kind: 'FE', body: () => validInvoice(), state: 'aceptado' as const, title: 'Factura Electrónica', estado: 'Aceptado', total: '105 939,20', receptor: 'BANCO NACIONAL DE COSTA RICA' },
    { kind: 'NC', body: () => fixture('09-nc-devolucion.json'), state: 'rechazado' as const, title: 'Nota de Crédito Electrónica', estado: 'Rechazado', total: '697 775,00', receptor: 'BANCO NACIONAL DE COSTA RICA' },
    { kind: 'TE', body: () => fixture('10-te-sin-receptor.json'), state: 'pendiente' as const, title: 'Tiquete Electrónico', estado: 'Pendiente', total: undefined, receptor: 'Sin receptor identificado' },
  ];

  for (const c of cases) {
    it(`${c.kind}: title, clave, consecutivo, parties, lines, totals with ₡, QR and state "${c.estado}"; the page renders`, async () => {
      const s = signed(c.body());
      const row = { xml: s.xml, clave: s.clave, state: c.state, detalle_mensaje: c.state === 'rechazado' ? '-90, "Rechazo forzado de prueba", 0, 0' : null } satisfies Partial<DocumentRow>;
      const pdf = await renderPdf(undefined, row);
      expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const file = join(dir, `${c.kind}.pdf`);
      writeFileSync(file, pdf);

      const text = run('pdftotext', ['-layout', file, '-']);
      expect(text).toContain(c.title);
      expect(text).toContain(s.clave);
      expect(text).toContain(s.consecutivo);
      expect(text).toContain('₡');
      expect(text).toContain(`Estado en Hacienda: ${c.estado}`);
      expect(text).toContain(ISSUER.nombre!);
      expect(text).toContain(ISSUER.identificacion);
      expect(text).toContain(ISSUER.correoElectronico);
      expect(text).toContain(c.receptor);
      for (const h of ['Código', 'Detalle', 'Cant.', 'Precio unit.', 'Descuento', 'Impuesto', 'Total línea']) expect(text).toContain(h);
      for (const h of ['Total venta neta', 'Total impuesto', 'Total otros cargos', 'Total comprobante']) expect(text).toContain(h);
      if (c.total) expect(text).toContain(`₡${c.total}`);
      if (c.kind === 'FE') {
        expect(text).toContain('Consultoría en gestión estratégica');
        expect(text).toContain('8311200000000');
        expect(text).toContain('10 000,00'); // the discount of line 1
        expect(text).toContain('₡12 187,70'); // TotalImpuesto 12187.695, half-up to 2 decimals
      }
      if (c.kind === 'NC') {
        expect(text).toContain('Información de referencia');
        expect(text).toContain('Rechazo forzado de prueba');
      }

      run('pdftoppm', ['-png', '-r', '50', '-f', '1', '-l', '1', file, join(dir, c.kind)]);
      const pngFile = join(dir, `${c.kind}-1.png`);
      expect(statSync(pngFile).size).toBeGreaterThan(5_000);
      const { width, height, dark } = pngInk(readFileSync(pngFile));
      expect(width).toBeGreaterThan(400);
      expect(height).toBeGreaterThan(550);
      // Text, rules and the QR code: a few percent of the page is ink.
      expect(dark / (width * height)).toBeGreaterThan(0.02);
      expect(dark / (width * height)).toBeLessThan(0.5);
    });
  }

  it('another currency shows its code; many lines flow onto more pages with the column header repeated', async () => {
    const body = validInvoice();
    body.resumenFactura = { codigoTipoMoneda: { codigoMoneda: 'USD', tipoCambio: '512.34' }, mediosPago: [{ tipoMedioPago: '02' }] };
    body.detalleServicio = Array.from({ length: 90 }, (_, i) => ({
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
    const s = signed(body);
    const file = join(dir, 'usd.pdf');
    writeFileSync(file, await renderPdf(undefined, { xml: s.xml, clave: s.clave, state: 'aceptado' }));
    const pages = Number(/Pages:\s+(\d+)/.exec(run('pdfinfo', [file]))![1]);
    expect(pages).toBeGreaterThanOrEqual(2);
    const text = run('pdftotext', ['-layout', file, '-']);
    expect(text).toContain('US$10 170,00'); // TotalComprobante = 90 × 113
    expect(text).toContain('Tipo de cambio: ₡512,34 por US$1');
    expect(text).toContain('Hora de consultoría número 90');
    // Every page with lines starts with the column header (the totals may have a page of their own).
    let withLines = 0;
    for (let p = 1; p <= pages; p++) {
      const page = run('pdftotext', ['-f', String(p), '-l', String(p), '-layout', file, '-']);
      if (!page.includes('Hora de consultoría')) continue;
      withLines++;
      expect(page.split('Precio unit.').length - 1).toBe(1);
    }
    expect(withLines).toBeGreaterThanOrEqual(2);
  });

  it('formats money as es-CR does (no-break space groups, decimal comma) and exactly 2 decimals, rounded half-up from the XML precision', () => {
    const sp = (s: string) => s.replace(/ /g, '\u00a0');
    expect(formatAmount('1234567.5')).toBe(sp('1 234 567,50'));
    expect(formatAmount('487.69500')).toBe('487,70');
    expect(formatAmount('82.87500')).toBe('82,88');
    expect(formatAmount('0.00499')).toBe('0,00');
    expect(formatAmount('0.00500')).toBe('0,01');
    expect(formatAmount('0.00000')).toBe('0,00');
    expect(formatAmount('20.20352')).toBe('20,20');
    expect(formatAmount('999999.995')).toBe(sp('1 000 000,00'));
    expect(formatAmount('-1234.565')).toBe(sp('-1 234,57'));
    expect(formatAmount(undefined)).toBe('0,00');
    // The same as the platform's es-CR locale.
    expect(formatMoney('1234567.89', 'CRC')).toBe(new Intl.NumberFormat('es-CR', { style: 'currency', currency: 'CRC' }).format(1234567.89));
    expect(formatMoney('2245.86483', 'USD')).toBe(sp('US$2 245,86'));
    expect(formatMoney('-5', 'CRC')).toBe('-₡5,00');
  });
});
