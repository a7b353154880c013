/**
 * The PDF "representación gráfica" of a stored document: title by kind, issuer, receiver, clave, consecutivo,
 * fecha de emisión, moneda and tipo de cambio, the parties (with the issuer's location and economic activity), lines
 * (code, detail, quantity, unit price, discount, net tax, line total; under an exonerated line its exoneración),
 * other charges, references, totals (with the non-zero gravado/exento/exonerado/no sujeto subtotals), a QR code of
 * the clave and the state of Hacienda's decision. Every figure is read from the signed XML (never from the request
 * body), so the PDF shows exactly what was sent to Hacienda. Money is printed by the one formatter the mail uses too
 * (src/core/money-format.ts, the es-CR convention: `₡1 234 567,89`, `US$2 245,86`), exactly 2 decimals rounded
 * half-up from the XML's 5; quantities, rates and percentages keep their own precision. The summary shows the tax of
 * each tarifa (`IVA 13 %`, `IVA 4 %`) and, on a foreign-currency document, its total in colones (total × tipo de
 * cambio). pdfkit with DejaVu Sans (draws ₡).
 */
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import { CONDICIONES_VENTA, CONDICIONES_VENTA_REP, MEDIOS_PAGO, TIPOS_DOC_REFERENCIA } from '../core/codes.js';
import { dec } from '../core/money.js';
import { formatMoney, inColones } from '../core/money-format.js';
import { parseComprobanteXml } from '../core/xml/parse-comprobante.js';
import { parseXmlRoot } from '../core/xml/raw-document.js';
import { keepParsedFonts, PDF_DOCUMENT_FONT, registerFonts } from './pdf-fonts.js';
import type { DocumentRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import {
  MONEDA_NAMES,
  PDF_TITLES,
  type Party,
  currencySymbol,
  desgloseRows,
  detalleLines,
  estadoLabel,
  exoneracionLines,
  formatAmount,
  formatFecha,
  formatNumber,
  formatRate,
  institucionesOtros,
  isNonZero,
  parties,
  lineCells,
  lineColumnTitles,
  PARTY_TITLES,
} from './pdf-content.js';

const A4 = { width: 595.28, height: 841.89 };
const M = 36; // margin
const INK = '#111111';
const MUTED = '#555555';
const RULE = '#999999';
const SHADE = '#f1f1f1';

/**
 * The clave's QR code as vector squares (a white square, a quiet zone of one module, then each row's runs of dark
 * modules as rectangles of one path, filled black at once: no seams). Was a PNG (qrcode's PNG encoder, then pdfkit's
 * PNG decoder): ≈ 3 ms of every PDF, and blurry when zoomed.
 */
export function drawQr(pdf: PDFKit.PDFDocument, modules: { size: number; get(row: number, col: number): number | boolean }, x: number, y: number, side: number): void {
  const n = modules.size;
  const cell = side / (n + 2);
  pdf.save();
  pdf.rect(x, y, side, side).fill('#ffffff');
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; ) {
      if (!modules.get(r, c)) {
        c++;
        continue;
      }
      const start = c;
      while (c < n && modules.get(r, c)) c++;
      pdf.rect(x + (start + 1) * cell, y + (r + 1) * cell, (c - start) * cell, cell);
    }
  }
  pdf.fill('#000000');
  pdf.restore();
}

/**
 * Gets this thread ready for its first PDF without a document: pdfkit, qrcode and the fonts loaded, the fonts parsed
 * and kept (pdf-fonts.ts) in the order renderPdf opens them (bold for the title, then body: the same font ids as a PDF
 * rendered first). No text is laid out: fontkit keeps each glyph as the first text that used it made it, and a glyph
 * first made by other text than the document's can lose its Unicode mapping (copied text would then miss letters),
 * so the first document lays out its own words as in a fresh process. A throwaway document; nothing is written.
 */
export async function warmPdfRendering(): Promise<void> {
  const pdf = new PDFDocument({ size: 'A4', compress: true, ...PDF_DOCUMENT_FONT });
  registerFonts(pdf);
  const ended = new Promise<void>((resolve, reject) => {
    pdf.on('end', resolve);
    pdf.on('error', reject);
  });
  pdf.on('data', () => undefined);
  pdf.font('bold');
  pdf.font('body');
  QRCode.create('5'.repeat(50), { errorCorrectionLevel: 'M' });
  keepParsedFonts(pdf);
  pdf.end();
  await ended;
}

/**
 * Renders the PDF of a stored document row (needs `xml`, `state`, `kind`, `clave`; `detalle_mensaje` for rejections).
 * `ctx` is only used for logging. The same row gives the same bytes: the PDF's CreationDate is the verdict's time
 * (else the row's creation), not the clock, so the PDF mailed to the receptor is the one `/api/consultar/archivo` returns.
 */
export async function renderPdf(ctx: Pick<ServiceContext, 'logger'> | undefined, row: Pick<DocumentRow, 'xml' | 'state' | 'clave'> & Partial<DocumentRow>): Promise<Buffer> {
  const doc = parseComprobanteXml(row.xml);
  const rawBody = parseXmlRoot(row.xml).body;
  const { emisor, receptor } = parties(rawBody, doc);
  const otrosInstitucion = institucionesOtros(rawBody);
  const qr = QRCode.create(doc.clave, { errorCorrectionLevel: 'M' }).modules;
  const pdf = new PDFDocument({
    size: 'A4',
    margins: { top: M, bottom: M, left: M, right: M },
    info: {
      Title: `${PDF_TITLES[doc.kind]} ${doc.numeroConsecutivo}`,
      Author: doc.emisor.nombre,
      Subject: doc.clave,
      Creator: 'fecr',
      CreationDate: new Date(Number(row.decided_at ?? row.created_at ?? Date.parse(doc.fechaEmision))),
    },
    compress: true,
    ...PDF_DOCUMENT_FONT,
  });
  // DejaVu Sans, parsed once per process (pdf-fonts.ts).
  registerFonts(pdf);
  const chunks: Buffer[] = [];
  pdf.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    pdf.on('end', resolve);
    pdf.on('error', reject);
  });

  const contentWidth = A4.width - 2 * M;
  const moneda = doc.resumen.codigoMoneda || 'CRC';
  const cur = currencySymbol(moneda);
  const money = (v: string | undefined): string => formatMoney(v, moneda);

  // --- Header: title, numbers, QR ----------------------------------------------------------------
  const qrSize = 96;
  drawQr(pdf, qr, A4.width - M - qrSize, M, qrSize);
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
  const condicion = CONDICIONES_VENTA[doc.condicionVenta] ?? CONDICIONES_VENTA_REP[doc.condicionVenta] ?? doc.condicionVenta;
  kv('Condición de venta', doc.plazoCredito ? `${condicion} (${doc.plazoCredito} días)` : condicion);
  const medios = doc.mediosPago.map((m) => (m.tipoMedioPago ? (MEDIOS_PAGO[m.tipoMedioPago] ?? m.tipoMedioPago) : m.medioPagoOtros ?? '')).filter(Boolean);
  if (medios.length > 0) kv('Medio de pago', medios.join(', '));
  const monedaName = MONEDA_NAMES[moneda];
  kv('Moneda', monedaName ? `${moneda} (${monedaName}, ${cur.trim()})` : moneda);
  if (moneda !== 'CRC') kv('Tipo de cambio', `₡${formatRate(doc.resumen.tipoCambio)} por ${cur}1`);
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
    if (p.actividad) pdf.text(`Actividad económica: ${p.actividad}`, x, undefined, { width: colW });
    if (p.telefono) pdf.text(`Tel. ${p.telefono}`, x, undefined, { width: colW });
    if (p.correo) pdf.text(p.correo, x, undefined, { width: colW });
    if (p.ubicacion) pdf.text(p.ubicacion, x, undefined, { width: colW });
    if (p.direccion) pdf.text(p.direccion, x, undefined, { width: colW });
    return pdf.y;
  };
  const [emisorTitle, receptorTitle] = PARTY_TITLES[doc.kind];
  const yE = partyBlock(emisorTitle, emisor, M, y);
  const yR = partyBlock(receptorTitle, receptor, M + colW + 16, y);
  y = Math.max(yE, yR) + 10;
  pdf.moveTo(M, y).lineTo(A4.width - M, y).strokeColor(RULE).lineWidth(0.5).stroke();
  y += 6;

  // --- Lines ---------------------------------------------------------------------------------------
  const cols = [
    { title: 'Código', w: 70, align: 'left' as const },
    { title: 'Detalle', w: 0, align: 'left' as const },
    { title: lineColumnTitles(doc.kind).cantidad, w: 38, align: 'right' as const },
    { title: lineColumnTitles(doc.kind).precio, w: 64, align: 'right' as const },
    { title: 'Descuento', w: 56, align: 'right' as const },
    { title: 'Impuesto', w: 62, align: 'right' as const },
    { title: 'Total línea', w: 70, align: 'right' as const },
  ];
  const fixed = cols.reduce((s, c) => s + c.w, 0);
  cols[1]!.w = contentWidth - fixed - 6 * 4;
  const bottom = A4.height - M;
  /** Draws a table row; `keepWith` is the height that must fit on the same page below it (its exoneración). */
  const drawRow = (cells: string[], font: 'body' | 'bold', size: number, keepWith = 0): void => {
    pdf.font(font).fontSize(size);
    const h = Math.max(...cells.map((c, i) => pdf.heightOfString(c, { width: cols[i]!.w }))) + 4;
    if (y + h + keepWith > bottom) {
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
  // The exoneración sits under the line, from the Detalle column to the right edge, on a shaded band.
  const exoX = M + cols[0]!.w + 4;
  const exoW = A4.width - M - exoX;
  const EXO_SIZE = 7;
  const EXO_PAD = 3;
  drawHeader();
  doc.lineas.forEach((l, li) => {
    const descuento = l.descuentos.reduce((s, d) => s.plus(dec(d.montoDescuento)), dec(0));
    const impuesto =
      l.impuestoNeto ?? l.impuestos.reduce((s, i) => s.plus(dec(i.monto)).minus(dec(i.exoneracion?.montoExoneracion ?? '0')), dec(0)).toString();
    const tarifas = l.impuestos.map((i) => (i.tarifa !== undefined ? `${formatNumber(i.tarifa)} %` : '')).filter(Boolean);
    const exoneradas = l.impuestos.flatMap((imp, ii) => (imp.exoneracion ? [{ imp, x: imp.exoneracion, otros: otrosInstitucion[li]?.[ii] }] : []));
    const exoText = exoneradas.map((e) => exoneracionLines(e.imp, e.x, e.otros, money, l.impuestos.length > 1).join('\n'));
    pdf.font('body').fontSize(EXO_SIZE);
    const exoHeights = exoText.map((t) => pdf.heightOfString(t, { width: exoW - 2 * EXO_PAD }) + 2 * EXO_PAD);
    const exoTotal = exoHeights.reduce((s, h) => s + h + 2, 0);
    const cell = lineCells(doc.kind, l);
    drawRow(
      [
        cell.codigo,
        cell.detalle,
        cell.cantidad,
        cell.precio,
        formatAmount(descuento.toString()),
        `${formatAmount(impuesto)}${tarifas.length > 0 ? `\n(${tarifas.join(', ')})` : ''}`,
        formatAmount(l.montoTotalLinea),
      ],
      'body',
      7.5,
      exoTotal,
    );
    exoText.forEach((t, i) => {
      const h = exoHeights[i]!;
      pdf.rect(exoX, y, exoW, h).fillColor(SHADE).fill();
      pdf.font('body').fontSize(EXO_SIZE).fillColor(INK).text(t, exoX + EXO_PAD, y + EXO_PAD, { width: exoW - 2 * EXO_PAD });
      y += h + 2;
    });
  });
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
    doc.otrosCargos.map((o) => `${o.detalle}${o.porcentaje ? ` (${formatNumber(o.porcentaje)} %)` : ''}: ${money(o.montoCargo)}`),
  );
  note(
    'Información de referencia',
    doc.informacionReferencia.map(
      (r) =>
        `${TIPOS_DOC_REFERENCIA[r.tipoDocIR] ?? r.tipoDocIR}${r.numero ? ` ${r.numero}` : ''} del ${formatFecha(r.fechaEmisionIR)}` +
        (r.razon ? `: ${r.razon}` : ''),
    ),
  );

  // --- Totals: the non-zero subtotals by kind on the left, the totals on the right -----------------------
  const r = doc.resumen;
  const subtotals = (
    [
      ['Total servicios gravados', r.totalServGravados],
      ['Total servicios exentos', r.totalServExentos],
      ['Total servicios exonerados', r.totalServExonerado],
      ['Total servicios no sujetos', r.totalServNoSujeto],
      ['Total mercancías gravadas', r.totalMercanciasGravadas],
      ['Total mercancías exentas', r.totalMercanciasExentas],
      ['Total mercancías exoneradas', r.totalMercExonerada],
      ['Total mercancías no sujetas', r.totalMercNoSujeta],
      ['Total gravado', r.totalGravado],
      ['Total exento', r.totalExento],
      ['Total exonerado', r.totalExonerado],
      ['Total no sujeto', r.totalNoSujeto],
    ] as [string, string | undefined][]
  ).filter((t): t is [string, string] => isNonZero(t[1]));
  // [label, value, strong, indented]: the tax of each tarifa under Total impuesto, indented.
  const totals: [string, string | undefined, boolean, boolean?][] = [
    ['Total venta', r.totalVenta, false],
    ['Total descuentos', r.totalDescuentos ?? '0', false],
    ['Total venta neta', r.totalVentaNeta, false],
    ['Total impuesto', r.totalImpuesto ?? '0', false],
    ...desgloseRows(r.totalDesgloseImpuesto).map(([label, value]): [string, string, boolean, boolean] => [label, value, false, true]),
  ];
  if (isNonZero(r.totalImpAsumEmisorFabrica)) totals.push(['Imp. asumido emisor', r.totalImpAsumEmisorFabrica, false]);
  if (isNonZero(r.totalIVADevuelto)) totals.push(['Total IVA devuelto', r.totalIVADevuelto, false]);
  totals.push(['Total otros cargos', r.totalOtrosCargos ?? '0', false], ['Total comprobante', r.totalComprobante, true]);
  const boxW = 250;
  const boxX = A4.width - M - boxW;
  const subW = boxX - M - 24;
  const needed = Math.max(14 * (totals.length - 1) + 17 + (moneda !== 'CRC' ? 24 : 0), subtotals.length > 0 ? 14 + 13 * subtotals.length : 0) + 2;
  if (y + needed > bottom) {
    pdf.addPage();
    y = M;
  }
  const top = y;
  let ySub = top;
  if (subtotals.length > 0) {
    pdf.font('bold').fontSize(8.5).fillColor(MUTED).text('Resumen por tipo de venta', M, ySub, { width: subW });
    ySub += 14;
    for (const [label, value] of subtotals) {
      pdf.font('body').fontSize(8.5).fillColor(INK);
      pdf.text(label, M, ySub, { width: subW - 100 });
      pdf.text(money(value), M + subW - 100, ySub, { width: 100, align: 'right' });
      ySub += 13;
    }
  }
  for (const [label, value, strong, indented] of totals) {
    pdf.font(strong ? 'bold' : 'body').fontSize(strong ? 11 : indented ? 8 : 9).fillColor(indented ? MUTED : INK);
    pdf.text(label, boxX + (indented ? 10 : 0), y, { width: 120 });
    pdf.text(money(value), boxX + 120, y, { width: boxW - 120, align: 'right' });
    y += strong ? 17 : indented ? 12 : 14;
  }
  // A foreign-currency document: its total in colones, at the document's tipo de cambio.
  const colones = moneda !== 'CRC' ? inColones(r.totalComprobante, r.tipoCambio) : undefined;
  if (colones !== undefined) {
    pdf.font('bold').fontSize(9).fillColor(INK);
    pdf.text('Total en colones', boxX, y, { width: 120 });
    pdf.text(formatMoney(colones, 'CRC'), boxX + 120, y, { width: boxW - 120, align: 'right' });
    y += 12;
    pdf.font('body').fontSize(7.5).fillColor(MUTED);
    pdf.text(`${money(r.totalComprobante)} × tipo de cambio ₡${formatRate(r.tipoCambio)}`, boxX, y, { width: boxW, align: 'right' });
    y += 12;
    pdf.fillColor(INK);
  }
  y = Math.max(y, ySub) + 8;

  // --- Hacienda's answer and footer --------------------------------------------------------------------
  if (row.state === 'rechazado' || row.state === 'error') {
    // Hacienda's text as text: its list one item a line, no control character (a CR would print as a box).
    note('Detalle de Hacienda', detalleLines(row.detalle_mensaje, false));
  }
  pdf.font('body').fontSize(7).fillColor(MUTED);
  const footer = `Representación gráfica del comprobante electrónico, versión 4.4. Estado en Hacienda: ${estado}. Clave ${doc.clave}.`;
  if (y + 20 > bottom) {
    pdf.addPage();
    y = M;
  }
  pdf.text(footer, M, y, { width: contentWidth });
  keepParsedFonts(pdf);
  pdf.end();
  await ended;
  const out = Buffer.concat(chunks);
  ctx?.logger.debug({ clave: doc.clave, bytes: out.length }, 'PDF rendered');
  return out;
}
