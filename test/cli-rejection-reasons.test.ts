// Issue 26, item 5: a rejection carries Hacienda's reasons where operators look. A document fecr's checks accept and
// Hacienda (the local profile's emulator) rejects: its FechaEmision three days ahead, -53 in Hacienda's words. Then
// `fecr send --wait --json` has `errores`, its stderr one line per reason; `fecr status` prints the list as a table
// (TSV when piped, aligned on a terminal) and `--json` has it; `fecr batch --wait` writes it in the results line and
// names the code under the failed row.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXTOS } from '../src/core/rules/hacienda-codes.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-rejection-reasons-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/documents/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
/** Three days ahead (Costa Rica): sent with --force (fecr refuses it otherwise, issue 36), Hacienda rejects it with -53. */
const future = () => new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 19);
const late = (numeroReferencia: number) => ({ ...fixture('10-te-sin-receptor'), numeroReferencia, fechaEmision: future() });
const REASON = { codigo: -53, mensaje: TEXTOS.fechaDia53, fila: null, columna: null, aviso: false };

let clave: string;

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  const r = await runCli(['emisor', 'register', 'issuer.json'], { env, cwd: work });
  expect(r.code, r.stderr).toBe(0);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fecr send and fecr status: the reasons of a rejection', () => {
  it('send --wait --json: errores beside detalleMensaje; stderr names each code under the headline', async () => {
    writeFileSync(join(work, 'late.json'), JSON.stringify(late(1)));
    const r = await runCli(['send', 'late.json', '--wait', '--json', '--force'], { env, cwd: work });
    expect(r.code, r.stderr).toBe(3);
    const s = JSON.parse(r.stdout) as { clave: string; estado: string; detalleMensaje: string; errores: unknown };
    clave = s.clave;
    expect(s.estado).toBe('rechazado');
    expect(s.detalleMensaje).toContain('\r\n');
    expect(s.errores).toEqual([REASON]);
    expect(r.stderr).toContain(`error: Hacienda rejected ${clave}\n  rechazado: -53 ${TEXTOS.fechaDia53}\n`);
  }, 60_000);

  it('status, piped: the state row, then the list as TSV (codigo, mensaje, fila, columna, aviso)', async () => {
    const r = await runCli(['status', clave], { env, cwd: work });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain(`\ncodigo\tmensaje\tfila\tcolumna\taviso\n-53\t${TEXTOS.fechaDia53}\t\t\tno\n`);
    // Hacienda's raw layout is not printed beside the table.
    expect(r.stdout).not.toContain('codigo, mensaje, fila, columna');
    expect(r.stderr).toBe(`error: Hacienda rejected ${clave}\n`);
  }, 60_000);

  it('status on a terminal: the list as an aligned table', async () => {
    const r = await runCli(['status', clave], { env, cwd: work, tty: true });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(/\ncodigo +mensaje +fila +columna +aviso\n-+ +-+ +-+ +-+ +-+\n-53 +La fecha de emisión del comprobante electrónico no puede ser superior al día de hoy\. +no\n/);
  }, 60_000);

  it('status --json: errores', async () => {
    const r = await runCli(['status', clave, '--json'], { env, cwd: work });
    expect(r.code, r.stderr).toBe(3);
    expect((JSON.parse(r.stdout) as { errores: unknown }).errores).toEqual([REASON]);
  }, 60_000);

  it('documents list --json: each document with its errores', async () => {
    const r = await runCli(['documents', 'list', '--state', 'rechazado', '--json'], { env, cwd: work });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([expect.objectContaining({ clave, errores: [REASON] })]);
  }, 60_000);
});

describe('fecr batch --wait: the reasons in the results line and under the failed row', () => {
  it('results.jsonl carries errores; stderr: rechazado: -53 …', async () => {
    const ok = { ...fixture('10-te-sin-receptor'), numeroReferencia: 11 };
    writeFileSync(join(work, 'b.jsonl'), `${JSON.stringify(ok)}\n${JSON.stringify(late(12))}\n`);
    const r = await runCli(['batch', 'b.jsonl', '--wait', '--force'], { env, cwd: work });
    expect(r.code, r.stderr).toBe(3);
    const lines = readFileSync(join(work, 'b.jsonl.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const rejected = lines.find((l) => l.row === 2)!;
    expect(rejected).toMatchObject({ state: 'enviado', estado: 'rechazado', errores: [REASON] });
    // The accepted one lists nothing: no errores.
    expect(lines.find((l) => l.row === 1)).not.toHaveProperty('errores');
    expect(r.stderr).toMatch(new RegExp(`\\n {2}row 2 \\(numeroReferencia 12\\): rechazado by Hacienda \\(clave ${rejected.clave as string}\\)\\n {4}rechazado: -53 La fecha de emisión del comprobante electrónico no puede ser superior al día de hoy\\.\\n`));
  }, 90_000);
});
