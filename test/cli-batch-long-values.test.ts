// Issue 25, point 10d: a finding never echoes an input value whole. A 30 MB CSV cell (cantidad), a long unidadMedida,
// a long unknown JSON key or column name, a long numeroReferencia: each is quoted as its first 80 characters, "…"
// and its length, in the results file and on stderr, by `fecr batch --dry-run` and by a real (local) batch, whose
// findings come from the service's own validation. In-process, temp HOME.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_MAX, echo, echoQuoted } from '../src/core/echo.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-batch-long-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => runCli(args, { env, cwd: work });
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/documents/${name}.json`, import.meta.url), 'utf8')) as Record<string, any>;
const HUGE = 30 * 1024 * 1024;
/** Any output that carries 200 of the long value's characters in a row has echoed it. */
const LEAK = /(A{200}|B{200}|C{200}|D{200}|E{200})/;

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  const r = await fecr(['emisor', 'register', 'issuer.json']);
  expect(r.code, r.stderr).toBe(0);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function csvWithHugeCantidad(file: string): void {
  const csv = readFileSync(new URL('../fixtures/batch/example.csv', import.meta.url), 'utf8').split('\n');
  // Row 2's cantidad (column 16) becomes 30 MB of "A".
  const cells = csv[1]!.split(',');
  cells[15] = 'A'.repeat(HUGE);
  csv[1] = cells.join(',');
  writeFileSync(join(work, file), csv.join('\n'));
}

describe('a 30 MB CSV cell', () => {
  it.each([{ mode: 'batch --dry-run', flags: ['--dry-run'] }, { mode: 'batch (local service)', flags: [] }])('$mode: the finding quotes 80 characters, an ellipsis and the length', async ({ flags }) => {
    const file = `huge${flags.length ? '-dry' : ''}.csv`;
    csvWithHugeCantidad(file);
    const r = await fecr(['batch', file, ...flags]);
    expect(r.code).toBe(1);
    const out = join(work, `${file}${flags.length ? '.dry-run' : ''}.results.jsonl`);
    expect(statSync(out).size).toBeLessThan(10_000);
    const first = JSON.parse(readFileSync(out, 'utf8').split('\n').find((l) => l.includes('"row":2'))!) as { errors: { path: string; message: string }[] };
    expect(first.errors).toEqual([{ path: 'row 2.cantidad', message: `must be a non-negative decimal number with a dot for decimals, e.g. "1250.50" (got "${'A'.repeat(80)}… (${HUGE} characters)")` }]);
    expect(r.stdout.length + r.stderr.length).toBeLessThan(10_000);
    expect(r.stderr).toContain(`… (${HUGE} characters)`);
    expect(r.stdout + r.stderr).not.toMatch(LEAK);
  }, 120_000);
});

describe('long values in JSON bodies and CSV headers', () => {
  it('a long unidadMedida, unknown key and numeroReferencia (dry-run and the service): cut in findings and results', async () => {
    const body = fixture('01-fe-servicios-13');
    body.numeroReferencia = 'C'.repeat(5000);
    const unit: Record<string, any> = { ...fixture('01-fe-servicios-13'), numeroReferencia: 901 };
    unit.detalleServicio[0].unidadMedida = 'D'.repeat(5000);
    const key = { ...fixture('01-fe-servicios-13'), numeroReferencia: 902, ['E'.repeat(5000)]: 1 };
    writeFileSync(join(work, 'long.jsonl'), [body, unit, key].map((b) => JSON.stringify(b)).join('\n') + '\n');
    for (const flags of [['--dry-run'], []]) {
      const r = await fecr(['batch', 'long.jsonl', ...flags]);
      expect(r.code).toBe(1);
      const text = readFileSync(join(work, `long.jsonl${flags.length ? '.dry-run' : ''}.results.jsonl`), 'utf8');
      expect(text, flags.join()).not.toMatch(LEAK);
      expect(r.stdout + r.stderr).not.toMatch(LEAK);
      const res = text.trim().split('\n').map((l) => JSON.parse(l) as { row: number; numeroReferencia?: unknown; errors?: { path: string; message: string }[] });
      expect(res.find((x) => x.row === 1)!.numeroReferencia).toBe(`${'C'.repeat(80)}… (5000 characters)`);
      expect(res.find((x) => x.row === 2)!.errors).toContainEqual({
        path: 'detalleServicio[0].unidadMedida',
        message: `"${'D'.repeat(80)}… (5000 characters)" is not a unidad de medida of the v4.4 schema (e.g. "Unid", "Sp", "Os", "Kg")`,
      });
      expect(res.find((x) => x.row === 3)!.errors).toContainEqual({ path: `${'E'.repeat(80)}… (5000 characters)`, message: 'unknown field' });
    }
  }, 120_000);

  it('a long unknown column in a CSV header is cut in the one error line', async () => {
    const csv = readFileSync(new URL('../fixtures/batch/example.csv', import.meta.url), 'utf8').split('\n');
    csv[0] = `${csv[0]},${'B'.repeat(100_000)}`;
    writeFileSync(join(work, 'long-header.csv'), csv.join('\n'));
    const r = await fecr(['batch', 'long-header.csv', '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`unknown column "${'B'.repeat(80)}… (100000 characters)"`);
    expect(r.stderr).not.toMatch(LEAK);
  });
});

describe('echo', () => {
  it('keeps short values, cuts long ones with their length, never splits a surrogate pair', () => {
    expect(echo('x'.repeat(ECHO_MAX))).toBe('x'.repeat(ECHO_MAX));
    expect(echo('x'.repeat(ECHO_MAX + 1))).toBe(`${'x'.repeat(ECHO_MAX)}… (${ECHO_MAX + 1} characters)`);
    expect(echo(`${'x'.repeat(ECHO_MAX - 1)}😀tail`)).toBe(`${'x'.repeat(ECHO_MAX - 1)}… (${ECHO_MAX + 5} characters)`);
    expect(echoQuoted(`Element 'Detalle': The value '${'y'.repeat(500)}' is too long.`)).toBe(`Element 'Detalle': The value '${'y'.repeat(80)}… (500 characters)' is too long.`);
  });
});
