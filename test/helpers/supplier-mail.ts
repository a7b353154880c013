// Suppliers' mails for the mailbox tests (issue 30): genuine invoices issued by the emulator's test suppliers (signed
// under fecr's test CA, accepted by the emulator, so Hacienda knows them), tampered copies, and the MIME message of a
// mail built by nodemailer's stream transport (what an SMTP server would deliver).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { startEmulator } from '../../src/emulator/index.js';

export interface IssuedInvoice {
  clave: string;
  proveedor: string;
  xml: Buffer;
  respuesta?: Buffer;
}

/**
 * Issues `count` invoices of each supplier to the buyer in the embedded emulator of `dataDir` (its state in
 * emulator.db there, as the CLI's local mode keeps it), waiting until the emulator has decided them.
 */
export async function issueSupplierInvoices(dataDir: string, buyer: { tipo: string; numero: string; nombre?: string }, perSupplier: Record<string, number>): Promise<IssuedInvoice[]> {
  mkdirSync(dataDir, { recursive: true });
  const emu = await startEmulator({ dataFile: join(dataDir, 'emulator.db'), processingDelayMs: 5, validationThreads: 0 });
  try {
    const out: IssuedInvoice[] = [];
    for (const [proveedor, cantidad] of Object.entries(perSupplier)) {
      const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ receptor: buyer, proveedor, cantidad, esperarMs: 60_000 }),
      });
      if (!res.ok) throw new Error(`suppliers/issue: ${res.status} ${await res.text()}`);
      const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string; estado: string }[] };
      for (const d of documentos) out.push({ clave: d.clave, proveedor, xml: Buffer.from(d.xml, 'base64') });
    }
    await emu.state.whenIdle();
    return out;
  } finally {
    await emu.close();
  }
}

/** The invoice with a line's description changed after signing: its signature no longer matches (nothing else). */
export function tampered(xml: Buffer): Buffer {
  const text = xml.toString('utf8');
  const changed = text.replace(/<Detalle>/, '<Detalle>ALTERADO ');
  if (changed === text) throw new Error('no Detalle to tamper with');
  return Buffer.from(changed, 'utf8');
}

const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

/** A supplier's mail as raw MIME: its attachments by name. */
export async function supplierMail(opts: { from: string; subject: string; attachments: { filename: string; content: Buffer; contentType?: string }[]; text?: string }): Promise<Buffer> {
  const info = (await transport.sendMail({
    from: opts.from,
    to: 'facturas@comprador.example',
    subject: opts.subject,
    text: opts.text ?? 'Adjuntamos la factura electrónica.',
    attachments: opts.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType ?? 'application/xml' })),
  })) as unknown as { message: Buffer };
  return info.message;
}
