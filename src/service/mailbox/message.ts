/**
 * One supplier's mail, read without trusting it (issue 30): the raw message is parsed by mailparser only when it is
 * under the mail size limit (MAIL_MAX_BYTES), and what fecr takes from it is its XML attachments, at most
 * MAX_XML_ATTACHMENTS of them, each at most the received-comprobante limit + 1 bytes (a longer one goes on with its
 * size and is refused by the import unread, as `fecr recibidos import` does for a file). An attachment's name is
 * only ever shown (through the sanitiser) and never used as a path: nothing of a mail is written under its own name.
 *
 * Hacienda's answer (a MensajeHacienda XML, which suppliers attach beside the comprobante) is recognised by its root
 * element and kept apart: it is not a comprobante, so it is neither imported nor a reason to set the mail aside. The
 * state of the comprobante is asked of Hacienda itself on import (service/recibidos/import.ts keeps the
 * MensajeHacienda Hacienda answers); an attached copy is the supplier's word and is only compared with it.
 */
import { simpleParser } from 'mailparser';
import { parseMensajeHaciendaXml } from '../../core/xml/parse-mensaje.js';

/** A mail over this size is set aside unparsed (25 MiB: the common limit of mail servers for one message). */
export const MAIL_MAX_BYTES = 25 * 1024 * 1024;
/** XML attachments taken from one mail; the rest are named in a finding and ignored. */
export const MAX_XML_ATTACHMENTS = 20;

export interface MailAttachment {
  /** The attachment's file name as the mail gives it (or `part-N`): for display only, through the sanitiser. */
  name: string;
  bytes: Buffer;
  /** Its size when `bytes` hold only its first limit + 1 bytes. */
  size?: number;
}

export interface AttachedAnswer {
  name: string;
  clave: string;
  /** MensajeHacienda's Mensaje: 1 aceptado, 3 rechazado. */
  mensaje: 1 | 2 | 3;
}

export interface ReadMail {
  messageId: string | null;
  from: string | null;
  subject: string | null;
  comprobantes: MailAttachment[];
  answers: AttachedAnswer[];
  /** What was ignored or could not be read, one line each (shown with the mail's outcome). */
  notes: string[];
}

const isXmlName = (name: string) => /\.xml$/i.test(name.trim());
const isXmlType = (type: string) => /^(application|text)\/([\w.+-]+\+)?xml\b/i.test(type.trim());

/** The root element's local name of an XML text, or '' (a BOM, the declaration, comments and a DOCTYPE skipped). */
export function rootElementName(bytes: Buffer): string {
  const head = bytes.subarray(0, 4096).toString('utf8').replace(/^\uFEFF/, '');
  const m = /^\s*(?:<\?[\s\S]*?\?>\s*|<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(head);
  return m?.[2] ?? '';
}

/** Parses a raw mail (at most MAIL_MAX_BYTES: the caller checks) into its XML attachments. Throws when it cannot be parsed. */
export async function readMail(raw: Buffer, attachmentMaxBytes: number): Promise<ReadMail> {
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, maxHtmlLengthToParse: 1024 * 1024 });
  const out: ReadMail = {
    messageId: parsed.messageId ?? null,
    from: parsed.from?.value?.[0]?.address ?? parsed.from?.text ?? null,
    subject: parsed.subject ?? null,
    comprobantes: [],
    answers: [],
    notes: [],
  };
  let n = 0;
  for (const a of parsed.attachments) {
    n++;
    const name = a.filename?.trim() || `part-${n}`;
    if (!isXmlName(name) && !isXmlType(a.contentType ?? '')) continue;
    if (out.comprobantes.length + out.answers.length >= MAX_XML_ATTACHMENTS) {
      out.notes.push(`${name}: more than ${MAX_XML_ATTACHMENTS} XML attachments in one mail: ignored`);
      continue;
    }
    const content = a.content;
    const bytes = content.length > attachmentMaxBytes ? content.subarray(0, attachmentMaxBytes + 1) : content;
    const file: MailAttachment = { name, bytes, ...(content.length > attachmentMaxBytes ? { size: content.length } : {}) };
    if (rootElementName(bytes) === 'MensajeHacienda' && !file.size) {
      try {
        const m = parseMensajeHaciendaXml(bytes.toString('utf8'));
        out.answers.push({ name, clave: m.clave, mensaje: m.mensaje });
        continue;
      } catch {
        // Not a MensajeHacienda that can be read: imported as any XML, and refused there with the reason.
      }
    }
    out.comprobantes.push(file);
  }
  return out;
}
