/** Persistent emulator state in one SQLite file (better-sqlite3), same contract as MemoryStore. */
import Database from 'better-sqlite3';
import { ownerOnlyDatabase } from '../adapters/owner-only.js';
import type { EmulatorEnvironment, EmulatorStore, ReceptionRecord } from './store.js';

type Row = { data: string; xml: Buffer; respuesta: Buffer | null };

export class SqliteStore implements EmulatorStore {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(file: string) {
    // Every signed XML it received: its owner's only, as the service's database (issue 37).
    ownerOnlyDatabase(file);
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    ownerOnlyDatabase(file);
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS receptions (
        env TEXT NOT NULL, key TEXT NOT NULL, estado TEXT NOT NULL, username TEXT NOT NULL, received_at INTEGER NOT NULL,
        data TEXT NOT NULL, xml BLOB NOT NULL, respuesta BLOB,
        PRIMARY KEY (env, key));
      CREATE INDEX IF NOT EXISTS receptions_estado ON receptions (estado);
      CREATE TABLE IF NOT EXISTS consecutivos (
        env TEXT NOT NULL, issuer TEXT NOT NULL, consecutivo TEXT NOT NULL, key TEXT NOT NULL,
        PRIMARY KEY (env, issuer, consecutivo));
      CREATE TABLE IF NOT EXISTS taxpayers (id TEXT PRIMARY KEY, json TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS users (username TEXT PRIMARY KEY, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, logins INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS revoked_sessions (sid TEXT PRIMARY KEY, until INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
    `);
    this.stmts = {
      get: this.db.prepare<[string, string], Row>('SELECT data, xml, respuesta FROM receptions WHERE env = ? AND key = ?'),
      insert: this.db.prepare(
        'INSERT OR IGNORE INTO receptions (env, key, estado, username, received_at, data, xml, respuesta) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      update: this.db.prepare('UPDATE receptions SET estado = ?, data = ?, xml = ?, respuesta = ? WHERE env = ? AND key = ?'),
      listAll: this.db.prepare<[], Row>('SELECT data, xml, respuesta FROM receptions ORDER BY received_at'),
      count: this.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM receptions'),
      pending: this.db.prepare<[], Row>("SELECT data, xml, respuesta FROM receptions WHERE estado IN ('recibido', 'procesando')"),
      claim: this.db.prepare('INSERT OR IGNORE INTO consecutivos (env, issuer, consecutivo, key) VALUES (?, ?, ?, ?)'),
      owner: this.db.prepare<[string, string, string], { key: string }>('SELECT key FROM consecutivos WHERE env = ? AND issuer = ? AND consecutivo = ?'),
      getTaxpayer: this.db.prepare<[string], { json: string }>('SELECT json FROM taxpayers WHERE id = ?'),
      putTaxpayer: this.db.prepare('INSERT OR REPLACE INTO taxpayers (id, json) VALUES (?, ?)'),
      allTaxpayers: this.db.prepare<[], { id: string; json: string }>('SELECT id, json FROM taxpayers'),
      user: this.db.prepare(
        'INSERT INTO users (username, first_seen, last_seen, logins) VALUES (?, ?, ?, 1) ON CONFLICT(username) DO UPDATE SET last_seen = excluded.last_seen, logins = logins + 1',
      ),
      users: this.db.prepare<[], { username: string; first_seen: number; last_seen: number; logins: number }>('SELECT * FROM users'),
      revoke: this.db.prepare('INSERT OR REPLACE INTO revoked_sessions (sid, until) VALUES (?, ?)'),
      revoked: this.db.prepare<[string], { sid: string }>('SELECT sid FROM revoked_sessions WHERE sid = ?'),
      getMeta: this.db.prepare<[string], { v: string }>('SELECT v FROM meta WHERE k = ?'),
      setMeta: this.db.prepare('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)'),
    };
  }

  private toRecord(row: Row): ReceptionRecord {
    const data = JSON.parse(row.data) as Omit<ReceptionRecord, 'xml' | 'respuestaXml'>;
    const rec: ReceptionRecord = { ...data, xml: row.xml };
    if (row.respuesta) rec.respuestaXml = row.respuesta;
    return rec;
  }

  private split(rec: ReceptionRecord): { data: string; xml: Buffer; respuesta: Buffer | null } {
    const { xml, respuestaXml, ...data } = rec;
    return { data: JSON.stringify(data), xml, respuesta: respuestaXml ?? null };
  }

  getReception(env: EmulatorEnvironment, key: string): ReceptionRecord | undefined {
    const row = this.stmts.get.get(env, key);
    return row ? this.toRecord(row) : undefined;
  }

  insertReception(rec: ReceptionRecord): boolean {
    const s = this.split(rec);
    const r = this.stmts.insert.run(rec.environment, rec.key, rec.estado, rec.username, rec.receivedAt, s.data, s.xml, s.respuesta);
    return r.changes === 1;
  }

  updateReception(env: EmulatorEnvironment, key: string, patch: Partial<ReceptionRecord>): ReceptionRecord | undefined {
    return this.db.transaction(() => {
      const cur = this.getReception(env, key);
      if (!cur) return undefined;
      const next = { ...cur, ...patch };
      const s = this.split(next);
      this.stmts.update.run(next.estado, s.data, s.xml, s.respuesta, env, key);
      return next;
    })();
  }

  incrementDuplicates(env: EmulatorEnvironment, key: string): void {
    this.db.transaction(() => {
      const cur = this.getReception(env, key);
      if (cur) this.updateReception(env, key, { duplicatePosts: cur.duplicatePosts + 1 });
    })();
  }

  listReceptions(filter: { environment?: EmulatorEnvironment; username?: string } = {}): ReceptionRecord[] {
    return this.stmts.listAll
      .all()
      .map((r) => this.toRecord(r))
      .filter((r) => (!filter.environment || r.environment === filter.environment) && (!filter.username || r.username === filter.username));
  }

  countReceptions(): number {
    return this.stmts.count.get()?.n ?? 0;
  }

  pendingReceptions(): ReceptionRecord[] {
    return this.stmts.pending.all().map((r) => this.toRecord(r));
  }

  claimConsecutivo(env: EmulatorEnvironment, issuer: string, consecutivo: string, key: string): string {
    this.stmts.claim.run(env, issuer, consecutivo, key);
    return this.stmts.owner.get(env, issuer, consecutivo)?.key ?? key;
  }

  getLearntTaxpayer(id: string): unknown {
    const row = this.stmts.getTaxpayer.get(id);
    return row ? JSON.parse(row.json) : undefined;
  }
  putLearntTaxpayer(id: string, value: unknown): void {
    this.stmts.putTaxpayer.run(id, JSON.stringify(value));
  }
  learntTaxpayers(): [string, unknown][] {
    return this.stmts.allTaxpayers.all().map((r) => [r.id, JSON.parse(r.json)] as [string, unknown]);
  }

  rememberUser(username: string, at: number): void {
    this.stmts.user.run(username, at, at);
  }
  users(): { username: string; firstSeen: number; lastSeen: number; logins: number }[] {
    return this.stmts.users.all().map((u) => ({ username: u.username, firstSeen: u.first_seen, lastSeen: u.last_seen, logins: u.logins }));
  }

  revokeSession(sid: string, until: number): void {
    this.stmts.revoke.run(sid, until);
  }
  isSessionRevoked(sid: string): boolean {
    return this.stmts.revoked.get(sid) !== undefined;
  }

  getMeta(key: string): string | undefined {
    return this.stmts.getMeta.get(key)?.v;
  }
  setMeta(key: string, value: string): void {
    this.stmts.setMeta.run(key, value);
  }

  close(): void {
    this.db.close();
  }
}
