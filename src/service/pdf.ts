/**
 * The PDF "representación gráfica" of a stored document: title by kind, issuer, receiver, clave, consecutivo,
 * fecha de emisión, lines (code, detail, quantity, unit price, discount, tax, line total), references, totals,
 * a QR code of the clave and the state of Hacienda's decision. Every figure is read from the signed XML (never from
 * the request body), so the PDF shows exactly what was sent to Hacienda. pdfkit with DejaVu Sans (draws ₡).
 */
import { createRequire } from 'node:module';
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import { CONDICIONES_VENTA, MEDIOS_PAGO, TIPOS_DOC_REFERENCIA, TIPOS_IDENTIFICACION } from '../core/codes.js';
import { dec } from '../core/money.js';
import type { DocumentKind } from '../core/model.js';
import { parseComprobanteXml, parseXmlRoot, type ParsedComprobante } from '../core/xml/parse.js';
import type { DocumentRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';

const require = createRequire(import.meta.url);
const FONT = require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
const FONT_BOLD = require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf');

export const PDF_TITLES: Record<DocumentKind, string> = {
  FE: 'Factura Electrónica',
  NC: 'Nota de Crédito Electrónica',
  ND: 'Nota de Débito Electrónica',
  TE: 'Tiquete Electrónico',
  FEC: 'Factura Electrónica de Compra',
  FEE: 'Factura Electrónica de Exportación',
  REP: 'Recibo Electrónico de Pago',
};

/** The acceptance state as printed. */
export function estadoLabel(state: DocumentRow['state']): string {
  if (state === 'aceptado') return 'Aceptado';
  if (state === 'rechazado') return 'Rechazado';
  if (state === 'error') return 'Error';
  return 'Pendiente';
}

/** `1234567.5` → `1,234,567.50` (at least 2 decimals, up to 5 when the XML has them; half-up). */
export function formatAmount(value: string | undefined): string {
  if (value === undefined || value === '') return '0.00';
  const d = dec(value);
  const fixed5 = d.toFixed(5);
  const [int, frac = ''] = fixed5.split('.');
  const trimmed = frac.replace(/0+$/, '');
  const decimals = trimmed.length <= 2 ? d.toFixed(2).split('.')[1]! : trimmed;
  const sign = int!.startsWith('-') ? '-' : '';
  const digits = int!.replace('-', '');
  return `${sign}${digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${decimals}`;
}

function currencyPrefix(code: string): string {
  return code === 'CRC' ? '₡' : `${code} `;
}

/** `2026-03-15T10:30:00-06:00` → `15/03/2026 10:30:00 (-06:00)`; anything else as is. */
function formatFecha(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.exec(iso);
  if (!m) return iso;
  return `${m[3]}/${m[2]}/${m[1]} ${m[4]}${m[5] ? ` (${m[5] === 'Z' ? 'UTC' : m[5]})` : ''}`;
}

function idLabel(tipo: string | undefined, numero: string | undefined): string {
  if (!numero) return '';
  const label = tipo ? (TIPOS_IDENTIFICACION[tipo]?.label ?? `Tipo ${tipo}`) : '';
  return label ? `${label} ${numero}` : numero;
}

type Raw = Record<string, unknown>;
function rawText(node: unknown): string | undefined {
  if (node === undefined || node === null) return undefined;
  if (typeof node === 'string') return node;
  if (Array.isArray(node)) return rawText(node[0]);
  if (typeof node === 'object') return rawText((node as Raw)['#text']);
  return undefined;
}
function rawChild(node: unknown, name: string): unknown {
  if (Array.isArray(node)) node = node[0];
  return node && typeof node === 'object' ? (node as Raw)[name] : undefined;
}

interface Party {
  nombre: string;
  nombreComercial?: string;
  identificacion: string;
  telefono?: string;
  correo?: string;
  direccion?: string;
}

/** Issuer and receiver contact details the typed parser does not keep. */
function parties(xml: string, doc: ParsedComprobante): { emisor: Party; receptor?: Party } {
  const body = parseXmlRoot(xml).body;
  const phone = (p: unknown) => {
    const t = rawChild(p, 'Telefono');
    const n = rawText(rawChild(t, 'NumTelefono'));
    if (!n) return undefined;
    const c = rawText(rawChild(t, 'CodigoPais'));
    return c ? `+${c} ${n}` : n;
  };
  const e = rawChild(body, 'Emisor');
  const r = rawChild(body, 'Receptor');
  const emisor: Party = {
    nombre: doc.emisor.nombre,
    identificacion: idLabel(doc.emisor.identificacion.tipo, doc.emisor.identificacion.numero),
  };
  const nc = rawText(rawChild(e, 'NombreComercial'));
  if (nc) emisor.nombreComercial = nc;
  const tel = phone(e);
  if (tel) emisor.telefono = tel;
  if (doc.emisor.correoElectronico.length > 0) emisor.correo = doc.emisor.correoElectronico.join(', ');
  const sen = rawText(rawChild(rawChild(e, 'Ubicacion'), 'OtrasSenas'));
  if (sen) emisor.direccion = sen;
  if (!doc.receptor) return { emisor };
  const receptor: Party = {
    nombre: doc.receptor.nombre,
    identificacion: idLabel(doc.receptor.identificacion?.tipo, doc.receptor.identificacion?.numero),
  };
  const rtel = phone(r);
  if (rtel) receptor.telefono = rtel;
  if (doc.receptor.correoElectronico) receptor.correo = doc.receptor.correoElectronico;
  const rsen = rawText(rawChild(rawChild(r, 'Ubicacion'), 'OtrasSenas')) ?? rawText(rawChild(r, 'OtrasSenasExtranjero'));
  if (rsen) receptor.direccion = rsen;
  return { emisor, receptor };
}

const A4 = { width: 595.28, height: 841.89 };
const M = 36; // margin
const INK = '#111111';
const MUTED = '#555555';
const RULE = '#999999';

/**
 * Renders the PDF of a stored document row (needs `xml`, `state`, `kind`, `clave`; `detalle_mensaje` for rejections).
 * `ctx` is only used for logging.
 */
export async function renderPdf(ctx: Pick<ServiceContext, 'logger'> | undefined, row: Pick<DocumentRow, 'xml' | 'state' | 'clave'> & Partial<DocumentRow>): Promise<Buffer> {
  const doc = parseComprobanteXml(row.xml);
  const { emisor, receptor } = parties(row.xml, doc);
  const qr = await QRCode.toBuffer(doc.clave, { type: 'png', errorCorrectionLevel: 'M', margin: 1, scale: 4 });
  const pdf = new PDFDocument({
    size: 'A4',
    margins: { top: M, bottom: M, left: M, right: M },
    info: { Title: `${PDF_TITLES[doc.kind]} ${doc.numeroConsecutivo}`, Author: doc.emisor.nombre, Subject: doc.clave, Creator: 'fecr' },
    compress: true,
  });
  pdf.registerFont('body', FONT);
  pdf.registerFont('bold', FONT_BOLD);
  const chunks: Buffer[] = [];
  pdf.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    pdf.on('end', resolve);
    pdf.on('error', reject);
  });

  const contentWidth = A4.width - 2 * M;
  const moneda = doc.resumen.codigoMoneda || 'CRC';
  const cur = currencyPrefix(moneda);

  // --- Header: title, numbers, QR ----------------------------------------------------------------
  const qrSize = 96;
  pdf.image(qr, A4.width - M - qrSize, M, { width: qrSize, height: qrSize });
  const headWidth = contentWidth - qrSize - 12;
  pdf.fillColor(INK).font('bold').fontSize(17).text(PDF_TITLES[doc.kind], M, M, { width: headWidth });
  pdf.moveDown(0.3);
  const kv = (k: string, v: string, width = headWidth, x = M) => {
    pdf.font('bold').fontSize(8.5).fillColor(MUTED).text(`${k}: `, x, undefined, { continued: true, width });
    pdf.font('body').fillColor(INK).text(v, { width });
  };
  kv('Clave', doc.clave);
  kv('Consecutivo', doc.numeroConsecutivo);
  kv('Fecha de emisión', formatFecha(doc.fechaEmision));
  const condicion = CONDICIONES_VENTA[doc.condicionVenta] ?? doc.condicionVenta;
  kv('Condición de venta', doc.plazoCredito ? `${condicion} (${doc.plazoCredito} días)` : condicion);
  const medios = doc.mediosPago.map((m) => (m.tipoMedioPago ? (MEDIOS_PAGO[m.tipoMedioPago] ?? m.tipoMedioPago) : m.medioPagoOtros ?? '')).filter(Boolean);
  if (medios.length > 0) kv('Medio de pago', medios.join(', '));
  kv('Moneda', moneda === 'CRC' ? 'CRC (colón costarricense, ₡)' : `${moneda} (tipo de cambio ${doc.resumen.tipoCambio})`);
  const estado = estadoLabel(row.state);
  pdf.font('bold').fontSize(10).fillColor(row.state === 'aceptado' ? '#0a6b2d' : row.state === 'rechazado' || row.state === 'error' ? '#a11616' : '#8a5a00');
  pdf.text(`Estado en Hacienda: ${estado}`, M, undefined, { width: headWidth });
  pdf.fillColor(INK);
  let y = Math.max(pdf.y, M + qrSize) + 10;

  // --- Parties -------------------------------------------------------------------------------------
  const colW = (contentWidth - 16) / 2;
  const partyBlock = (title: string, p: Party | undefined, x: number, top: number): number => {
    pdf.font('bold').fontSize(9).fillColor(MUTED).text(title, x, top, { width: colW });
    pdf.fillColor(INK);
    if (!p) {
      pdf.font('body').fontSize(9).text('Sin receptor identificado', x, undefined, { width: colW });
      return pdf.y;
    }
    pdf.font('bold').fontSize(10).text(p.nombre, x, undefined, { width: colW });
    pdf.font('body').fontSize(8.5);
    if (p.nombreComercial && p.nombreComercial !== p.nombre) pdf.text(p.nombreComercial, x, undefined, { width: colW });
    if (p.identificacion) pdf.text(p.identificacion, x, undefined, { width: colW });
    if (p.telefono) pdf.text(`Tel. ${p.telefono}`, x, undefined, { width: colW });
    if (p.correo) pdf.text(p.correo, x, undefined, { width: colW });
    if (p.direccion) pdf.text(p.direccion, x, undefined, { width: colW });
    return pdf.y;
  };
  const yE = partyBlock('Emisor', emisor, M, y);
  const yR = partyBlock('Receptor', receptor, M + colW + 16, y);
  y = Math.max(yE, yR) + 10;
  pdf.moveTo(M, y).lineTo(A4.width - M, y).strokeColor(RULE).lineWidth(0.5).stroke();
  y += 6;

  // --- Lines ---------------------------------------------------------------------------------------
  const cols = [
    { title: 'Código', w: 70, align: 'left' as const },
    { title: 'Detalle', w: 0, align: 'left' as const },
    { title: 'Cant.', w: 38, align: 'right' as const },
    { title: 'Precio unit.', w: 64, align: 'right' as const },
    { title: 'Descuento', w: 56, align: 'right' as const },
    { title: 'Impuesto', w: 62, align: 'right' as const },
    { title: 'Total línea', w: 70, align: 'right' as const },
  ];
  const fixed = cols.reduce((s, c) => s + c.w, 0);
  cols[1]!.w = contentWidth - fixed - 6 * 4;
  const bottom = A4.height - M;
  const drawRow = (cells: string[], font: 'body' | 'bold', size: number): void => {
    pdf.font(font).fontSize(size);
    const h = Math.max(...cells.map((c, i) => pdf.heightOfString(c, { width: cols[i]!.w }))) + 4;
    if (y + h > bottom) {
      pdf.addPage();
      y = M;
      if (font === 'body') drawHeader();
      pdf.font(font).fontSize(size);
    }
    let x = M;
    cells.forEach((c, i) => {
      pdf.text(c, x, y + 2, { width: cols[i]!.w, align: cols[i]!.align });
      x += cols[i]!.w + 4;
    });
    y += h;
  };
  const drawHeader = (): void => {
    pdf.fillColor(MUTED);
    drawRow(
      cols.map((c) => c.title),
      'bold',
      7.5,
    );
    pdf.fillColor(INK);
    pdf.moveTo(M, y).lineTo(A4.width - M, y).strokeColor(RULE).lineWidth(0.5).stroke();
  };
  drawHeader();
  for (const l of doc.lineas) {
    const descuento = l.descuentos.reduce((s, d) => s.plus(dec(d.montoDescuento)), dec(0));
    const impuesto = l.impuestoNeto ?? l.impuestos.reduce((s, i) => s.plus(dec(i.monto)), dec(0)).toString();
    const tarifas = l.impuestos.map((i) => (i.tarifa !== undefined ? `${dec(i.tarifa).toString()} %` : '')).filter(Boolean);
    drawRow(
      [
        l.codigoCABYS ?? l.partidaArancelaria ?? l.codigoComercial[0]?.codigo ?? '',
        l.detalle,
        `${l.cantidad ?? ''}${l.unidadMedida ? ` ${l.unidadMedida}` : ''}`,
        formatAmount(l.precioUnitario),
        formatAmount(descuento.toString()),
        `${formatAmount(impuesto)}${tarifas.length > 0 ? `\n(${tarifas.join(', ')})` : ''}`,
        formatAmount(l.montoTotalLinea),
      ],
      'body',
      7.5,
    );
  }
  pdf.moveTo(M, y).lineTo(A4.width - M, y).strokeColor(RULE).lineWidth(0.5).stroke();
  y += 8;

  // --- Other charges and references ------------------------------------------------------------------
  const note = (title: string, lines: string[]): void => {
    if (lines.length === 0) return;
    pdf.font('bold').fontSize(8.5).fillColor(MUTED);
    const h = pdf.heightOfString(title) + lines.reduce((s, t) => s + pdf.heightOfString(t, { width: contentWidth }), 0) + 6;
    if (y + h > bottom) {
      pdf.addPage();
      y = M;
    }
    pdf.text(title, M, y, { width: contentWidth });
    pdf.font('body').fillColor(INK);
    for (const t of lines) pdf.text(t, M, undefined, { width: contentWidth });
    y = pdf.y + 6;
  };
  note(
    'Otros cargos',
    doc.otrosCargos.map((o) => `${o.detalle}${o.porcentaje ? ` (${o.porcentaje} %)` : ''}: ${cur}${formatAmount(o.montoCargo)}`),
  );
  note(
    'Información de referencia',
    doc.informacionReferencia.map(
      (r) =>
        `${TIPOS_DOC_REFERENCIA[r.tipoDocIR] ?? r.tipoDocIR}${r.numero ? ` ${r.numero}` : ''} del ${formatFecha(r.fechaEmisionIR)}` +
        (r.razon ? `: ${r.razon}` : ''),
    ),
  );

  // --- Totals --------------------------------------------------------------------------------------
  const totals: [string, string | undefined, boolean][] = [
    ['Total venta', doc.resumen.totalVenta, false],
    ['Total descuentos', doc.resumen.totalDescuentos ?? '0', false],
    ['Total venta neta', doc.resumen.totalVentaNeta, false],
    ['Total impuesto', doc.resumen.totalImpuesto ?? '0', false],
    ['Total otros cargos', doc.resumen.totalOtrosCargos ?? '0', false],
    ['Total comprobante', doc.resumen.totalComprobante, true],
  ];
  const boxW = 250;
  const boxX = A4.width - M - boxW;
  if (y + totals.length * 15 + 10 > bottom) {
    pdf.addPage();
    y = M;
  }
  for (const [label, value, strong] of totals) {
    pdf.font(strong ? 'bold' : 'body').fontSize(strong ? 11 : 9).fillColor(INK);
    pdf.text(label, boxX, y, { width: 120 });
    pdf.text(`${cur}${formatAmount(value)}`, boxX + 120, y, { width: boxW - 120, align: 'right' });
    y += strong ? 17 : 14;
  }
  y += 8;

  // --- Hacienda's answer and footer --------------------------------------------------------------------
  if (row.state === 'rechazado' || row.state === 'error') {
    const detalle = (row.detalle_mensaje ?? '').trim();
    if (detalle) note('Detalle de Hacienda', [detalle.length > 1500 ? `${detalle.slice(0, 1500)}…` : detalle]);
  }
  pdf.font('body').fontSize(7).fillColor(MUTED);
  const footer = `Representación gráfica del comprobante electrónico, versión 4.4. Estado en Hacienda: ${estado}. Clave ${doc.clave}.`;
  if (y + 20 > bottom) {
    pdf.addPage();
    y = M;
  }
  pdf.text(footer, M, y, { width: contentWidth });
  pdf.end();
  await ended;
  const out = Buffer.concat(chunks);
  ctx?.logger.debug({ clave: doc.clave, bytes: out.length }, 'PDF rendered');
  return out;
}
