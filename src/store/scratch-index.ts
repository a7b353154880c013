/**
 * A throwaway on-disk index of files by name (sha256, size, seen in a listing or not), for work whose list of files
 * grows with its input: `fecr archive verify` of a year (issue 29) keeps the files it hashed here instead of a map in
 * memory, so its memory does not grow with the archive. One SQLite file in a temporary directory of its own, deleted
 * on close; no WAL and no fsync (nothing here outlives the process).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { removeOnSignal } from '../adapters/temp-cleanup.js';

export interface IndexedFile {
  sha256: string;
  size: number;
  /** What the caller noted of the file (JSON text), or null. */
  facts: string | null;
}

export class ScratchFileIndex {
  private readonly dir: string;
  private readonly db: SQLite.Database;
  private readonly insert: SQLite.Statement<[string, string, number, string | null]>;
  private readonly get: SQLite.Statement<[string]>;
  private readonly getFacts: SQLite.Statement<[string]>;
  private readonly mark: SQLite.Statement<[string]>;
  private count = 0;
  /** Removed on SIGINT/SIGTERM too (issue 37): nothing of it outlives the process. */
  private readonly forget: () => void;

  constructor() {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'fecr-index-'));
    this.forget = removeOnSignal(this.dir);
    this.db = new SQLite(path.join(this.dir, 'index.db'));
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.pragma('cache_size = -8192'); // 8 MiB at most in memory
    this.db.exec('CREATE TABLE files (name TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, listed INTEGER NOT NULL DEFAULT 0, facts TEXT) WITHOUT ROWID');
    this.insert = this.db.prepare('INSERT OR IGNORE INTO files (name, sha256, size, facts) VALUES (?, ?, ?, ?)');
    this.get = this.db.prepare('SELECT sha256, size, facts FROM files WHERE name = ?');
    this.getFacts = this.db.prepare('SELECT facts FROM files WHERE name = ?');
    this.mark = this.db.prepare('UPDATE files SET listed = 1 WHERE name = ?');
  }

  /** Adds a file; false when that name was already there (the first one is kept). */
  add(name: string, sha256: string, size: number, facts: string | null = null): boolean {
    const added = this.insert.run(name, sha256, size, facts).changes === 1;
    if (added) this.count++;
    return added;
  }

  /** The file of that name, marked as listed; undefined when there is none. */
  takeListed(name: string): IndexedFile | undefined {
    const row = this.get.get(name) as IndexedFile | undefined;
    if (row) this.mark.run(name);
    return row;
  }

  /** What was noted of the file of that name (not marking it listed); null when nothing or no such file. */
  factsOf(name: string): string | null {
    return (this.getFacts.get(name) as { facts: string | null } | undefined)?.facts ?? null;
  }

  /** The names never taken by takeListed, in name order, a page at a time. */
  *unlisted(): Generator<string> {
    const page = this.db.prepare('SELECT name FROM files WHERE listed = 0 AND name > ? ORDER BY name LIMIT 500');
    let after = '';
    for (;;) {
      const rows = page.all(after) as { name: string }[];
      if (rows.length === 0) return;
      for (const r of rows) yield r.name;
      after = rows[rows.length - 1]!.name;
    }
  }

  get size(): number {
    return this.count;
  }

  close(): void {
    try {
      this.db.close();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
      this.forget();
    }
  }
}
