// A real service context for the client-API tests: SQLite file in a temp dir (or, in the postgres test project,
// a fresh PostgreSQL database), a SecretBox with a random key, a silent pino logger, the real clock and
// randomness, and Hacienda endpoints (the emulator's when given).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { resolveEndpoints } from '../../src/hacienda/index.js';
import type { ServiceContext } from '../../src/service/context.js';
import { SecretBox } from '../../src/service/secrets.js';
import { tempDir } from './cli.js';
import { openTestStore, storeText } from './stores.js';

export interface TestContext {
  ctx: ServiceContext;
  dir: string;
  dbFile: string;
  /** The bytes of the database file and its WAL, concatenated (SQLite); every row as text (PostgreSQL). */
  rawBytes(): Promise<Buffer>;
  close(): Promise<void>;
}

export async function makeServiceContext(opts: { haciendaUrl?: string; now?: () => number } = {}): Promise<TestContext> {
  const dir = tempDir('fecr-api-');
  const dbFile = join(dir, 'fecr.db');
  const store = await openTestStore({ file: dbFile });
  const ctx: ServiceContext = {
    store,
    secrets: new SecretBox(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    now: opts.now ?? Date.now,
    randomBytes: (n) => randomBytes(n),
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: opts.haciendaUrl ?? 'http://127.0.0.1:9' }) },
  };
  return {
    ctx,
    dir,
    dbFile,
    rawBytes: async () =>
      store.dialect === 'postgres'
        ? Buffer.from(await storeText(store), 'utf8')
        : Buffer.concat([dbFile, `${dbFile}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f))),
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const FIXTURES = new URL('../../fixtures/documents/', import.meta.url);

/** A fixture body by file name (without .json). */
export function fixtureBody(name: string): Record<string, any> {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8'));
}

/** The five kinds of the spec, by fixture. */
export const FIVE_KINDS = {
  FE: '01-fe-servicios-13',
  'FE exonerada': '06-fe-exoneracion-autorizacion',
  NC: '09-nc-devolucion',
  'TE sin receptor': '10-te-sin-receptor',
  'TE extranjero': '11-te-extranjero',
} as const;

/** Every kind of v4.4 (issue 15): the five of the spec and ND, FEC, FEE, REP, one fixture each. */
export const ALL_KINDS = {
  ...FIVE_KINDS,
  ND: '14-nd-ajuste-servicios',
  FEC: '17-fec-agricultor',
  FEE: '20-fee-cafe-usd',
  REP: '23-rep-credito-90-dias',
} as const;
