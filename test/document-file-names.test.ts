// The mail's attachments and `fecr download`'s files have the same names, the ANEXOS v4.4 ones (p.66-67):
// clave.xml, clave.pdf, clave_respuesta.xml (the mail said `clave-respuesta.xml` before issue 27).
import { describe, expect, it } from 'vitest';
import { defaultFileName } from '../src/commands/download/run.js';
import { composeMail } from '../src/service/delivery/email-message.js';

const CLAVE = '50601012600310112345600100001010000000042100000042';

describe('document file names', () => {
  it('the mail attaches each file under the name fecr download saves it as', () => {
    const mail = composeMail({
      doc: { clave: CLAVE, kind: 'FE', fecha_emision: '2026-01-01T10:00:00-06:00', total_comprobante: '1234567.891', moneda: 'CRC', receptor_nombre: 'X', xml: '<a/>', response_xml: '<b/>' },
      pdf: Buffer.from('%PDF'),
      issuerName: 'ACME',
      from: { name: 'ACME', address: 'a@example.com' },
      to: ['b@example.com'],
      messageId: '<m@example.com>',
      date: new Date(0),
      outboxName: 'x',
    });
    expect(mail.attachments.map((a) => a.filename)).toEqual([defaultFileName(CLAVE, 'XML'), defaultFileName(CLAVE, 'PDF'), defaultFileName(CLAVE, 'RESPUESTA')]);
    expect(defaultFileName(CLAVE, 'RESPUESTA')).toBe(`${CLAVE}_respuesta.xml`);
    expect(mail.text).toContain(`- ${CLAVE}_respuesta.xml:`);
    // The mail's money is the PDF's: ₡1 234 567,89 (no-break spaces).
    expect(mail.subject).toContain('₡1\u00a0234\u00a0567,89');
    expect(mail.text).toContain('por un total de ₡1\u00a0234\u00a0567,89');
  });
});
