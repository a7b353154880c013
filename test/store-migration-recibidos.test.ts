// Migration 0005 (the buyer's side) on a SQLite store that already holds webhook deliveries: SQLite cannot drop a NOT
// NULL, so webhook_deliveries is rebuilt with document_id nullable and recibido_id; every row, and the jobs that point
// at them, must come through intact, with the foreign keys still enforced.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/store/migrations/index.js';
import { tempDir } from './helpers/cli.js';

const dir = tempDir('fecr-migration-0005-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 0005-recibidos on SQLite', () => {
  it('keeps the deliveries and their jobs, makes document_id nullable, keeps foreign keys on', async () => {
    const sqlite = new SQLite(join(dir, 'fecr.db'));
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) });
    const migrator = new Migrator({ db, provider: migrationProvider });
    const before = await migrator.migrateTo('0004-document-parties');
    expect(before.error).toBeUndefined();
    const now = Date.now();
    sqlite.exec(`INSERT INTO accounts (base, password_hash, disabled, created_at, updated_at) VALUES ('a', 'x', 0, ${now}, ${now})`);
    sqlite.exec(`INSERT INTO issuers (account_id, identificacion, record_json, secrets_enc, created_at, updated_at) VALUES (1, '3101123456', '{}', 'x', ${now}, ${now})`);
    sqlite.exec(
      `INSERT INTO documents (account_id, issuer_id, clave, kind, sucursal, terminal, numero_referencia, body_hash, state, xml, fecha_emision, total_comprobante, moneda, created_at, updated_at)
       VALUES (1, 1, '${'5'.repeat(50)}', 'FE', 1, 1, 1, 'h', 'aceptado', '<x/>', '2026-03-01T00:00:00-06:00', '1', 'CRC', ${now}, ${now})`,
    );
    sqlite.exec(`INSERT INTO webhook_deliveries (account_id, document_id, message_id, url, payload, state, attempts, created_at) VALUES (1, 1, 'msg_1', 'http://x', '{}', 'pendiente', 2, ${now})`);
    sqlite.exec(`INSERT INTO jobs (type, document_id, delivery_id, run_at, attempts, created_at) VALUES ('webhook', NULL, 1, ${now}, 0, ${now})`);

    const after = await migrator.migrateToLatest();
    expect(after.error).toBeUndefined();
    expect(sqlite.prepare('SELECT id, document_id, recibido_id, message_id, attempts FROM webhook_deliveries').all()).toEqual([
      { id: 1, document_id: 1, recibido_id: null, message_id: 'msg_1', attempts: 2 },
    ]);
    expect(sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    // document_id is nullable now; recibido_id and the jobs' delivery_id are enforced foreign keys.
    sqlite.exec(`INSERT INTO webhook_deliveries (account_id, document_id, message_id, url, payload, state, attempts, created_at) VALUES (1, NULL, 'msg_2', 'http://x', '{}', 'pendiente', 0, ${now})`);
    expect(() => sqlite.exec(`INSERT INTO webhook_deliveries (account_id, recibido_id, message_id, url, payload, state, created_at) VALUES (1, 99, 'msg_3', 'u', '{}', 'pendiente', ${now})`)).toThrow(/FOREIGN KEY/);
    expect(() => sqlite.exec(`INSERT INTO jobs (type, delivery_id, run_at, attempts, created_at) VALUES ('webhook', 99, ${now}, 0, ${now})`)).toThrow(/FOREIGN KEY/);
    await db.destroy();
  });
});
