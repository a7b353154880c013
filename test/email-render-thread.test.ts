// The mail thread (src/service/delivery/email-render-pool.ts): a mail rendered on it is the mail rendered on the
// caller's thread (same PDF bytes, same parts); a mail that cannot be rendered is an error for that mail only (the
// thread goes on); a thread that cannot start leaves rendering to the caller's thread, which gives the same mail.
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailRenderThread, inlineMailRenderer } from '../src/service/delivery/email-render-pool.js';
import type { MailToRender } from '../src/service/delivery/email-render.js';
import { renderPdf } from '../src/service/pdf.js';
import type { DocumentRow } from '../src/store/schema.js';
import { issueSigned } from './helpers/issue.js';
import { fixtureBody } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';

let row: DocumentRow;
beforeAll(() => {
  const issuer = makeTestIssuer();
  const r = issueSigned({ ...fixtureBody('01-fe-servicios-13'), numeroReferencia: 77 }, issuer, new Date('2026-11-25T08:00:00-06:00'));
  row = {
    xml: r.xml,
    clave: r.doc.clave,
    state: 'aceptado',
    kind: 'FE',
    fecha_emision: r.doc.fechaEmision,
    total_comprobante: '105939.19500',
    moneda: 'CRC',
    receptor_nombre: 'DISTRIBUIDORA EL CAFETAL LIMITADA',
    response_xml: '<MensajeHacienda/>',
    decided_at: Date.parse('2026-11-25T08:00:05-06:00'),
    created_at: Date.parse('2026-11-25T08:00:00-06:00'),
  } as unknown as DocumentRow;
});

const mailOf = (r: DocumentRow): MailToRender => ({
  row: r,
  issuerName: 'SOFTWARE TICO SOCIEDAD ANONIMA',
  from: { name: 'SOFTWARE TICO', address: 'facturas@softwaretico.example.cr' },
  to: ['compras@elcafetal.example.cr'],
  messageId: `<${r.clave}.test@fecr.email>`,
  date: new Date('2026-11-25T08:00:00-06:00'),
  outboxName: `${r.clave}-1`,
});

describe('the mail thread', () => {
  const thread = new MailRenderThread(1);
  afterAll(() => thread.close());

  it('renders the mail the caller would: the same PDF bytes and parts, CRLF', async () => {
    thread.warm();
    const [onThread, inline] = await Promise.all([thread.render(mailOf(row)), inlineMailRenderer.render(mailOf(row))]);
    const [a, b] = await Promise.all([simpleParser(Buffer.from(onThread.raw)), simpleParser(Buffer.from(inline.raw))]);
    expect(a.subject).toBe(b.subject);
    expect(a.messageId).toBe(`<${row.clave}.test@fecr.email>`);
    expect(a.attachments.map((x) => x.filename)).toEqual([`${row.clave}.xml`, `${row.clave}.pdf`, `${row.clave}_respuesta.xml`]);
    const pdf = await renderPdf(undefined, row);
    expect(a.attachments[1]!.content.equals(pdf)).toBe(true);
    expect(b.attachments[1]!.content.equals(pdf)).toBe(true);
    expect(Buffer.from(onThread.raw).toString('latin1')).not.toMatch(/[^\r]\n/);
    expect(onThread.envelope).toEqual({ from: 'facturas@softwaretico.example.cr', to: ['compras@elcafetal.example.cr'] });
  });

  it('a row the PDF cannot show is that mail\'s error; the next mail renders on the thread', async () => {
    await expect(thread.render(mailOf({ ...row, xml: '<x/>' }))).rejects.toThrow(/unknown root element/);
    const again = await thread.render(mailOf(row));
    expect(again.outboxName).toBe(`${row.clave}-1`);
  });

  it('a thread that cannot start: the caller renders, the same mail, and the failure is reported once', async () => {
    const failures: unknown[] = [];
    // A worker module that does not exist: every start fails.
    const broken = new MailRenderThread(1, (e) => failures.push(e), new URL('./no-such-worker.js', import.meta.url).href);
    try {
      const out = await broken.render(mailOf(row));
      expect((await simpleParser(Buffer.from(out.raw))).attachments).toHaveLength(3);
      await broken.render(mailOf(row));
      expect(failures).toHaveLength(1);
    } finally {
      await broken.close();
    }
  });
});
