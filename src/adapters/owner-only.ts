/**
 * Files only their owner may read (0600): fecr's SQLite databases (the service's fecr.db, the embedded emulator's
 * emulator.db: documents, sealed secrets, every signed XML) and the master key. One place for the rule, used by
 * store/index.ts, emulator/sqlite-store.ts and service/secrets.ts. POSIX only (Windows has no such modes); a file of
 * another user is left as it is (the data dir's check warns about the dir, service/data-dir.ts).
 */
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';

/** Closes `file` to 0600 when it is more open and ours; absent or not ours: left alone. */
export function ownerOnlyFile(file: string): void {
  if (process.platform === 'win32') return;
  try {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  } catch {
    // Absent, or not ours to change.
  }
}

/**
 * A SQLite database readable by its owner only: created 0600 before SQLite opens it (SQLite gives its -wal and -shm
 * files the database's mode), and a database, -wal or -shm left more open (an older fecr) closed.
 */
export function ownerOnlyDatabase(file: string): void {
  if (process.platform === 'win32' || file === ':memory:') return;
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) ownerOnlyFile(f);
}
