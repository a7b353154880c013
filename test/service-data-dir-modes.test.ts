// Issue 25, point 10e: the data dir is 0700 and the database files (fecr.db, -wal, -shm) 0600, whatever the umask
// and whatever an older fecr left: an existing 0755 data dir is closed when this user owns it (a warning when it is
// another user's), and a 0644 fecr.db, -wal or -shm is made 0600. Through the CLI (`fecr accounts create`, which
// opens the local service) and openService itself, with the database open (WAL files present). POSIX only.
import { chmodSync, chownSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openService } from '../src/service/runtime.js';
import { runCli, tempDir } from './helpers/cli.js';

const mode = (p: string) => statSync(p).mode & 0o777;
const posix = process.platform !== 'win32';

describe.skipIf(!posix)('data dir and database modes', () => {
  it('a new data dir is 0700 and fecr.db 0600, with umask 022', async () => {
    const home = tempDir('fecr-modes-new-');
    const data = join(home, 'data');
    const r = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: { HOME: home, FECR_DATA_DIR: data, FECR_NO_KEYCHAIN: '1' }, stdin: 'clave-larga-123\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(mode(data)).toBe(0o700);
    expect(mode(join(data, 'fecr.db'))).toBe(0o600);
    // Open: SQLite's -wal and -shm take the database's mode.
    const fresh = join(home, 'fresh');
    const opened = await openService({ dataDir: fresh, env: { HOME: home }, startLocalEmulator: false });
    try {
      expect(mode(fresh)).toBe(0o700);
      for (const f of ['fecr.db', 'fecr.db-wal', 'fecr.db-shm']) expect(mode(join(fresh, f)), f).toBe(0o600);
    } finally {
      await opened.close();
    }
  });

  it('an existing 0755 data dir with a 0644 fecr.db, -wal and -shm is closed: 0700 and 0600, while open too', async () => {
    const home = tempDir('fecr-modes-old-');
    const data = join(home, 'data');
    mkdirSync(data, { mode: 0o755 });
    chmodSync(data, 0o755);
    // What an older fecr left: the database made by SQLite under umask 022.
    const first = await openService({ dataDir: data, env: { HOME: home }, startLocalEmulator: false });
    await first.close();
    for (const f of ['fecr.db', 'fecr.db-wal', 'fecr.db-shm']) {
      const p = join(data, f);
      closeSync(openSync(p, 'a'));
      chmodSync(p, 0o644);
    }
    chmodSync(data, 0o755);
    const warnings: string[] = [];
    const opened = await openService({ dataDir: data, env: { HOME: home }, startLocalEmulator: false, warn: (m) => warnings.push(m) });
    try {
      expect(mode(data)).toBe(0o700);
      for (const f of ['fecr.db', 'fecr.db-wal', 'fecr.db-shm']) expect(mode(join(data, f)), f).toBe(0o600);
      expect(warnings).toEqual([]);
    } finally {
      await opened.close();
    }
  });

  it.skipIf(process.getuid?.() !== 0)("a data dir of another user is not changed: a warning says so (run as root, the dir chowned away)", async () => {
    const home = tempDir('fecr-modes-other-');
    const data = join(home, 'data');
    mkdirSync(data, { mode: 0o755 });
    chmodSync(data, 0o755);
    chownSync(data, 4242, 4242);
    const warnings: string[] = [];
    const opened = await openService({ dataDir: data, env: { HOME: home }, startLocalEmulator: false, warn: (m) => warnings.push(m) });
    await opened.close();
    expect(mode(data)).toBe(0o755);
    expect(warnings).toEqual([`data dir ${data} is mode 0755 and owned by another user: other users may read its database and keys; its owner should chmod 700 ${data}`]);
  });
});
