// The receptor mail from the CLI (issue 17), in-process with a temp HOME: `fecr demo` writes one .eml to the demo data
// dir's outbox per demo document that has a receptor address (and none for the others) and says where; `fecr documents
// list` and `fecr status` show the mail's state; `fecr documents email CLAVE [--to]` resends (to the outbox, then,
// with the profile's smtpUrl, to a real SMTP server on 127.0.0.1); a document without recipient or a password in the
// profile's smtpUrl are refused with one error line.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoResult } from '../src/commands/demo/run.js';
import { receptorAddressInXml } from '../src/service/delivery/email.js';
import { runCli, tempDir } from './helpers/cli.js';
import { startTestSmtp, type TestSmtp } from './helpers/smtp.js';

const home = tempDir('fecr-cli-email-');
const work = join(home, 'work');
const env = { HOME: home, FECR_NO_KEYCHAIN: '1' };
const outbox = join(home, '.local', 'share', 'fecr', 'demo', 'outbox');
const fecr = (args: string[]) => runCli(args, { env, cwd: work });

let demo: DemoResult;
let smtp: TestSmtp;

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  smtp = await startTestSmtp();
  const r = await fecr(['demo', '--json']);
  expect(r.code, r.stderr).toBe(0);
  demo = JSON.parse(r.stdout) as DemoResult;
  expect(r.stderr).toMatch(/mailed \d+ documents to their receptors in .*outbox/);
}, 120_000);
afterAll(async () => {
  await smtp.close();
});

const emls = () => (existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml')) : []);

describe('fecr demo and the outbox', () => {
  it('one .eml per demo document with a receptor address, none for the others; attachments as downloaded', async () => {
    // The counterpart: the Receptor, or for a factura de compra the seller (its Emisor; the Receptor is the issuer).
    const counterpart = (d: DemoResult['documents'][number]) => {
      const xml = readFileSync(join(work, d.files.xml!), 'utf8');
      if (d.kind !== 'FEC') return receptorAddressInXml(xml);
      const emisor = /<Emisor>([\s\S]*?)<\/Emisor>/.exec(xml)?.[1] ?? '';
      return /<CorreoElectronico>([^<]+)</.exec(emisor)?.[1];
    };
    const withAddress = demo.documents.filter((d) => counterpart(d) !== undefined);
    expect(withAddress.length).toBeGreaterThan(0);
    expect(withAddress.length).toBeLessThan(demo.documents.length); // the TE without receptor (and the like) has none
    expect(demo.documents.filter((d) => d.correo).map((d) => d.kind)).toEqual(withAddress.map((d) => d.kind));
    const files = emls();
    expect(files).toHaveLength(withAddress.length);
    for (const d of withAddress) {
      const file = files.find((f) => f.startsWith(`${d.clave}-`));
      expect(file, d.kind).toBeDefined();
      expect(d.correo).toMatchObject({ estado: 'enviado', donde: `outbox: ${join(outbox, file!)}` });
      const parsed = await simpleParser(readFileSync(join(outbox, file!)));
      expect(parsed.subject).toContain(d.numeroConsecutivo);
      const xml = parsed.attachments.find((a) => a.filename === `${d.clave}.xml`)!;
      expect(xml.content.equals(readFileSync(join(work, d.files.xml!)))).toBe(true);
      const pdf = parsed.attachments.find((a) => a.filename === `${d.clave}.pdf`)!;
      expect(pdf.content.equals(readFileSync(join(work, d.files.pdf!)))).toBe(true);
      const respuesta = parsed.attachments.find((a) => a.filename === `${d.clave}_respuesta.xml`)!;
      expect(respuesta.content.equals(readFileSync(join(work, d.files.respuesta!)))).toBe(true);
    }
  });

  it('documents list and status show the mail', async () => {
    const list = await fecr(['documents', 'list', '--profile', 'demo']);
    expect(list.code, list.stderr).toBe(0);
    const [header, ...rows] = list.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(header!.at(-1)).toBe('correo');
    for (const d of demo.documents) {
      const row = rows.find((r) => r[0] === d.clave)!;
      expect(row.at(-1)).toBe(d.correo ? 'enviado' : '');
    }
    const fe = demo.documents.find((d) => d.correo)!;
    const st = await fecr(['status', fe.clave, '--profile', 'demo']);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toContain(`correo: enviado a ${fe.correo!.destinatarios.join(', ')} (outbox: `);
  });
});

describe('fecr documents email', () => {
  it('resends to the outbox, to --to addresses; refuses a document without recipient', async () => {
    const fe = demo.documents.find((d) => d.correo)!;
    const before = emls().length;
    const r = await fecr(['documents', 'email', fe.clave, '--to', 'contabilidad@cliente.cr', '--profile', 'demo']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^correo: enviado a contabilidad@cliente\.cr \(outbox: .*\.eml\)\n$/);
    expect(emls()).toHaveLength(before + 1);
    const bad = await fecr(['documents', 'email', fe.clave, '--to', 'no-es-correo', '--profile', 'demo']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: /);
    expect(bad.stderr).toContain('correos[0]');
    const te = demo.documents.find((d) => !d.correo)!;
    const none = await fecr(['documents', 'email', te.clave, '--profile', 'demo']);
    expect(none.code).toBe(1);
    expect(none.stderr.split('\n')[0]).toMatch(/^error: .*no tiene dirección de correo/);
  });

  it("with the profile's smtpUrl the mail goes to that SMTP server; a password in it is refused", async () => {
    const refused = await fecr(['config', 'set', `smtpUrl=smtp://user:secreto@127.0.0.1:${smtp.port}`, '--profile', 'demo']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/smtpUrl: must not carry a password/);
    const set = await fecr(['config', 'set', `smtpUrl=smtp://127.0.0.1:${smtp.port}`, 'mailFrom=Demo <demo@fecr.test>', '--profile', 'demo']);
    expect(set.code, set.stderr).toBe(0);
    const fe = demo.documents.find((d) => d.correo)!;
    const r = await fecr(['documents', 'email', fe.clave, '--profile', 'demo']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^correo: enviado a .* \(250 /);
    expect(smtp.received).toHaveLength(1);
    const parsed = await simpleParser(smtp.received[0]!.raw);
    expect(parsed.from?.value[0]).toEqual({ address: 'demo@fecr.test', name: 'Demo' });
    expect(parsed.attachments).toHaveLength(3);
  });
});
