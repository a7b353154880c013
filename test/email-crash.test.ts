// The receptor mails survive a kill -9 (issue 17): 200 documents stored on a data dir, `fecr serve --smtp-url` (a
// child process, embedded emulator) delivering their mails to a real SMTP server in this process; the child is
// killed with SIGKILL once part of the mails arrived, then started again on the same data dir. Afterwards every
// document has its mail (state enviado, its Message-ID received), and the duplicates (the same Message-ID received
// twice: a mail whose 250 came back but whose record the killed process never wrote) are counted, reported, and
// bounded by the mails that were in flight at the kill.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/service/accounts.js';
import { submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { openService } from '../src/service/runtime.js';
import { validInvoice } from './helpers/bodies.js';
import { tempDir } from './helpers/cli.js';
import { waitUntil } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { startTestSmtp, type TestSmtp } from './helpers/smtp.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const N = 200;
const CONCURRENCY = 8;
const dir = tempDir('fecr-mail-crash-');
// Each document's correosAdicionales address counts as one mail of the account's hour (issue 37, point 7): room for 200.
const MAIL_LIMITS = ['--mail-resends-per-account', '1000'];
const dataDir = join(dir, 'data');
const env = { HOME: dir, FECR_DATA_DIR: dataDir, FECR_NO_KEYCHAIN: '1', FECR_WORKER_LEASE_MS: '2000', FECR_WORKER_CONCURRENCY: String(CONCURRENCY) };

let smtp: TestSmtp;
const children: Spawned<{ baseUrl: string }>[] = [];

async function serve(): Promise<Spawned<{ baseUrl: string }>> {
  const s = await spawnFecr<{ baseUrl: string }>(['serve', '--data-dir', dataDir, '--emulator-delay', '20', '--smtp-url', smtp.url, '--mail-from', 'Facturas <facturas@fecr.test>', ...MAIL_LIMITS], { env });
  children.push(s);
  return s;
}

function readDb<T>(fn: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'fecr.db'), { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const messageIdOf = (raw: Buffer) => /^Message-ID:\s*(<[^>]+>)/im.exec(raw.toString('latin1'))?.[1];

beforeAll(async () => {
  smtp = await startTestSmtp();
  // The data dir: an account, the test issuer and N documents stored (pendiente, with their send jobs).
  const opened = await openService({ dataDir, env, startLocalEmulator: false, logger: pino({ level: 'silent' }) });
  const { account } = await createAccount(opened.ctx, { base: 'acme', password: 'password-123' });
  await registerIssuer(opened.ctx, account.id, { ...makeTestIssuer().issuer });
  for (let i = 1; i <= N; i++) await submitDocument(opened.ctx, account.id, { ...validInvoice(), numeroReferencia: i, correosAdicionales: [`copia${i}@cliente.cr`] });
  await opened.close();
}, 120_000);

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) await c.stop('SIGKILL');
  await smtp?.close();
});

describe('kill -9 in the middle of 200 mail deliveries', () => {
  it('after the restart every document has its mail; duplicates counted and bounded', async () => {
    const first = await serve();
    await waitUntil(() => smtp.received.length >= 60, { timeoutMs: 90_000, label: 'the first mails', describe: () => first.stderr().slice(-2000) });
    const exit = new Promise<NodeJS.Signals | null>((resolve) => first.child.once('exit', (_c, signal) => resolve(signal)));
    first.child.kill('SIGKILL');
    expect(await exit).toBe('SIGKILL');
    const atKill = smtp.received.length;
    const inFlight = readDb((db) => (db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE type = 'email' AND done_at IS NULL AND lease_owner IS NOT NULL").get() as { n: number }).n);
    const sentAtKill = readDb((db) => (db.prepare("SELECT COUNT(*) AS n FROM email_deliveries WHERE state = 'enviado'").get() as { n: number }).n);
    expect(sentAtKill).toBeLessThan(N); // killed in the middle

    const second = await serve();
    await waitUntil(
      () => readDb((db) => (db.prepare("SELECT COUNT(*) AS n FROM email_deliveries WHERE state = 'enviado'").get() as { n: number }).n) === N,
      { timeoutMs: 120_000, label: 'every mail enviado', intervalMs: 200, describe: () => second.stderr().slice(-2000) },
    );
    await second.stop();

    const rows = readDb((db) => db.prepare('SELECT e.message_id, e.state, e.recipients, d.clave, d.state AS doc FROM email_deliveries e JOIN documents d ON d.id = e.document_id').all() as {
      message_id: string;
      state: string;
      recipients: string;
      clave: string;
      doc: string;
    }[]);
    expect(rows).toHaveLength(N); // exactly one mail per document
    expect(new Set(rows.map((r) => r.clave)).size).toBe(N);
    expect(rows.every((r) => r.doc === 'aceptado' && r.state === 'enviado')).toBe(true);
    const received = smtp.received.map((m) => messageIdOf(m.raw));
    const counts = new Map<string, number>();
    for (const id of received) counts.set(id!, (counts.get(id!) ?? 0) + 1);
    // every document's mail arrived, to its two recipients
    for (const r of rows) expect(counts.get(r.message_id) ?? 0).toBeGreaterThanOrEqual(1);
    const i = smtp.received.findIndex((m) => messageIdOf(m.raw) === rows[0]!.message_id);
    expect(smtp.received[i]!.to).toEqual(JSON.parse(rows[0]!.recipients));
    const duplicates = received.length - counts.size;
    console.log(
      `email crash: ${N} documents, ${atKill} mails received before the kill (${sentAtKill} recorded enviado, ${inFlight} email jobs leased), ` +
        `${received.length} received in all, ${counts.size} distinct Message-IDs, ${duplicates} duplicate(s)`,
    );
    expect([...counts.values()].every((n) => n <= 2)).toBe(true); // at most one duplicate per mail
    expect(duplicates).toBeLessThanOrEqual(Math.max(inFlight, CONCURRENCY));
  }, 300_000);
});
