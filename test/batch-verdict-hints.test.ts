// Issue 31: in a local batch the embedded emulator (on its thread) tells the worker each verdict as it stores it, and
// the worker queries that document's status then: one status query per document, none before the verdict (the batch
// used to make 2.8, 1.8 of them too early). VerdictHints on its own: a verdict told before the send was recorded,
// forgotten documents, bounded memory.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VerdictHints } from '../src/service/delivery/verdict-hints.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-hints-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => runCli(args, { env, cwd: work });

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  const r = await fecr(['emisor', 'register', 'issuer.json']);
  expect(r.code, r.stderr).toBe(0);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a local batch hears each verdict from the embedded emulator', () => {
  it('60 documents: every one aceptado after exactly one status query, none of them early', async () => {
    const head = 'emisor,numeroReferencia,tipoDoc,fechaEmision,codigoActividad,receptorNombre,receptorTipo,receptorNumero,moneda,medioPago,condicionVenta,codigo,detalle,cantidad,unidadMedida,precioUnitario,codigoTarifa\n';
    const rows = Array.from({ length: 60 }, (_, i) => `3101123456,${i + 1},1,2026-03-02T09:15:00-06:00,6201.0,DISTRIBUIDORA EL CAFETAL LIMITADA,02,3101987654,CRC,04,01,8311200000000,Consultoría,${1 + (i % 5)},h,50000,08\n`);
    writeFileSync(join(work, 'hints.csv'), head + rows.join(''));
    const r = await fecr(['batch', 'hints.csv', '--wait', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 60, sent: 60, aceptado: 60, pending: 0 });
    const db = new SQLite(join(dir, 'data', 'fecr.db'), { readonly: true });
    try {
      const polls = db.prepare("select attempts, last_error, done_at from jobs where type = 'poll'").all() as { attempts: number; last_error: string | null; done_at: number | null }[];
      expect(polls).toHaveLength(60);
      // attempts counts the leases: 1 = the one query that found the verdict (an early one would have rescheduled it).
      expect(polls.filter((p) => p.attempts !== 1 || p.last_error !== null || p.done_at === null)).toEqual([]);
    } finally {
      db.close();
    }
  }, 120_000);
});

describe('VerdictHints', () => {
  it('a verdict told after the send: that document is wanted once', () => {
    const wanted: number[][] = [];
    const h = new VerdictHints((ids) => wanted.push(ids));
    h.sentDocument('A', 1);
    h.sentDocument('B', 2);
    h.decided(['B', 'A', 'unknown']);
    expect(wanted).toEqual([[2, 1]]);
    h.decided(['A']); // told again: already handed over, and remembered as early (harmless)
    expect(wanted).toEqual([[2, 1]]);
  });

  it('a verdict told before the send was recorded: wanted as soon as it is', () => {
    const wanted: number[][] = [];
    const h = new VerdictHints((ids) => wanted.push(ids));
    h.decided(['C']);
    expect(wanted).toEqual([]);
    h.sentDocument('C', 3);
    expect(wanted).toEqual([[3]]);
  });

  it('a forgotten document is not wanted; the memory is bounded', () => {
    const wanted: number[][] = [];
    const h = new VerdictHints((ids) => wanted.push(ids), 3);
    h.sentDocument('D', 4);
    h.forget('D');
    h.decided(['D']);
    expect(wanted).toEqual([]);
    for (let i = 0; i < 10; i++) h.sentDocument(`S${i}`, 100 + i);
    h.decided(['S0', 'S9']); // S0 was dropped (the oldest), S9 kept
    expect(wanted).toEqual([[109]]);
  });
});
