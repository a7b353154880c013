// A full disk is a fault to survive, not an internal error (issue 12, defect 2):
// - the CLI in local mode, its data dir on a real 3 MB tmpfs (when this runs as root and may mount), fills it:
//   one line that names the data dir and SQLITE_FULL, exit 1, no stack trace; after space returns, every
//   document is there and the one refused goes through;
// - the client API on a SQLite database capped with max_page_count (any user): 503 with the spec's error body,
//   no row of the refused submission, and the service keeps answering; the same request succeeds once space is back.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { closeLookups } from '../src/service/lookups.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { ISSUER } from './helpers/bodies.js';
import { runCli, tempDir } from './helpers/cli.js';

const FIXTURE = new URL('../fixtures/documents/01-fe-servicios-13.json', import.meta.url);

function mountTmpfs(dir: string, size: string): boolean {
  if (process.getuid?.() !== 0) return false;
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0;
}

/** Fills the file system of `dir` but for about `leaveBytes`: a filler file to remove later. */
function fillAllBut(dir: string, leaveBytes: number): string {
  const filler = join(dir, 'filler.bin');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(16 * 1024);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch {
    // ENOSPC: full
  }
  closeSync(fd);
  const keep = Math.max(0, written - leaveBytes);
  writeFileSync(filler, Buffer.alloc(keep));
  return filler;
}

describe('CLI on a full data dir (tmpfs)', () => {
  const mnts: string[] = [];
  const canMount = (() => {
    const probe = tempDir('fecr-full-probe-');
    const ok = mountTmpfs(probe, '1m');
    if (ok) spawnSync('umount', ['-l', probe]);
    rmSync(probe, { recursive: true, force: true });
    return ok;
  })();
  afterAll(() => {
    for (const mnt of mnts) {
      spawnSync('umount', ['-l', mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });

  // Little room left: SQLite cannot even make the emulator's -shm file when the command starts. More room: a
  // statement's write fails midway (SQLITE_FULL), inside a transaction that SQLite rolls back by itself.
  it.runIf(canMount).each([
    { leave: 96 * 1024, label: 'opening' },
    { leave: 600 * 1024, label: 'writing' },
  ])('send says the data dir is full in one line, exit 1, and nothing is lost (full while $label)', async ({ leave }) => {
    const mnt = tempDir('fecr-full-');
    mnts.push(mnt);
    expect(mountTmpfs(mnt, '3m')).toBe(true);
    const home = tempDir('fecr-full-home-');
    const dataDir = join(mnt, 'data');
    mkdirSync(dataDir);
    const env = { HOME: home, FECR_NO_KEYCHAIN: '1', FECR_DATA_DIR: dataDir, FECR_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') };
    const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: ISSUER.pinCertificado, name: ISSUER.nombre });
    writeFileSync(join(home, 'issuer.json'), JSON.stringify({ ...ISSUER, certificadoHacienda: p12.toString('base64') }));
    expect((await runCli(['emisor', 'register', 'issuer.json'], { cwd: home, env })).code).toBe(0);
    const body = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    const send = (n: number) => {
      writeFileSync(join(home, `d${n}.json`), JSON.stringify({ ...body, numeroReferencia: n }));
      return runCli(['send', `d${n}.json`, '--wait', '--timeout', '20', ...(process.env.DBG ? ['--debug'] : [])], { cwd: home, env });
    };
    expect((await send(1)).code).toBe(0);

    const filler = fillAllBut(mnt, leave);
    const sent: number[] = [1];
    let refused: { n: number; stderr: string; code: number } | undefined;
    for (let n = 2; n < 80 && !refused; n++) {
      const r = await send(n);
      if (r.code === 0) sent.push(n);
      else refused = { n, stderr: r.stderr, code: r.code };
    }
    expect(refused, 'the disk never filled').toBeDefined();
    expect(refused!.code).toBe(1);
    // SQLITE_FULL from a statement, or the I/O error SQLite gives when its -wal/-shm file cannot grow.
    const line = new RegExp(`^error: the data dir ${dataDir} is full \\((SQLITE_FULL|SQLITE_IOERR\\w*|SQLITE_CANTOPEN)\\); nothing was lost: free space and run the command again\n$`);
    expect(refused!.stderr).toMatch(line);
    expect(refused!.stderr).not.toMatch(/internal|rollback|\n\s+at /);

    unlinkSync(filler);
    // Every document sent before is there; the refused one goes through now, with the same number. When the disk
    // filled after the document was stored (its send job then runs on this start), the same body is "already sent".
    const again = await send(refused!.n);
    expect(again.stderr).toMatch(/^(already sent as \d{50}\n)?$/);
    expect(again.code).toBe(0);
    const list = await runCli(['documents', 'list', '--json'], { cwd: home, env });
    const docs = JSON.parse(list.stdout) as { estado: string; consecutivo: string }[];
    expect(docs.length).toBe(sent.length + 1);
    expect(docs.every((d) => d.estado === 'aceptado')).toBe(true);
    rmSync(home, { recursive: true, force: true });
  }, 120_000);
});

describe('client API on a full database (max_page_count)', () => {
  let emu: RunningEmulator;
  let t: TestContext;
  let app: ReturnType<typeof buildApiApp>;
  let baseUrl: string;
  let token: string;

  const post = async (path: string, body: unknown) => {
    const res = await request(baseUrl + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as any };
  };
  const count = async () => Number((await t.ctx.store.db.selectFrom('documents').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    emu = await startEmulator();
    t = await makeServiceContext({ haciendaUrl: emu.url });
    await ensureSigningKey(t.ctx);
    await createAccount(t.ctx, { base: 'llena', password: 'contrasena-llena-1' });
    token = (await issueToken(t.ctx, { base: 'llena' }, { issuer: 'http://auth.test' })).token;
    app = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: 'http://auth.test', jwks: 'local' }) });
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: ISSUER.pinCertificado, name: ISSUER.nombre });
    expect((await post('/api/enviar/emisor', { ...ISSUER, certificadoHacienda: p12.toString('base64') })).status).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
    await closeLookups(t.ctx);
    await t?.close();
    await emu?.close();
  });

  it('answers 503 service_unavailable with the error body, keeps running, and takes the same request later', async () => {
    const db = t.ctx.store.db;
    // Checkpoint the WAL so the page count is the database's, then allow only a few pages more.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db);
    const pages = Number(((await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]!).page_count);
    await sql.raw(`pragma max_page_count = ${pages + 2}`).execute(db);
    const body = fixtureBody('01-fe-servicios-13');
    let full: Awaited<ReturnType<typeof post>> | undefined;
    let n = 1000;
    const before = await count();
    let stored = 0;
    for (; n < 1100 && !full; n++) {
      const r = await post('/api/enviar/items', { ...body, numeroReferencia: n });
      if (r.status === 200) stored++;
      else full = r;
    }
    expect(full, 'the database never filled').toBeDefined();
    expect(full!.status).toBe(503);
    expect(full!.body).toEqual({ error: 'service_unavailable', message: 'El almacenamiento del servicio está lleno; intente de nuevo más tarde' });
    expect(full!.headers['retry-after']).toBe('30');
    // Nothing half done: exactly the documents that got a 200 are stored.
    expect(await count()).toBe(before + stored);
    // Still running: reads work while full.
    expect((await post('/api/consultar/emisor', { identificacion: ISSUER.identificacion })).status).toBe(200);

    await sql`pragma max_page_count = 1073741823`.execute(db);
    const again = await post('/api/enviar/items', { ...body, numeroReferencia: n - 1 });
    expect(again.status).toBe(200);
    expect(await count()).toBe(before + stored + 1);
  });
});
