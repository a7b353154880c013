// Issue 37 point 10, the smaller items, each on the real thing:
// - an existing data dir's master.key left 0644 is closed to 0600 when opened; the emulator's emulator.db and its
//   -wal/-shm are created 0600 (src/adapters/owner-only.ts);
// - the Maildir watcher refuses a symlinked .fecr-set-aside (or one of its subfolders) and never writes a set-aside
//   copy through a link planted in its tmp/ (O_EXCL | O_NOFOLLOW);
// - SIGTERM of a process holding archive verify's scratch index removes $TMPDIR/fecr-index-* and still ends it by
//   that signal (src/adapters/temp-cleanup.ts);
// - `fecr test` keeps its throwaway master key in memory (no master.key in $TMPDIR/fecr-test-run-*), removes its
//   data dir on SIGTERM, and a run killed with SIGKILL leaves a dir the next run removes (one kept with --keep stays);
// - a connection PostgreSQL terminated is logged by the queue as a one-line warning, no stack (queue-log.ts).
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { MaildirSource } from '../src/client/mailbox-maildir.js';
import { SqliteStore } from '../src/emulator/sqlite-store.js';
import { loadMasterKey } from '../src/service/secrets.js';
import { graphileLog, logRetried, NOT_SETTLED } from '../src/service/delivery/queue-log.js';
import { BIN } from './helpers/bin.js';
import { tempDir } from './helpers/cli.js';
import { childEnv } from './helpers/hermetic-env.js';
import { PG_ADMIN_URL, PG_AVAILABLE } from './helpers/stores.js';

const root = tempDir('fecr-leftovers-');
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (f: string) => (statSync(f).mode & 0o777).toString(8);
const ROOT_DIR = join(import.meta.dirname, '..');

describe('file modes in an existing data dir', () => {
  it('a master.key left 0644 is 0600 once opened; emulator.db and its -wal/-shm are created 0600', async () => {
    const dir = join(root, 'data');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'master.key'), Buffer.alloc(32, 7).toString('base64') + '\n');
    chmodSync(join(dir, 'master.key'), 0o644);
    const { source } = await loadMasterKey({ dataDir: dir, env: {}, noKeychain: true });
    expect(source).toBe('file');
    expect(mode(join(dir, 'master.key'))).toBe('600');
    const store = new SqliteStore(join(dir, 'emulator.db'));
    try {
      const files = readdirSync(dir).filter((f) => f.startsWith('emulator.db'));
      expect(files).toContain('emulator.db');
      for (const f of files) expect([f, mode(join(dir, f))]).toEqual([f, '600']);
    } finally {
      store.close();
    }
  });
});

describe('the Maildir watcher\'s set-aside folder', () => {
  const maildir = (name: string) => {
    const d = join(root, name);
    for (const s of ['new', 'cur', 'tmp']) mkdirSync(join(d, s), { recursive: true });
    return d;
  };

  it('a symlinked .fecr-set-aside is refused naming it; nothing is written where it points', async () => {
    const d = maildir('md-link');
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    symlinkSync(elsewhere, join(d, '.fecr-set-aside'));
    await expect(MaildirSource.open(d)).rejects.toThrow(/\.fecr-set-aside: a symlink where fecr keeps its own folder: refused/);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('fecr makes it 0700, and a link planted in its tmp/ is not written through', async () => {
    const d = maildir('md-tmp');
    const src = await MaildirSource.open(d);
    expect(mode(join(d, '.fecr-set-aside'))).toBe('700');
    writeFileSync(join(d, 'new', 'm1'), 'Subject: x\r\n\r\nbody');
    const victim = join(root, 'victim.txt');
    writeFileSync(victim, 'untouched');
    symlinkSync(victim, join(d, '.fecr-set-aside', 'tmp', 'm1'));
    await src.setAside({ id: 'new/m1' }, Buffer.from('Subject: x\r\n\r\nbody'), ['no comprobante']);
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    const copy = join(d, '.fecr-set-aside', 'cur', 'm1:2,');
    expect(readFileSync(copy, 'utf8')).toContain('body');
    expect(mode(copy)).toBe('600');
  });
});

/** Runs a TypeScript snippet in a child (tsx), its TMPDIR given; resolves with the child once `ready` is printed. */
function child(code: string, tmp: string): Promise<{ proc: ReturnType<typeof spawn>; out: () => string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT_DIR, env: childEnv({ TMPDIR: tmp }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', () => out.includes('ready') && resolve({ proc, out: () => out }));
    proc.once('exit', () => reject(new Error(`child ended before ready: ${out}`)));
  });
}

const ended = (proc: ReturnType<typeof spawn>) => new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once('exit', (code, signal) => r({ code, signal })));

describe('temporary folders on SIGTERM', () => {
  it("archive verify's scratch index: $TMPDIR/fecr-index-* is removed, and the process ends by SIGTERM", async () => {
    const tmp = join(root, 'tmp-index');
    mkdirSync(tmp, { recursive: true });
    const { proc } = await child(`import { ScratchFileIndex } from './src/store/scratch-index.ts'; const i = new ScratchFileIndex(); i.add('a', 'b', 1); console.log('ready'); setInterval(() => {}, 1000);`, tmp);
    expect(readdirSync(tmp).filter((n) => n.startsWith('fecr-index-'))).toHaveLength(1);
    const end = ended(proc);
    proc.kill('SIGTERM');
    expect((await end).signal).toBe('SIGTERM');
    // (tsx keeps its cache there too.)
    expect(readdirSync(tmp).filter((n) => n.startsWith('fecr-index-'))).toEqual([]);
  }, 60_000);
});

describe('fecr test: its throwaway data dir', () => {
  const work = join(root, 'ftest');
  mkdirSync(work, { recursive: true });
  cpSync(join(ROOT_DIR, 'fixtures', 'test-suite', '01-factura-servicios.json'), join(work, 'a.json'));

  /** `fecr test a.json` with TMPDIR `tmp`; resolves once it names its data dir. */
  function startTest(tmp: string, args: string[] = []): Promise<{ proc: ReturnType<typeof spawn>; dataDir: string; done: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }> {
    const proc = spawn(process.execPath, [BIN, 'test', 'a.json', ...args], { cwd: work, env: childEnv({ HOME: root, TMPDIR: tmp, FECR_NO_KEYCHAIN: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
    const done = ended(proc);
    let err = '';
    return new Promise((resolve, reject) => {
      proc.stderr!.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /data dir ([^,]+),/.exec(err);
        if (m) resolve({ proc, dataDir: m[1]!, done });
      });
      void done.then(() => reject(new Error(`fecr test ended before naming its data dir: ${err}`)));
    });
  }

  it('no master.key on disk; SIGTERM removes the data dir; after SIGKILL the next run removes the one left (not a --keep one)', async () => {
    const tmp = join(root, 'tmp-test');
    mkdirSync(tmp, { recursive: true });
    // SIGTERM: the documents in flight finish, the data dir goes.
    const t1 = await startTest(tmp);
    expect(existsSync(join(t1.dataDir, 'master.key'))).toBe(false);
    t1.proc.kill('SIGTERM');
    await t1.done;
    expect(existsSync(t1.dataDir)).toBe(false);
    // SIGKILL: nothing can run; its dir is left, without a key.
    const t2 = await startTest(tmp);
    t2.proc.kill('SIGKILL');
    await t2.done;
    expect(existsSync(t2.dataDir)).toBe(true);
    expect(existsSync(join(t2.dataDir, 'master.key'))).toBe(false);
    // A kept one (--keep) has its key, and stays.
    const t3 = await startTest(tmp, ['--keep']);
    expect((await t3.done).code).toBe(0);
    expect(existsSync(join(t3.dataDir, 'master.key'))).toBe(true);
    // The next run removes the killed run's dir, keeps the kept one, and its own is gone after it.
    const t4 = await startTest(tmp);
    expect((await t4.done).code).toBe(0);
    expect(readdirSync(tmp).sort()).toEqual([t3.dataDir.split('/').pop()]);
  }, 180_000);
});

describe.skipIf(!PG_AVAILABLE)('a terminated PostgreSQL connection in the queue\'s log', () => {
  it('is a one-line warning without a stack; another error stays an error', async () => {
    // A real terminated backend: the client's error as pg reports it.
    const c = new pg.Client({ connectionString: PG_ADMIN_URL, application_name: 'fecr-terminated-test' });
    await c.connect();
    // pg may report the end more than once (the terminated backend, then the socket's close): every one is handled.
    const gotError = new Promise<Error>((r) => c.on('error', r));
    const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query('select pg_terminate_backend($1)', [pid]);
    await admin.end();
    const terminated = await gotError;
    await c.end().catch(() => undefined);

    const lines: { level: number; msg: string; err?: unknown; stack?: unknown }[] = [];
    const log = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _e, cb) => (lines.push(JSON.parse(chunk.toString())), cb()) }));
    graphileLog(log)('error', `PostgreSQL idle client generated error: ${terminated.message}`, { error: terminated });
    logRetried(log, terminated, 'leasing jobs failed');
    // queue.ts's own throw for a job it left for another run, as graphile-worker logs it (seen in test/reliability-postgres).
    graphileLog(log)('error', `Failed task 240 (fecr_webhook, 55.98ms, attempt 1 of 32767) with error '${NOT_SETTLED}':\n  Error: ${NOT_SETTLED}\n      at PgQueue.runQueued (queue.ts:368:25)`, { error: new Error(NOT_SETTLED) });
    graphileLog(log)('error', 'something else broke', { error: new Error('boom') });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, `PostgreSQL idle client generated error: ${terminated.message}`],
      [40, 'leasing jobs failed (database connection lost; retried)'],
      [40, `Failed task 240 (fecr_webhook, 55.98ms, attempt 1 of 32767) with error '${NOT_SETTLED}':`],
      [50, 'something else broke'],
    ]);
    for (const l of lines.slice(0, 3)) expect(JSON.stringify(l)).not.toMatch(/\n\s+at /);
  });
});

