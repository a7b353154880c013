// Issue 30, the suppliers' mailbox in hosted mode: `fecr accounts mailbox acme --imap URL --rules FILE` and a real
// `fecr serve` child whose worker reads the account's mailbox (one `mailbox` job per account) on a real IMAP server
// (Debian's dovecot). 12 mails (6 genuine invoices of two suppliers, 2 duplicates, 2 tampered, 2 without attachment);
// the server killed with SIGKILL once the first comprobantes are stored, then started again: every genuine comprobante
// imported once, cafetal's accepted once each (one MensajeReceptor each at the emulator), maria's held, 8 mails in
// fecr-imported and 4 set aside with their reasons. The setting shows without the password; --clear stops it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { runCli, tempDir } from './helpers/cli.js';
import { DOVECOT, startDovecot, type TestImap } from './helpers/dovecot.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { serviceStoreEnv, TEST_STORE } from './helpers/stores.js';
import { supplierMail, tampered } from './helpers/supplier-mail.js';

const root = tempDir('fecr-hosted-mailbox-');
const imapDir = tempDir('fecr-dovecot-');
const test = makeTestIssuer();
const PASSWORD = 'clave-de-la-cuenta-2026';
const BUYER = { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre };
const CAFETAL = '3101987654';
const MARIA = '114560789';
const work = join(root, 'work');
// On both stores: SQLite in the data dir, or PostgreSQL (FECR_DATABASE_URL) in the "postgres" project.
const storeEnv = await serviceStoreEnv();
const serverEnv = { HOME: join(root, 'server-home'), FECR_DATA_DIR: join(root, 'server-data'), FECR_NO_KEYCHAIN: '1', ...storeEnv.env };
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
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Rows of received documents in the store (read directly: fast enough to stop the server mid-pass). */
async function storedRows(): Promise<number> {
  if (TEST_STORE === 'postgres') {
    const c = new pg.Client({ connectionString: storeEnv.url });
    await c.connect();
    try {
      return Number((await c.query('select count(*) as n from recibidos')).rows[0].n);
    } finally {
      await c.end();
    }
  }
  const d = new Database(join(serverEnv.FECR_DATA_DIR, 'fecr.db'), { readonly: true });
  try {
    return (d.prepare('SELECT COUNT(*) AS n FROM recibidos').get() as { n: number }).n;
  } catch {
    return 0; // not migrated yet
  } finally {
    d.close();
  }
}

/** The account's mailbox jobs not done: the jobs table on SQLite, graphile-worker's on PostgreSQL. */
async function openMailboxJobs(): Promise<number> {
  if (TEST_STORE === 'postgres') {
    const c = new pg.Client({ connectionString: storeEnv.url });
    await c.connect();
    try {
      return Number((await c.query("select count(*) as n from graphile_worker.jobs where task_identifier = 'fecr_mailbox'")).rows[0].n);
    } finally {
      await c.end();
    }
  }
  const d = new Database(join(serverEnv.FECR_DATA_DIR, 'fecr.db'), { readonly: true });
  try {
    return (d.prepare("SELECT COUNT(*) AS n FROM jobs WHERE type = 'mailbox' AND done_at IS NULL").get() as { n: number }).n;
  } finally {
    d.close();
  }
}

/** `fecr serve` on the test's store; the profile pointed at it (each start has new ports) and logged in. */
/** `leaseMs`: the worker's lease (FECR_WORKER_LEASE_MS; default 30 s), shorter where a test waits for a dead one's. */
async function startServe(leaseMs?: number): Promise<Spawned<{ authUrl: string; baseUrl: string }>> {
  const s = await spawnFecr<{ authUrl: string; baseUrl: string }>(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--hacienda-url', emu!.url], { env: { ...serverEnv, ...(leaseMs ? { FECR_WORKER_LEASE_MS: String(leaseMs) } : {}) } });
  expect((await fecr(['config', 'set', 'authUrl', s.ready.authUrl])).code).toBe(0);
  expect((await fecr(['config', 'set', 'baseUrl', s.ready.baseUrl])).code).toBe(0);
  // Another server URL is another session.
  const login = await fecr(['login', '--base', 'acme', '--password-stdin'], { stdin: `${PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  return s;
}

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
  await storeEnv.drop();
});

describe.skipIf(!DOVECOT)('fecr accounts mailbox: the service reads an account\'s suppliers\' mail', () => {
  it('imports and answers every genuine comprobante once, across a SIGKILL of fecr serve', async () => {
    const url = `imap://${imap!.user}@127.0.0.1:${imap!.port}/INBOX`;
    const set = await runCli(['accounts', 'mailbox', 'acme', '--imap', url, '--rules', 'rules.json', '--interval', '10'], { env: { ...serverEnv, FECR_IMAP_PASSWORD: imap!.pass }, cwd: work });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`imap\t${url} (password sealed)`);
    expect(set.stdout + set.stderr).not.toContain(imap!.pass);

    const recibidos = async () => {
      const r = await fecr(['recibidos', 'list', '--json']);
      if (r.code !== 0) throw new Error(`recibidos list: ${r.stderr}`);
      return JSON.parse(r.stdout) as { clave: string; estado: string; emisor: { numero: string | null } }[];
    };
    // A 6 s lease, so the run after the SIGKILL does not wait the default 30 s for the dead worker's.
    serve = await startServe(6_000);
    await until('the first comprobantes stored', async () => (await storedRows()) >= 2, 60_000);
    serve.child.kill('SIGKILL');
    await serve.stop();
    // Killed mid-pass: mails still in the inbox.
    expect(await count('INBOX')).toBeGreaterThan(0);
    serve = await startServe(6_000);
    // After the dead worker's lease (6 s here) the job runs again, and finishes the mailbox.
    await until('the inbox emptied', async () => (await count('INBOX')) === 0, 150_000);
    expect(await count('fecr-imported')).toBe(8);
    expect(await count('fecr-set-aside')).toBe(4);

    const all = await recibidos();
    const rows = all.filter((r) => r.estado !== 'invalido');
    expect(rows).toHaveLength(6);
    expect(new Set(rows.map((r) => r.clave)).size).toBe(6);
    expect(rows.filter((r) => r.emisor.numero === CAFETAL).map((r) => r.estado)).toEqual(['aceptado', 'aceptado', 'aceptado']);
    expect(rows.filter((r) => r.emisor.numero === MARIA).map((r) => r.estado)).toEqual(['pendiente', 'pendiente', 'pendiente']);
    expect(all.filter((r) => r.estado === 'invalido')).toHaveLength(2);
    // One job waits for the next pass of the account's mailbox.
    expect(await openMailboxJobs()).toBe(1);

    // At Hacienda: one MensajeReceptor per accepted clave.
    const mrKeys = () => emu!.state.store.listReceptions().map((r) => r.key).filter((k) => k.includes('-'));
    await until('the answers received by the emulator', () => mrKeys().length >= 3, 60_000);
    expect(mrKeys()).toHaveLength(3);
    expect(new Set(mrKeys().map((k) => k.slice(0, 50))).size).toBe(3);

    const shown = await runCli(['accounts', 'mailbox', 'acme', '--json'], { env: serverEnv, cwd: work });
    expect(JSON.parse(shown.stdout)).toEqual({ imapUrl: url, intervalS: 10, rules: { default: 'hold', suppliers: { [CAFETAL]: 'accept' } } });
  }, 400_000);

  it('SIGTERM mid-pass: the server stops after the mail in hand, and the next one goes on at once (no lease to wait for)', async () => {
    const genuine = docs.filter((d) => d.proveedor === MARIA).slice(0, 3);
    const c = client();
    await c.connect();
    for (let i = 0; i < 30; i++) await c.append('INBOX', await supplierMail({ from: 'facturas@proveedor.example', subject: `Reenvío ${i}`, attachments: [{ filename: 'copia.xml', content: genuine[i % 3]!.xml }] }));
    await c.logout();
    await serve!.stop();
    serve = await startServe();
    const before = await count('fecr-imported');
    await until('the pass under way', async () => (await count('fecr-imported')) > before, 60_000);
    const t0 = Date.now();
    expect(await serve.stop('SIGTERM')).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const left = await count('INBOX');
    expect(left, 'stopped mid-pass').toBeGreaterThan(0);
    serve = await startServe();
    const t1 = Date.now();
    await until('the inbox emptied', async () => (await count('INBOX')) === 0, 25_000);
    // The next pass was queued for now: well before a dead worker's 30 s lease would have run out.
    expect(Date.now() - t1).toBeLessThan(20_000);
    expect(await count('fecr-imported')).toBe(8 + 30);
    expect((await recibidosCount()).valid).toBe(6);

    const cleared = await runCli(['accounts', 'mailbox', 'acme', '--clear'], { env: serverEnv, cwd: work });
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stderr).toContain('the mailbox of acme removed');
  }, 200_000);
});

async function recibidosCount(): Promise<{ valid: number }> {
  const r = await fecr(['recibidos', 'list', '--json']);
  return { valid: (JSON.parse(r.stdout) as { estado: string }[]).filter((x) => x.estado !== 'invalido').length };
}
