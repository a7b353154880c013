// Issue 30: the parts of the suppliers' mailbox that read hostile mail, on their own: the reason header cannot break
// the header block (CR/LF, non-ASCII, length), the XML attachments are taken by name or type with their limits, a
// MensajeHacienda is told apart, and mailparser reads back what was written.
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { buildMensajeHaciendaXml } from '../src/core/xml/mensaje.js';
import { headerValue, setAsideHeaders, withHeaders } from '../src/service/mailbox/headers.js';
import { MAX_XML_ATTACHMENTS, readMail, rootElementName } from '../src/service/mailbox/message.js';
import { parseMailRules, MailRulesError } from '../src/service/mailbox/rules.js';
import { supplierMail } from './helpers/supplier-mail.js';

describe('the set-aside header', () => {
  it('a reason with CR/LF cannot add a header; non-ASCII is encoded; long ones are cut', async () => {
    const raw = await supplierMail({ from: 'a@example.com', subject: 'Factura', attachments: [] });
    const evil = 'f.xml: bad\r\nX-Injected: yes\r\n\r\nbody';
    const out = withHeaders(raw, setAsideHeaders([evil, 'Año fiscal: señal ‮ rara', 'x'.repeat(2000)]));
    const parsed = await simpleParser(out);
    expect(parsed.headers.has('x-injected')).toBe(false);
    const values = parsed.headerLines.filter((h) => h.key === 'x-fecr-set-aside').map((h) => h.line);
    expect(values).toHaveLength(3);
    expect(values[0]).toBe('X-Fecr-Set-Aside: f.xml: bad X-Injected: yes body');
    expect(parsed.headers.get('subject')).toBe('Factura');
    // The encoded words (RFC 2047, UTF-8, base64) decode to the reason itself.
    const words = headerValue('Año fiscal: señal, una razón más larga que cuarenta y cinco bytes');
    expect(words).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=(\r\n =\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=)+$/);
    for (const w of words.split('\r\n ')) expect(w.length).toBeLessThanOrEqual(75);
    const decoded = [...words.matchAll(/=\?UTF-8\?B\?([^?]+)\?=/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8')).join('');
    expect(decoded).toBe('Año fiscal: señal, una razón más larga que cuarenta y cinco bytes');
    expect(headerValue('x'.repeat(2000)).length).toBeLessThanOrEqual(400);
    for (const line of out.toString('utf8').split('\r\n\r\n')[0]!.split('\r\n')) expect(line.length).toBeLessThan(1000);
  });

  it('more than ten reasons: ten and a count', () => {
    const h = setAsideHeaders(Array.from({ length: 13 }, (_, i) => `r${i}`));
    expect(h.trimEnd().split('\r\n')).toHaveLength(11);
    expect(h).toContain('X-Fecr-Set-Aside: and 3 more\r\n');
  });
});

describe('readMail', () => {
  const mh = (clave: string) =>
    Buffer.from(buildMensajeHaciendaXml({ clave, nombreEmisor: 'P', tipoIdentificacionEmisor: '02', numeroCedulaEmisor: '3101987654', mensaje: 1, detalleMensaje: 'Aceptado', totalFactura: '1' }));

  it('takes XML attachments by name or type, tells a MensajeHacienda apart, ignores the rest', async () => {
    const clave = '5'.repeat(50);
    const raw = await supplierMail({
      from: 'a@example.com',
      subject: 'x',
      attachments: [
        { filename: 'factura.XML', content: Buffer.from('<FacturaElectronica/>'), contentType: 'application/octet-stream' },
        { filename: 'sin-extension', content: Buffer.from('<NotaCreditoElectronica/>'), contentType: 'text/xml' },
        { filename: 'respuesta.xml', content: mh(clave) },
        { filename: 'factura.pdf', content: Buffer.from('%PDF-1.4'), contentType: 'application/pdf' },
      ],
    });
    const m = await readMail(raw, 4096);
    expect(m.comprobantes.map((a) => a.name)).toEqual(['factura.XML', 'sin-extension']);
    expect(m.answers).toEqual([{ name: 'respuesta.xml', clave, mensaje: 1 }]);
    expect(m.from).toBe('a@example.com');
  });

  it('an attachment over the limit keeps its first limit + 1 bytes and its size; past 20 XML attachments, a note', async () => {
    const big = Buffer.from(`<FacturaElectronica>${'x'.repeat(10_000)}</FacturaElectronica>`);
    const many = Array.from({ length: MAX_XML_ATTACHMENTS + 2 }, (_, i) => ({ filename: `f${i}.xml`, content: i === 0 ? big : Buffer.from('<a/>') }));
    const m = await readMail(await supplierMail({ from: 'a@example.com', subject: 'x', attachments: many }), 4096);
    expect(m.comprobantes).toHaveLength(MAX_XML_ATTACHMENTS);
    expect(m.comprobantes[0]!.bytes.length).toBe(4097);
    expect(m.comprobantes[0]!.size).toBe(big.length);
    expect(m.notes).toEqual([`f20.xml: more than ${MAX_XML_ATTACHMENTS} XML attachments in one mail: ignored`, `f21.xml: more than ${MAX_XML_ATTACHMENTS} XML attachments in one mail: ignored`]);
  });

  it('rootElementName skips a BOM, the declaration, comments and a DOCTYPE', () => {
    expect(rootElementName(Buffer.from('\uFEFF<?xml version="1.0"?>\n<!-- c -->\n<!DOCTYPE x>\n<ns:MensajeHacienda xmlns:ns="u"/>'))).toBe('MensajeHacienda');
    expect(rootElementName(Buffer.from('not xml'))).toBe('');
  });
});

describe('the rules file', () => {
  it('per supplier, leading zeros ignored; the default holds', () => {
    const r = parseMailRules({ default: 'hold', suppliers: { '003101987654': 'accept', '4000001021': { action: 'accept', condicionImpuesto: '04' } } });
    expect(r.ruleFor('3101987654')).toEqual({ action: 'accept' });
    expect(r.ruleFor('004000001021')).toEqual({ action: 'accept', condicionImpuesto: '04' });
    expect(r.ruleFor('114560789')).toEqual({ action: 'hold' });
    expect(r.ruleFor(null)).toEqual({ action: 'hold' });
    expect(parseMailRules({ default: 'accept' }).ruleFor('1')).toEqual({ action: 'accept' });
  });

  it('refused whole with one finding per problem', () => {
    try {
      parseMailRules({ suppliers: { '3101987654': 'reject' }, default: { action: 'accept', ivaAcreditable: '1' } });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(MailRulesError);
      expect((e as MailRulesError).findings.map((f) => f.path)).toEqual(['default', 'suppliers.3101987654']);
    }
  });
});
