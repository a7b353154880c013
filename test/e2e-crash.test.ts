// Crash safety end to end: `fecr serve` (child process, embedded emulator) is killed with SIGKILL while 200
// documents are in flight, twice, and started again on the same data dir each time:
//   1. mid-sending: the emulator has received part of the documents, POSTs are in flight, the rest is queued;
//   2. mid-delivery: every document sent or decided, webhooks partly delivered, some being delivered.
// Then every document must end aceptado, the emulator (its state in <data dir>/emulator.db, so it survives the
// restarts) must show exactly one accepted POST and no duplicate per clave, and every webhook must reach the
// receiver at least once, signed, always under the same webhook-id.
//
// A restarted worker takes over the dead worker's jobs when their leases expire: FECR_WORKER_LEASE_MS=2000
// (read by src/server/service.ts) keeps that wait short.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMensajeHaciendaXml } from '../src/core/xml/parse-mensaje.js';
import { validInvoice } from './helpers/bodies.js';
import { runCli, tempDir } from './helpers/cli.js';
import { getJson, mapLimit, postJson, startWebhookReceiver, waitUntil, type WebhookReceiver } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const N = 200;
const BASE = 'empresa-crash';
const PASSWORD = 'clave-de-prueba-crash-2026';

const dir = tempDir('fecr-crash-');
const dataDir = join(dir, 'data');
const env = { HOME: dir, FECR_DATA_DIR: dataDir, FECR_NO_KEYCHAIN: '1', FECR_WORKER_LEASE_MS: '2000' };

type Ready = { authUrl: string; baseUrl: string; haciendaUrl: string };
const children: Spawned<Ready>[] = [];
let receiver: WebhookReceiver;

async function serve(): Promise<Spawned<Ready>> {
  const s = await spawnFecr<Ready>(['serve', '--data-dir', dataDir, '--emulator-delay', '300'], { env });
  children.push(s);
  return s;
}

/** kill -9; resolves once the process is gone. */
async function kill9(s: Spawned<Ready>): Promise<void> {
  const exit = new Promise<NodeJS.Signals | null>((resolve) => s.child.once('exit', (_code, signal) => resolve(signal)));
  s.child.kill('SIGKILL');
  expect(await exit).toBe('SIGKILL');
}

/** Reads a data file directly, read-only (only while no service runs on it). */
function readDb<T>(file: 'fecr.db' | 'emulator.db', fn: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, file), { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const count = (db: Database.Database, sql: string): number => (db.prepare(sql).get() as { n: number }).n;

/** What the store and the emulator hold right after a kill. */
function snapshot() {
  const store = readDb('fecr.db', (db) => ({
    pendiente: count(db, "SELECT COUNT(*) AS n FROM documents WHERE state = 'pendiente'"),
    undecided: count(db, "SELECT COUNT(*) AS n FROM documents WHERE state NOT IN ('aceptado', 'rechazado', 'error')"),
    documents: count(db, 'SELECT COUNT(*) AS n FROM documents'),
    openJobs: count(db, 'SELECT COUNT(*) AS n FROM jobs WHERE done_at IS NULL'),
    leasedJobs: db.prepare('SELECT type, COUNT(*) AS n FROM jobs WHERE done_at IS NULL AND lease_owner IS NOT NULL GROUP BY type').all() as { type: string; n: number }[],
    pendingDeliveries: count(db, "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE state = 'pendiente'"),
  }));
  const receptions = readDb('emulator.db', (db) => count(db, 'SELECT COUNT(*) AS n FROM receptions'));
  return { ...store, receptions, webhooksSeen: receiver.claves().size };
}

const tail = (s: Spawned<Ready> | undefined) => (s ? s.stderr().split('\n').slice(-20).join('\n') : '');

beforeAll(async () => {
  mkdirSync(dataDir, { recursive: true });
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) await c.stop('SIGKILL');
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('crash safety: kill -9 with 200 documents in flight, restart on the same data dir', () => {
  it('every document ends aceptado, sent to Hacienda exactly once; every webhook delivered at least once', { timeout: 150_000 }, async () => {
    // --- first run: account, issuer, 200 submissions ----------------------------------------------------
    const first = await serve();
    const created = await runCli(['accounts', 'create', BASE, '--password-stdin', '--webhook-url', receiver.url, '--data-dir', dataDir], { env, stdin: `${PASSWORD}\n` });
    expect(created.code, created.stderr).toBe(0);
    receiver.secret = created.stdout.trim();
    expect(receiver.secret).toMatch(/^whsec_/);
    const login = await postJson(`${first.ready.authUrl}/login`, { base: BASE, password: PASSWORD });
    expect(login.status, login.text).toBe(200);
    const token = login.body.token as string;
    const reg = await postJson(`${first.ready.baseUrl}/api/enviar/emisor`, makeTestIssuer().issuer, token);
    expect(reg.status, reg.text).toBe(200);

    const claves = await mapLimit(
      Array.from({ length: N }, (_, i) => i + 1),
      16,
      async (n) => {
        const body = validInvoice();
        body.numeroReferencia = n;
        const r = await postJson(`${first.ready.baseUrl}/api/enviar/items`, body, token);
        if (r.status !== 200 || r.body?.status !== 'success') throw new Error(`submission ${n}: ${r.status} ${r.text}`);
        return r.body.clave as string;
      },
    );
    expect(new Set(claves).size).toBe(N);
    for (const c of claves) expect(c).toMatch(/^\d{50}$/);

    // --- kill 1: mid-sending ------------------------------------------------------------------------------
    const health = async (s: Spawned<Ready>) => (await getJson(`${s.ready.haciendaUrl}/_emulator/health`)).body as { receptions: number };
    await waitUntil(async () => (await health(first)).receptions >= N / 4, {
      timeoutMs: 60_000,
      intervalMs: 20,
      label: `the emulator to receive ${N / 4} documents`,
      describe: () => tail(first),
    });
    await kill9(first);
    const kill1 = snapshot();
    console.log('kill 1 (mid-sending):', JSON.stringify(kill1));
    expect(kill1.documents).toBe(N); // every 200 answer was committed before it was sent
    expect(kill1.receptions, 'documents still to send at the kill').toBeLessThan(N);
    expect(kill1.pendiente).toBeGreaterThan(0);

    // --- restart 1; kill 2: mid-delivery ------------------------------------------------------------------
    const second = await serve();
    const seenAfterKill1 = receiver.claves().size;
    await waitUntil(() => receiver.claves().size >= Math.min(N, seenAfterKill1 + 20), {
      timeoutMs: 60_000,
      label: 'webhooks after the first restart',
      describe: () => `${receiver.claves().size}/${N} delivered\n${tail(second)}`,
    });
    await kill9(second);
    const kill2 = snapshot();
    console.log('kill 2 (mid-delivery):', JSON.stringify(kill2));

    // --- restart 2: everything completes ------------------------------------------------------------------
    const third = await serve();
    const t0 = Date.now();
    await waitUntil(() => claves.every((c) => receiver.claves().has(c)), {
      timeoutMs: 60_000,
      intervalMs: 100,
      label: `webhooks of all ${N} documents`,
      describe: () => `${claves.filter((c) => receiver.claves().has(c)).length}/${N} delivered\n${tail(third)}`,
    });
    console.log(`restart 2 → all ${N} webhooks delivered in ${Date.now() - t0} ms`);

    // The emulator's record (kept across both restarts): one reception per clave, one accepted POST, no duplicate.
    const recs = (await getJson(`${third.ready.haciendaUrl}/_emulator/receptions`)).body.receptions as {
      clave: string;
      estado: string;
      acceptedPosts: number;
      duplicatePosts: number;
    }[];
    expect(recs).toHaveLength(N);
    expect(new Set(recs.map((r) => r.clave))).toEqual(new Set(claves));
    expect(recs.filter((r) => r.acceptedPosts !== 1 || r.duplicatePosts !== 0 || r.estado !== 'aceptado')).toEqual([]);

    // The receptor mails run after the documents' own jobs: the queue empties once they are written too.
    await waitUntil(() => readDb('fecr.db', (db) => count(db, 'SELECT COUNT(*) AS n FROM jobs WHERE done_at IS NULL')) === 0, {
      timeoutMs: 60_000,
      intervalMs: 100,
      label: 'the receptor mails after the webhooks',
      describe: () => tail(third),
    });

    // Graceful stop, then the store: every document aceptado with Mensaje 1, one delivered webhook each, no job left.
    expect(await third.stop('SIGTERM'), tail(third)).toBe(0);
    const after = readDb('fecr.db', (db) => ({
      docs: db.prepare('SELECT clave, state, mensaje FROM documents').all() as { clave: string; state: string; mensaje: number | null }[],
      deliveries: db.prepare('SELECT document_id, message_id, state FROM webhook_deliveries').all() as { document_id: number; message_id: string; state: string }[],
      openJobs: count(db, 'SELECT COUNT(*) AS n FROM jobs WHERE done_at IS NULL'),
    }));
    expect(after.docs).toHaveLength(N);
    expect(after.docs.filter((d) => d.state !== 'aceptado' || d.mensaje !== 1)).toEqual([]);
    expect(after.deliveries).toHaveLength(N);
    expect(new Set(after.deliveries.map((d) => d.document_id)).size).toBe(N);
    expect(after.deliveries.filter((d) => d.state !== 'entregado')).toEqual([]);
    expect(after.openJobs).toBe(0);

    // The receiver: every delivery signed; one webhook-id per document however often it came; Mensaje 1, right Clave.
    expect(receiver.received.filter((r) => !r.verified).map((r) => r.error)).toEqual([]);
    const messageIds = new Map(after.deliveries.map((d) => [d.message_id, d]));
    for (const clave of claves) {
      const got = receiver.received.filter((r) => r.clave === clave);
      expect(got.length).toBeGreaterThanOrEqual(1);
      const ids = new Set(got.map((g) => g.headers['webhook-id']));
      expect(ids.size).toBe(1);
      expect(messageIds.has([...ids][0]!)).toBe(true);
      const m = parseMensajeHaciendaXml(Buffer.from(got[0]!.payload.folioDetails[0].encodedFile, 'base64').toString('utf8'));
      expect([m.clave, m.mensaje]).toEqual([clave, 1]);
    }
    console.log(`webhook requests received: ${receiver.received.length} for ${N} documents`);
  });
});
