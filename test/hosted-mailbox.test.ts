// Issue 30, the suppliers' mailbox in hosted mode: `fecr accounts mailbox acme --imap URL --rules FILE` and a real
// `fecr serve` child whose worker reads the account's mailbox (one `mailbox` job per account) on a real IMAP server
// (Debian's dovecot). 12 mails (6 genuine invoices of two suppliers, 2 duplicates, 2 tampered, 2 without attachment);
// the server killed with SIGKILL once the first comprobantes are stored, then started again: every genuine comprobante
// imported once, cafetal's accepted once each (one MensajeReceptor each at the emulator), maria's held, 8 mails in
// fecr-imported and 4 set aside with their reasons. The setting shows without the password; --clear stops it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { runCli, tempDir } from './helpers/cli.js';
import { DOVECOT, startDovecot, type TestImap } from './helpers/dovecot.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { supplierMail, tampered } from './helpers/supplier-mail.js';

const root = tempDir('fecr-hosted-mailbox-');
const imapDir = tempDir('fecr-dovecot-');
const test = makeTestIssuer();
const PASSWORD = 'clave-de-la-cuenta-2026';
const BUYER = { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre };
const CAFETAL = '3101987654';
const MARIA = '114560789';
const work = join(root, 'work');
const serverEnv = { HOME: join(root, 'server-home'), FECR_DATA_DIR: join(root, 'server-data'), FECR_NO_KEYCHAIN: '1' };
const env = { HOME: join(root, 'home'), FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
const fecr = (args: string[], opts: { stdin?: string } = {}) => runCli(args, { env, cwd: work, ...opts });
let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;
let emu: RunningEmulator | undefined;
let imap: TestImap | undefined;
const docs: { clave: string; proveedor: string; xml: Buffer }[] = [];

function client(): ImapFlow {
  const c = new ImapFlow({ host: '127.0.0.1', port: imap!.port, secure: false, auth: { user: imap!.user, pass: imap!.pass }, logger: false });
  c.on('error', () => undefined);
  return c;
}

async function count(folder: string): Promise<number> {
  const c = client();
  await c.connect();
  try {
    const st = await c.status(folder, { messages: true });
    return st ? (st.messages ?? 0) : 0;
  } finally {
    await c.logout();
  }
}

async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${serve?.stderr() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const startServe = () => spawnFecr<{ authUrl: string; baseUrl: string }>(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--hacienda-url', emu!.url], { env: serverEnv });

beforeAll(async () => {
  if (!DOVECOT) return;
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  writeFileSync(join(work, 'rules.json'), JSON.stringify({ default: 'hold', suppliers: { [CAFETAL]: 'accept' } }));
  emu = await startEmulator({ processingDelayMs: 10 });
  for (const proveedor of [CAFETAL, MARIA]) {
    const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receptor: BUYER, proveedor, cantidad: 4, esperarMs: 30_000 }) });
    const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string }[] };
    for (const d of documentos) docs.push({ clave: d.clave, proveedor, xml: Buffer.from(d.xml, 'base64') });
  }
  const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: `${PASSWORD}\n` });
  expect(acct.code, acct.stderr).toBe(0);
  serve = await startServe();
  expect((await fecr(['config', 'set', 'authUrl', serve.ready.authUrl])).code).toBe(0);
  expect((await fecr(['config', 'set', 'baseUrl', serve.ready.baseUrl])).code).toBe(0);
  expect((await fecr(['login', '--base', 'acme', '--password-stdin'], { stdin: `${PASSWORD}\n` })).code).toBe(0);
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
  await serve.stop();
  serve = undefined;

  imap = await startDovecot(imapDir);
  const of = (p: string) => docs.filter((d) => d.proveedor === p);
  const genuine = [...of(CAFETAL).slice(0, 3), ...of(MARIA).slice(0, 3)];
  const mails: Buffer[] = [];
  for (const d of genuine) mails.push(await supplierMail({ from: 'facturas@proveedor.example', subject: 'Factura', attachments: [{ filename: `${d.clave}.xml`, content: d.xml }] }));
  for (const d of genuine.slice(0, 2)) mails.push(await supplierMail({ from: 'facturas@proveedor.example', subject: 'Copia', attachments: [{ filename: 'copia.xml', content: d.xml }] }));
  for (const d of [of(CAFETAL)[3]!, of(MARIA)[3]!]) mails.push(await supplierMail({ from: 'falso@proveedor.example', subject: 'Alterada', attachments: [{ filename: 'alterada.xml', content: tampered(d.xml) }] }));
  for (let i = 0; i < 2; i++) mails.push(await supplierMail({ from: 'alguien@example.com', subject: 'Hola', attachments: [] }));
  const c = client();
  await c.connect();
  for (const m of mails) await c.append('INBOX', m);
  await c.logout();
}, 180_000);

afterAll(async () => {
  await serve?.stop();
  await emu?.close();
  await imap?.stop();
  rmSync(root, { recursive: true, force: true });
  rmSync(imapDir, { recursive: true, force: true });
});

describe.skipIf(!DOVECOT)('fecr accounts mailbox: the service reads an account\'s suppliers\' mail', () => {
  it('imports and answers every genuine comprobante once, across a SIGKILL of fecr serve', async () => {
    const url = `imap://${imap!.user}@127.0.0.1:${imap!.port}/INBOX`;
    const set = await runCli(['accounts', 'mailbox', 'acme', '--imap', url, '--rules', 'rules.json', '--interval', '10'], { env: { ...serverEnv, FECR_IMAP_PASSWORD: imap!.pass }, cwd: work });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`imap\t${url} (password sealed)`);
    expect(set.stdout + set.stderr).not.toContain(imap!.pass);

    const db = () => new Database(join(serverEnv.FECR_DATA_DIR, 'fecr.db'), { readonly: true });
    const stored = () => {
      const d = db();
      try {
        return (d.prepare('SELECT COUNT(*) AS n FROM recibidos').get() as { n: number }).n;
      } finally {
        d.close();
      }
    };
    serve = await startServe();
    await until('the first comprobantes stored', () => stored() >= 2);
    serve.child.kill('SIGKILL');
    await serve.stop();
    serve = await startServe();
    // After the dead worker's lease (30 s) the job runs again, and finishes the mailbox.
    await until('the inbox emptied', async () => (await count('INBOX')) === 0, 150_000);
    expect(await count('fecr-imported')).toBe(8);
    expect(await count('fecr-set-aside')).toBe(4);

    const d = db();
    try {
      const rows = d.prepare("SELECT clave, emisor_numero, estado FROM recibidos WHERE estado != 'invalido'").all() as { clave: string; emisor_numero: string; estado: string }[];
      expect(rows).toHaveLength(6);
      expect(new Set(rows.map((r) => r.clave)).size).toBe(6);
      expect(rows.filter((r) => r.emisor_numero === CAFETAL).map((r) => r.estado)).toEqual(['aceptado', 'aceptado', 'aceptado']);
      expect(rows.filter((r) => r.emisor_numero === MARIA).map((r) => r.estado)).toEqual(['pendiente', 'pendiente', 'pendiente']);
      expect((d.prepare("SELECT COUNT(*) AS n FROM recibidos WHERE estado = 'invalido'").get() as { n: number }).n).toBe(2);
      const mr = d.prepare("SELECT clave FROM documents WHERE kind LIKE 'MR%'").all() as { clave: string }[];
      expect(mr).toHaveLength(3);
      // The job is there for the next pass, one for the account.
      expect((d.prepare("SELECT COUNT(*) AS n FROM jobs WHERE type = 'mailbox' AND done_at IS NULL").get() as { n: number }).n).toBe(1);
    } finally {
      d.close();
    }
    // At Hacienda: one MensajeReceptor per accepted clave.
    const mrKeys = () => emu!.state.store.listReceptions().map((r) => r.key).filter((k) => k.includes('-'));
    await until('the answers received by the emulator', () => mrKeys().length >= 3, 60_000);
    expect(mrKeys()).toHaveLength(3);
    expect(new Set(mrKeys().map((k) => k.slice(0, 50))).size).toBe(3);

    const shown = await runCli(['accounts', 'mailbox', 'acme', '--json'], { env: serverEnv, cwd: work });
    expect(JSON.parse(shown.stdout)).toEqual({ imapUrl: url, intervalS: 10, rules: { default: 'hold', suppliers: { [CAFETAL]: 'accept' } } });
    const cleared = await runCli(['accounts', 'mailbox', 'acme', '--clear'], { env: serverEnv, cwd: work });
    expect(cleared.code, cleared.stderr).toBe(0);
  }, 400_000);
});
