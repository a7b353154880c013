// Migration 0010 (issue 25) on SQLite and on PostgreSQL, over a store that already holds the duplicates the old import
// made (the same document imported from other bytes, some answered): per account and document (issuer + consecutivo,
// which includes the clave) the earliest answered row is kept, else the earliest row; the others become `invalido`
// with a finding naming the row kept, and keep their rows (a webhook delivery still points at one). Refused rows lose
// their bytes, not their findings. Then the unique indexes hold: a second valid row of a document is refused by the
// store itself, a refused one is not.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/store/migrations/index.js';
import { tempDir } from './helpers/cli.js';
import { createTestDatabase, PG_AVAILABLE, type TestDatabase } from './helpers/stores.js';

const dir = tempDir('fecr-migration-0010-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const clave = (consecutivo: string, codigo = '12345678') => `506010326003101987654${consecutivo}1${codigo}`;
const A = clave('00100001010000000001');
const B = clave('00100001010000000002');
const C1 = clave('00100001010000000003', '11111111');
const C2 = clave('00100001010000000003', '22222222'); // the same issuer and consecutivo as C1, another clave

async function scenario(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const before = await migrator.migrateTo('0007-jobs-by-type');
  expect(before.error).toBeUndefined();
  const now = 1_760_000_000_000;
  for (const base of ['a', 'b']) await db.insertInto('accounts').values({ base, password_hash: 'x', disabled: 0, created_at: now, updated_at: now }).execute();
  await db.insertInto('issuers').values({ account_id: 1, identificacion: '3101123456', record_json: '{}', secrets_enc: 'x', created_at: now, updated_at: now }).execute();
  for (const [i, key] of [A, C1, C2].entries()) {
    await db
      .insertInto('documents')
      .values({ account_id: 1, issuer_id: 1, clave: `${key}-0010000105000000000${i + 1}`, kind: 'MR05', sucursal: 1, terminal: 1, numero_referencia: i + 1, body_hash: `h${i}`, state: 'aceptado', xml: '<MensajeReceptor/>', fecha_emision: '2026-03-01T00:00:00-06:00', total_comprobante: '1', moneda: 'CRC', created_at: now, updated_at: now })
      .execute();
  }
  const row = (account: number, key: string, estado: string, over: Record<string, unknown> = {}) => ({
    account_id: account,
    issuer_id: account === 1 ? 1 : null,
    sha256: `${key}:${estado}:${Math.random()}`,
    clave: key,
    estado,
    iva_json: '[]',
    hallazgos_json: estado === 'invalido' ? JSON.stringify([{ path: 'xml', message: 'not well-formed XML' }]) : '[]',
    avisos_json: '[]',
    xml: '<FacturaElectronica/>',
    created_at: now,
    updated_at: now,
    ...over,
  });
  await db
    .insertInto('recibidos')
    .values([
      row(1, A, 'pendiente'), // 1: the earliest of A, never answered
      row(1, A, 'aceptado', { mensaje: 1, mensaje_document_id: 1, decided_at: now + 200 }), // 2: A answered: kept
      row(1, A, 'pendiente'), // 3: A again (a webhook delivery points at it)
      row(1, B, 'pendiente'), // 4: B, kept (the earliest, none answered)
      row(1, B, 'pendiente'), // 5
      row(1, C1, 'aceptado', { mensaje: 1, mensaje_document_id: 2, decided_at: now + 500 }), // 6: answered second
      row(1, C2, 'parcial', { mensaje: 2, mensaje_document_id: 3, decided_at: now + 300 }), // 7: answered first: kept
      row(1, A, 'invalido', { xml: 'x'.repeat(100_000) }), // 8: a refused file: its bytes go
      row(2, A, 'pendiente'), // 9: another account's: kept
    ])
    .execute();
  await db.insertInto('webhook_deliveries').values({ account_id: 1, recibido_id: 3, message_id: 'msg_1', url: 'http://x', payload: '{}', state: 'entregado', attempts: 1, created_at: now }).execute();

  const after = await migrator.migrateToLatest();
  expect(after.error).toBeUndefined();
  const rows = await db.selectFrom('recibidos').select(['id', 'estado', 'emisor_consecutivo', 'hallazgos_json', 'xml']).orderBy('id').execute();
  const last = (r: (typeof rows)[number]) => (JSON.parse(r.hallazgos_json) as { message: string }[]).at(-1)?.message ?? '';
  expect(rows.map((r) => [Number(r.id), r.estado])).toEqual([
    [1, 'invalido'],
    [2, 'aceptado'],
    [3, 'invalido'],
    [4, 'pendiente'],
    [5, 'invalido'],
    [6, 'invalido'],
    [7, 'parcial'],
    [8, 'invalido'],
    [9, 'pendiente'],
  ]);
  expect(last(rows[0]!)).toBe(`the same document as the received row 2 (clave ${A}), imported again from other bytes; that row is kept (migration 0010: it was pendiente)`);
  expect(last(rows[2]!)).toMatch(/^the same document as the received row 2 /);
  expect(last(rows[4]!)).toMatch(/^the same document as the received row 4 /);
  expect(last(rows[5]!)).toBe(`the same document as the received row 7 (clave ${C2}), imported again from other bytes; that row is kept (migration 0010: it was aceptado, answered by MensajeReceptor document 2)`);
  expect(JSON.parse(rows[7]!.hallazgos_json)).toEqual([{ path: 'xml', message: 'not well-formed XML' }]);
  expect(rows.map((r) => r.xml.length)).toEqual([21, 21, 21, 21, 21, 21, 21, 0, 21]);
  expect(rows[0]!.emisor_consecutivo).toBe('00310198765400100001010000000001');
  expect(await db.selectFrom('webhook_deliveries').select(['recibido_id']).execute()).toEqual([{ recibido_id: 3 }]);

  // The store refuses a second valid row of a document, by clave and by issuer + consecutivo; not a refused one.
  const ec = (k: string) => k.slice(9, 41);
  await expect(db.insertInto('recibidos').values(row(1, B, 'pendiente', { emisor_consecutivo: ec(B) })).execute()).rejects.toThrow(/unique/i);
  await expect(db.insertInto('recibidos').values(row(1, clave('00100001010000000002', '99999999'), 'pendiente', { emisor_consecutivo: ec(B) })).execute()).rejects.toThrow(/unique/i);
  await db.insertInto('recibidos').values(row(1, B, 'invalido', { emisor_consecutivo: ec(B), xml: '' })).execute();
  await db.insertInto('recibidos').values(row(2, B, 'pendiente', { emisor_consecutivo: ec(B) })).execute();
}

describe('migration 0010-recibidos-one-per-document', () => {
  it('on SQLite: duplicates resolved (the earliest answered, else the earliest), refused bytes dropped, unique indexes', async () => {
    const sqlite = new SQLite(join(dir, 'fecr.db'));
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) });
    try {
      await scenario(db);
      expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    } finally {
      await db.destroy();
    }
  });

  it.skipIf(!PG_AVAILABLE)('on PostgreSQL: the same', async () => {
    const database: TestDatabase = await createTestDatabase('fecr_mig0010');
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 2 }) }) });
    try {
      await scenario(db);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });
});
