/**
 * What the receptor's mail says: subject and body in Spanish (the kind, consecutivo, issuer and total, e.g.
 * "Factura electrónica 00100001010000000042 de ACME S.A. — ₡123 456,78", money by the PDF's formatter,
 * src/core/money-format.ts), a text and an HTML part, and three attachments named as `fecr download` names the files
 * (src/core/file-names.ts, the ANEXOS' names): `<clave>.xml` (the signed comprobante, as stored), `<clave>.pdf` (the
 * representación gráfica) and `<clave>_respuesta.xml` (Hacienda's MensajeHacienda, as stored).
 */
import { documentFileName } from '../../core/file-names.js';
import { formatMoney } from '../../core/money-format.js';
import type { DocumentKind } from '../../core/model.js';
import type { DocumentRow } from '../../store/schema.js';
import { formatDia, PDF_TITLES } from '../pdf-content.js';

/** `Factura Electrónica` → `Factura electrónica` (the kind as a sentence says it). */
export function kindLabel(kind: string): string {
  const title = PDF_TITLES[kind as DocumentKind] ?? `Comprobante electrónico ${kind}`;
  return title.charAt(0) + title.slice(1).toLowerCase();
}

/** The composed mail, before its MIME bytes are built (email-render.ts). */
export interface OutgoingMail {
  from: { name: string; address: string };
  replyTo?: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** RFC 5322 Message-ID with its angle brackets. */
  messageId: string;
  date: Date;
  attachments: { filename: string; content: Buffer; contentType: string }[];
  /** Base name of the outbox file (without `.eml`). */
  outboxName: string;
}

export interface MailDocument extends Pick<DocumentRow, 'clave' | 'kind' | 'fecha_emision' | 'total_comprobante' | 'moneda' | 'receptor_nombre' | 'xml'> {
  response_xml: string;
}

export interface ComposeInput {
  doc: MailDocument;
  pdf: Buffer;
  issuerName: string;
  from: { name: string; address: string };
  replyTo?: string;
  to: string[];
  messageId: string;
  date: Date;
  outboxName: string;
}

export function subjectOf(doc: Pick<MailDocument, 'clave' | 'kind' | 'total_comprobante' | 'moneda'>, issuerName: string): string {
  return `${kindLabel(doc.kind)} ${consecutivoOf(doc.clave)} de ${issuerName} — ${formatMoney(doc.total_comprobante, doc.moneda)}`;
}

/** Clave positions 22–41 are the NumeroConsecutivo. */
export function consecutivoOf(clave: string): string {
  return clave.slice(21, 41);
}

export function attachmentNames(clave: string): { xml: string; pdf: string; respuesta: string } {
  return { xml: documentFileName(clave, 'XML'), pdf: documentFileName(clave, 'PDF'), respuesta: documentFileName(clave, 'RESPUESTA') };
}

export function composeMail(input: ComposeInput): OutgoingMail {
  const { doc, issuerName } = input;
  const kind = kindLabel(doc.kind);
  const consecutivo = consecutivoOf(doc.clave);
  const total = formatMoney(doc.total_comprobante, doc.moneda);
  const fecha = formatDia(doc.fecha_emision);
  const names = attachmentNames(doc.clave);
  const saludo = doc.receptor_nombre ? `Estimado(a) ${doc.receptor_nombre}:` : 'Estimado(a) cliente:';
  const intro = `${issuerName} le envía la ${kind.toLowerCase()} ${consecutivo} del ${fecha}, por un total de ${total}, aceptada por el Ministerio de Hacienda.`;
  const files: [string, string][] = [
    [names.xml, 'el comprobante electrónico firmado (XML)'],
    [names.pdf, 'su representación gráfica (PDF)'],
    [names.respuesta, 'el mensaje de aceptación del Ministerio de Hacienda (XML)'],
  ];
  const text = [
    saludo,
    '',
    intro,
    '',
    `Clave numérica: ${doc.clave}`,
    '',
    'Archivos adjuntos:',
    ...files.map(([f, what]) => `- ${f}: ${what}`),
    '',
    'Conserve estos archivos: el XML firmado y el mensaje de Hacienda son los que tienen validez tributaria.',
    '',
    `Este correo fue enviado automáticamente en nombre de ${issuerName}.`,
    '',
  ].join('\n');
  const html = [
    '<!DOCTYPE html>',
    '<html lang="es"><head><meta charset="utf-8"><title>' + esc(subjectOf(doc, issuerName)) + '</title></head>',
    '<body style="font-family: sans-serif; color: #222;">',
    `<p>${esc(saludo)}</p>`,
    `<p>${esc(intro)}</p>`,
    `<p>Clave numérica: <code>${esc(doc.clave)}</code></p>`,
    '<p>Archivos adjuntos:</p>',
    '<ul>',
    ...files.map(([f, what]) => `<li><code>${esc(f)}</code>: ${esc(what)}</li>`),
    '</ul>',
    '<p>Conserve estos archivos: el XML firmado y el mensaje de Hacienda son los que tienen validez tributaria.</p>',
    `<p style="color: #777; font-size: smaller;">Este correo fue enviado automáticamente en nombre de ${esc(issuerName)}.</p>`,
    '</body></html>',
    '',
  ].join('\n');
  return {
    from: input.from,
    ...(input.replyTo ? { replyTo: input.replyTo } : {}),
    to: input.to,
    subject: subjectOf(doc, issuerName),
    text,
    html,
    messageId: input.messageId,
    date: input.date,
    attachments: [
      { filename: names.xml, content: Buffer.from(doc.xml, 'utf8'), contentType: 'application/xml' },
      { filename: names.pdf, content: input.pdf, contentType: 'application/pdf' },
      { filename: names.respuesta, content: Buffer.from(doc.response_xml, 'utf8'), contentType: 'application/xml' },
    ],
    outboxName: input.outboxName,
  };
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
