// Issue 30's Must show, the suppliers' mailbox over IMAP: a real IMAP server (Debian's dovecot, test/helpers/dovecot.ts)
// receives 50 supplier mails (30 genuine invoices of three test suppliers, 8 duplicates of them, 6 tampered invoices,
// 6 mails without attachment); a real spawned `fecr recibidos watch --imap URL --rules FILE` (local mode: the service
// and its embedded emulator in that process) is killed with SIGKILL half way — after 20 mails, at a moment a
// comprobante's import has committed and its mail is not moved yet — then run again (`--once`). Then: every
// genuine comprobante is imported exactly once (30 valid rows, one per clave), the rules answered each of cafetal's
// and banco's exactly once (one MensajeReceptor each in fecr and at the emulator; banco's with condición 04) and
// held maria's, the inbox is empty, 38 mails are in fecr-imported and the 12 others in fecr-set-aside, each copy
// once with its X-Fecr-Set-Aside reason.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers/cli.js';
import { DOVECOT, startDovecot, type TestImap } from './helpers/dovecot.js';
import { childEnv } from './helpers/hermetic-env.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { issueSupplierInvoices, supplierMail, tampered, type IssuedInvoice } from './helpers/supplier-mail.js';

const ENTRY = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');

const root = tempDir('fecr-watch-imap-');
const imapDir = tempDir('fecr-dovecot-');
const test = makeTestIssuer();
const BUYER = { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre };
const work = join(root, 'work');
const env = { HOME: root, FECR_DATA_DIR: join(root, 'data'), FECR_NO_KEYCHAIN: '1' };
const CAFETAL = '3101987654';
const BANCO = '4000001021';
const MARIA = '114560789';
const RULES = { default: 'hold', suppliers: { [CAFETAL]: 'accept', [BANCO]: { action: 'accept', condicionImpuesto: '04' } } };

let imap: TestImap;
let valid: IssuedInvoice[] = [];
let url = '';

function client(): ImapFlow {
  const c = new ImapFlow({ host: '127.0.0.1', port: imap.port, secure: false, auth: { user: imap.user, pass: imap.pass }, logger: false });
  c.on('error', () => undefined);
  return c;
}

/** `fecr recibidos watch …` as a child process; its stdout JSON lines as they come. */
function startWatch(args: string[]) {
  const child = spawn(process.execPath, ['--import', TSX, ENTRY, 'recibidos', 'watch', '--imap', url, '--rules', 'rules.json', '--json', ...args], {
    cwd: work,
    env: childEnv({ ...env, FECR_IMAP_PASSWORD: imap.pass }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const lines = () => stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as { id: string; outcome: string; reasons: string[]; documents: { clave: string; creado: boolean; rule: string | null }[] });
  return { child, exited, lines, err: () => stderr };
}

async function folderMails(c: ImapFlow, folder: string): Promise<{ uid: number; headers: string }[]> {
  const lock = await c.getMailboxLock(folder);
  try {
    const out: { uid: number; headers: string }[] = [];
    if ((c.mailbox && c.mailbox.exists) === 0) return out;
    for await (const m of c.fetch('1:*', { uid: true, headers: true })) out.push({ uid: m.uid, headers: m.headers?.toString('utf8') ?? '' });
    return out;
  } finally {
    lock.release();
  }
}

beforeAll(async () => {
  if (!DOVECOT) return;
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  writeFileSync(join(work, 'rules.json'), JSON.stringify(RULES));
  const issued = await issueSupplierInvoices(env.FECR_DATA_DIR, BUYER, { [CAFETAL]: 14, [BANCO]: 10, [MARIA]: 12 });
  const of = (p: string) => issued.filter((i) => i.proveedor === p);
  // 30 genuine (12 + 10 + 8); the other 6 (2 of cafetal, 4 of maria) are mailed tampered only.
  valid = [...of(CAFETAL).slice(0, 12), ...of(BANCO), ...of(MARIA).slice(0, 8)];
  const forTampering = [...of(CAFETAL).slice(12), ...of(MARIA).slice(8)];
  const reg = await runCli(['emisor', 'register', 'issuer.json'], { env, cwd: work });
  expect(reg.code, reg.stderr).toBe(0);

  imap = await startDovecot(imapDir);
  url = `imap://${imap.user}@127.0.0.1:${imap.port}/INBOX`;
  const mails: Buffer[] = [];
  for (const [i, v] of valid.entries()) mails.push(await supplierMail({ from: `facturas-${v.proveedor}@proveedor.example`, subject: `Factura ${i}`, attachments: [{ filename: `${v.clave}.xml`, content: v.xml }] }));
  for (const [i, v] of valid.slice(0, 8).entries()) mails.push(await supplierMail({ from: `facturas-${v.proveedor}@proveedor.example`, subject: `Reenvío ${i}`, attachments: [{ filename: `copia-${i}.xml`, content: v.xml }] }));
  for (const [i, v] of forTampering.entries()) mails.push(await supplierMail({ from: 'falso@proveedor.example', subject: `Factura alterada ${i}`, attachments: [{ filename: `alterada-${i}.xml`, content: tampered(v.xml) }] }));
  for (let i = 0; i < 6; i++) mails.push(await supplierMail({ from: 'alguien@example.com', subject: `Sin adjunto ${i}`, attachments: [] }));
  // Interleaved (a fixed order): duplicates and bad mails among the genuine ones.
  const order = mails.map((m, i) => ({ m, k: (i * 37) % 50 })).sort((a, b) => a.k - b.k);
  const c = client();
  await c.connect();
  for (const { m } of order) await c.append('INBOX', m);
  await c.logout();
}, 300_000);

afterAll(async () => {
  await imap?.stop();
  rmSync(root, { recursive: true, force: true });
  rmSync(imapDir, { recursive: true, force: true });
});

describe.skipIf(!DOVECOT)('fecr recibidos watch --imap: 50 mails, SIGKILL half way, restart', () => {
  it('every genuine comprobante imported and answered exactly once, the bad mails set aside with their reason', async () => {
    const first = startWatch(['--interval', '1']);
    const deadline = Date.now() + 240_000;
    const waitFor = async (until: () => boolean) => {
      while (!until()) {
        if (first.child.exitCode !== null) throw new Error(`watch exited early: ${first.err()}`);
        if (Date.now() > deadline) throw new Error(`timed out: ${first.err()}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await waitFor(() => first.lines().length >= 20);
    // Then the worst moment: a comprobante's import committed (its row is in the store) while its mail is not moved
    // yet (not reported). The rule's answer runs in that window.
    const store = new Database(join(env.FECR_DATA_DIR, 'fecr.db'), { readonly: true });
    const stored = () => (store.prepare('SELECT COUNT(*) AS n FROM recibidos').get() as { n: number }).n;
    const reported = () => first.lines().reduce((n, l) => n + l.documents.filter((d) => d.creado).length, 0);
    let caught = false;
    try {
      await waitFor(() => (caught = stored() > reported()) || first.lines().length >= 45);
    } finally {
      first.child.kill('SIGKILL');
      store.close();
    }
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(caught, 'killed with an import committed and its mail still in the inbox').toBe(true);
    const before = first.lines();
    expect(before.length).toBeLessThan(50);

    const second = startWatch(['--once']);
    const done = await second.exited;
    expect(done.code, second.err()).toBe(0);
    const after = second.lines();
    // That mail is read again: its comprobante "already imported", no second row, no second answer (below).
    expect(after[0]!.documents.some((d) => !d.creado)).toBe(true);

    const c = client();
    await c.connect();
    try {
      expect(await folderMails(c, 'INBOX')).toEqual([]);
      expect(await folderMails(c, 'fecr-imported')).toHaveLength(38);
      const aside = await folderMails(c, 'fecr-set-aside');
      expect(aside).toHaveLength(12);
      const sources = aside.map((m) => /X-Fecr-Source: (\S+)/.exec(m.headers)?.[1]);
      expect(new Set(sources).size).toBe(12);
      const reasons = aside.map((m) => /X-Fecr-Set-Aside: ([^\r\n]+)/.exec(m.headers)?.[1] ?? '');
      expect(reasons.filter((r) => r === 'no comprobante attached (no XML attachment)')).toHaveLength(6);
      expect(reasons.filter((r) => /^alterada-\d\.xml: ds:Signature/.test(r))).toHaveLength(6);
    } finally {
      await c.logout();
    }

    const db = new Database(join(env.FECR_DATA_DIR, 'fecr.db'), { readonly: true });
    const emu = new Database(join(env.FECR_DATA_DIR, 'emulator.db'), { readonly: true });
    try {
      const rows = db.prepare("SELECT clave, emisor_numero, estado, condicion_impuesto FROM recibidos WHERE estado != 'invalido'").all() as { clave: string; emisor_numero: string; estado: string; condicion_impuesto: string | null }[];
      expect(rows).toHaveLength(30);
      expect(new Set(rows.map((r) => r.clave))).toEqual(new Set(valid.map((v) => v.clave)));
      const invalid = db.prepare("SELECT COUNT(*) AS n FROM recibidos WHERE estado = 'invalido'").get() as { n: number };
      expect(invalid.n).toBe(6);
      const state = (p: string) => rows.filter((r) => r.emisor_numero === p).map((r) => `${r.estado}/${r.condicion_impuesto}`);
      expect(state(CAFETAL)).toEqual(Array(12).fill('aceptado/01'));
      expect(state(BANCO)).toEqual(Array(10).fill('aceptado/04'));
      expect(state(MARIA)).toEqual(Array(8).fill('pendiente/null'));
      // One MensajeReceptor per accepted comprobante, in fecr and at Hacienda (the emulator's receptions).
      const mr = db.prepare("SELECT clave FROM documents WHERE kind LIKE 'MR%'").all() as { clave: string }[];
      expect(mr).toHaveLength(22);
      expect(new Set(mr.map((m) => m.clave.slice(0, 50))).size).toBe(22);
      const keys = (emu.prepare('SELECT key FROM receptions').all() as { key: string }[]).map((r) => r.key).filter((k) => k.includes('-'));
      expect(keys).toHaveLength(22);
      expect(new Set(keys.map((k) => k.slice(0, 50))).size).toBe(22);
    } finally {
      db.close();
      emu.close();
    }
  }, 600_000);

  it('a watcher outlives a restart of the IMAP server, and stops on SIGTERM (exit 0)', async () => {
    const w = startWatch(['--interval', '1']);
    await new Promise((r) => setTimeout(r, 3_000));
    await imap.stop();
    await new Promise((r) => setTimeout(r, 2_000));
    imap = await startDovecot(imapDir, { port: imap.port });
    const c = client();
    await c.connect();
    await c.append('INBOX', await supplierMail({ from: 'alguien@example.com', subject: 'Tras el reinicio', attachments: [] }));
    await c.logout();
    const deadline = Date.now() + 60_000;
    while (!w.lines().some((l) => l.outcome === 'set-aside')) {
      if (w.child.exitCode !== null) throw new Error(`watch exited: ${w.err()}`);
      if (Date.now() > deadline) throw new Error(`timed out: ${w.err()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(w.err()).toMatch(/warning: the pass failed: /);
    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
    expect(w.lines().map((l) => [l.outcome, l.reasons])).toEqual([['set-aside', ['no comprobante attached (no XML attachment)']]]);
  }, 120_000);
});
