// Issue 30, the suppliers' mailbox through a Maildir (local mode: the service in process on FECR_DATA_DIR, its
// embedded emulator): `fecr recibidos watch --maildir DIR --rules FILE --once` imports each mail's comprobante as
// `recibidos import` does, answers as the rules say (accept; accept with condición 04; hold), moves each mail to
// .fecr-imported, and sets aside (.fecr-set-aside, with an X-Fecr-Set-Aside header) a mail with a tampered invoice,
// one without attachment and one with only Hacienda's answer. A second pass finds nothing; a duplicate mail is
// "already imported" and answered once; hostile attachment names are shown escaped and written nowhere.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMensajeHaciendaXml } from '../src/core/xml/mensaje.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { issueSupplierInvoices, supplierMail, tampered, type IssuedInvoice } from './helpers/supplier-mail.js';

const root = tempDir('fecr-watch-maildir-');
afterAll(() => rmSync(root, { recursive: true, force: true }));
const test = makeTestIssuer();
const BUYER = { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre };
const work = join(root, 'work');
const maildir = join(root, 'Maildir');
const env = { HOME: root, FECR_DATA_DIR: join(root, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra }, cwd: work });
const CAFETAL = '3101987654';
const BANCO = '4000001021';
const MARIA = '114560789';
export const RULES = { default: 'hold', suppliers: { [CAFETAL]: 'accept', [BANCO]: { action: 'accept', condicionImpuesto: '04' } } };

let inv: IssuedInvoice[] = [];
let n = 0;
async function deliver(raw: Buffer): Promise<string> {
  const name = `${1_700_000_000 + n++}.M${n}P1.test`;
  writeFileSync(join(maildir, 'tmp', name), raw);
  const { renameSync } = await import('node:fs');
  renameSync(join(maildir, 'tmp', name), join(maildir, 'new', name));
  return name;
}

beforeAll(async () => {
  for (const d of ['tmp', 'new', 'cur']) mkdirSync(join(maildir, d), { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  writeFileSync(join(work, 'rules.json'), JSON.stringify(RULES));
  inv = await issueSupplierInvoices(env.FECR_DATA_DIR, BUYER, { [CAFETAL]: 2, [BANCO]: 1, [MARIA]: 1 });
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 120_000);

const byName = (dir: string) => readdirSync(dir).sort();

/** Hacienda's answer about a clave, as a supplier attaches it (unsigned: only its words are read). */
function mensaje(clave: string, m: 1 | 3): Buffer {
  const xml = buildMensajeHaciendaXml({ clave, nombreEmisor: 'PROVEEDOR', tipoIdentificacionEmisor: '02', numeroCedulaEmisor: clave.slice(9, 21).replace(/^0+/, ''), mensaje: m, detalleMensaje: m === 1 ? 'Aceptado' : 'Rechazado', totalFactura: '100' });
  return Buffer.from(`<?xml version="1.0" encoding="utf-8"?>\n${xml}`, 'utf8');
}

describe('fecr recibidos watch --maildir', () => {
  it('imports, answers by the rules, sets aside with the reason, moves each mail once', async () => {
    const of = (p: string) => inv.filter((i) => i.proveedor === p);
    const [caf1, caf2] = of(CAFETAL);
    const [banco] = of(BANCO);
    const [maria] = of(MARIA);
    await deliver(await supplierMail({ from: 'facturas@cafetal.example', subject: 'Factura 1', attachments: [{ filename: `${caf1!.clave}.xml`, content: caf1!.xml }] }));
    await deliver(await supplierMail({ from: 'facturas@banco.example', subject: 'Factura', attachments: [{ filename: 'factura.xml', content: banco!.xml }] }));
    // A hostile name: a path and an escape sequence; shown escaped, written nowhere. With Hacienda's answer beside it.
    await deliver(await supplierMail({ from: 'maria@example.com', subject: 'Factura', attachments: [{ filename: '../../\x1b[31mfactura.xml', content: maria!.xml }, { filename: 'respuesta.xml', content: mensaje(maria!.clave, 1) }] }));
    await deliver(await supplierMail({ from: 'facturas@cafetal.example', subject: 'Factura 1 (copia)', attachments: [{ filename: 'copia.xml', content: caf1!.xml }] }));
    const bad = await deliver(await supplierMail({ from: 'falso@cafetal.example', subject: 'Factura 2', attachments: [{ filename: 'f2.xml', content: tampered(caf2!.xml) }] }));
    const empty = await deliver(await supplierMail({ from: 'alguien@example.com', subject: 'Hola', attachments: [] }));
    const onlyAnswer = await deliver(await supplierMail({ from: 'facturas@cafetal.example', subject: 'Respuesta', attachments: [{ filename: 'mh.xml', content: mensaje(caf2!.clave, 1) }] }));
    const r = await fecr(['recibidos', 'watch', '--maildir', maildir, '--rules', 'rules.json', '--once']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${caf1!.clave} imported from ${CAFETAL}, accepted by the rules`);
    expect(r.stdout).toContain(`${banco!.clave} imported from ${BANCO}, accepted by the rules`);
    expect(r.stdout).toContain(`${maria!.clave} imported from ${MARIA}, held`);
    expect(r.stdout).toContain(`${caf1!.clave} already imported from ${CAFETAL}, already answered`);
    expect(r.stdout).toMatch(new RegExp(`mail new/${bad}: set aside: f2\\.xml: ds:Signature`));
    expect(r.stdout).toContain(`mail new/${empty}: set aside: no comprobante attached (no XML attachment)`);
    expect(r.stdout).toContain(`mail new/${onlyAnswer}: set aside: only Hacienda's answer (MensajeHacienda) is attached, not the comprobante`);
    expect(r.stdout + r.stderr).not.toContain('\x1b');
    // maria's attached answer agrees with Hacienda's: nothing is said about it.
    expect(r.stderr).not.toMatch(/respuesta\.xml/);
    expect(r.stderr).toMatch(/7 mails: 4 imported, 3 set aside, 0 left in the inbox/);

    expect(byName(join(maildir, 'new'))).toEqual([]);
    expect(byName(join(maildir, '.fecr-imported', 'cur'))).toHaveLength(4);
    const aside = byName(join(maildir, '.fecr-set-aside', 'cur'));
    expect(aside).toEqual([`${bad}:2,`, `${empty}:2,`, `${onlyAnswer}:2,`]);
    const badMail = readFileSync(join(maildir, '.fecr-set-aside', 'cur', `${bad}:2,`), 'utf8');
    expect(badMail).toMatch(/^X-Fecr-Set-Aside: f2\.xml: ds:Signature[^\r\n]*\r\nContent-Type|^X-Fecr-Set-Aside: f2\.xml: ds:Signature/);
    expect(badMail).toContain('Subject: Factura 2');
    expect(existsSync(join(root, 'factura.xml'))).toBe(false);

    // The rules: cafetal accepted (condición 01), banco accepted with condición 04 (no IVA credited), maria held.
    const show = async (clave: string) => JSON.parse((await fecr(['recibidos', 'show', clave, '--json'])).stdout) as { estado: string; decision: { condicionImpuesto: string | null; montoTotalImpuestoAcreditar: string } | null };
    expect(await show(caf1!.clave)).toMatchObject({ estado: 'aceptado', decision: { condicionImpuesto: '01' } });
    expect(await show(banco!.clave)).toMatchObject({ estado: 'aceptado', decision: { condicionImpuesto: '04', montoTotalImpuestoAcreditar: '0.00000' } });
    expect(await show(maria!.clave)).toMatchObject({ estado: 'pendiente', decision: null });

    const again = await fecr(['recibidos', 'watch', '--maildir', maildir, '--rules', 'rules.json', '--once']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/0 mails: 0 imported/);
  }, 120_000);

  it("an attached MensajeHacienda that disagrees with Hacienda is a warning; an attachment over the limit sets the mail aside", async () => {
    const banco = inv.filter((i) => i.proveedor === BANCO)[0]!;
    // Another copy of banco's mail, with a MensajeHacienda saying rechazado (Hacienda accepted it).
    const liar = await deliver(await supplierMail({ from: 'facturas@banco.example', subject: 'Factura', attachments: [{ filename: 'f.xml', content: banco.xml }, { filename: 'mh.xml', content: mensaje(banco.clave, 3) }] }));
    const big = await deliver(await supplierMail({ from: 'x@example.com', subject: 'Grande', attachments: [{ filename: 'grande.xml', content: Buffer.from(`<FacturaElectronica>${'x'.repeat(20_000)}</FacturaElectronica>`) }] }));
    const r = await fecr(['recibidos', 'watch', '--maildir', maildir, '--once'], { FECR_RECIBIDOS_MAX_BYTES: '16384' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`mail new/${liar}: ${banco.clave} already imported from ${BANCO}, already answered`);
    expect(r.stderr).toContain(`warning: mail new/${liar}: mh.xml: the attached MensajeHacienda says rechazado, Hacienda says aceptado: Hacienda's word is kept`);
    expect(r.stdout).toMatch(new RegExp(`mail new/${big}: set aside: grande\\.xml: archivo: 20041 bytes: over the limit of 16384 bytes`));
    expect(readFileSync(join(maildir, '.fecr-set-aside', 'cur', `${big}:2,`), 'utf8')).toMatch(/^X-Fecr-Set-Aside: grande\.xml: archivo: 20041 bytes: over the limit/);
  });

  it('a mail over 25 MiB is set aside unread, its reason beside it', async () => {
    const big = `${1_800_000_000}.BIG.test`;
    writeFileSync(join(maildir, 'new', big), Buffer.alloc(25 * 1024 * 1024 + 10, 0x61));
    const r = await fecr(['recibidos', 'watch', '--maildir', maildir, '--once']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`mail new/${big}: set aside: the mail is 26214410 bytes, over the limit of 26214400 bytes: not read`);
    expect(readFileSync(join(maildir, '.fecr-set-aside', 'reasons', `${big}.txt`), 'utf8')).toMatch(/over the limit of 26214400 bytes/);
    expect(existsSync(join(maildir, '.fecr-set-aside', 'cur', `${big}:2,`))).toBe(true);
  });

  it('a rules file that cannot be used: a headline and one line per problem, exit 2', async () => {
    writeFileSync(join(work, 'bad-rules.json'), JSON.stringify({ suppliers: { '31019': 'accept', [BANCO]: { action: 'accept', condicionImpuesto: '9' } }, extra: 1 }));
    const r = await fecr(['recibidos', 'watch', '--maildir', maildir, '--rules', 'bad-rules.json', '--once']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: bad-rules\.json: the rules file cannot be used\n/);
    expect(r.stderr).toContain('condicionImpuesto: must be 01, 02, 03, 04 or 05 (Nota 18)');
    expect(r.stderr).toContain('suppliers.31019: ');
    expect(r.stderr).toContain('rules: Unrecognized key: "extra"');
    const none = await fecr(['recibidos', 'watch', '--once']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('error: give one mailbox: --maildir DIR or --imap URL\n');
    const notMaildir = await fecr(['recibidos', 'watch', '--maildir', work, '--once']);
    expect(notMaildir.code).toBe(1);
    expect(notMaildir.stderr).toMatch(/not a Maildir \(it has no new\/ folder\)/);
  });
});
