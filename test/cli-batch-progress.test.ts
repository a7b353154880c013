// `fecr batch` progress and summary (issue 13): the progress line shows done/total ("n/?" until the total is
// known) and, once the total is known, an ETA; the file's documents are counted by a first pass over the file
// (scanBatch; countBatch its count or undefined). The summary lists the failed rows, each with its first finding (stderr; in --json, "failed").
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileBackend, type Ctx } from '../src/cli/context.js';
import { main } from '../src/cli/program.js';
import { countBatch } from '../src/client/batch/reader.js';
import type { BatchSummary } from '../src/client/batch/runner.js';
import { progressLine } from '../src/commands/batch/run.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-batch-progress-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/documents/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
const EXAMPLE_CSV = new URL('../fixtures/batch/example.csv', import.meta.url).pathname;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stderr that says what a terminal of `columns` columns would; the env has no CI and no TERM=dumb unless given. */
function terminal(columns = 200, extraEnv: Record<string, string> = {}) {
  const stderr = Object.assign(new PassThrough(), { isTTY: true, columns });
  const stdout = new PassThrough();
  let err = '';
  let out = '';
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  const io = { stdin: new PassThrough(), stdout, stderr, env: { ...env, ...extraEnv }, cwd: work, stdoutIsTTY: false, stdinIsTTY: false };
  const ctx: Ctx = { io, debug: false, now: () => new Date(), randomBytes: (n) => new Uint8Array(n), backend: profileBackend };
  return { ctx, io, err: () => err, out: () => out };
}

const summary = (sent: number, failed = 0): BatchSummary => ({ total: sent + failed, sent, invalid: failed, errors: 0, skipped: 0, interrupted: false });
/** The frames drawn in place: what follows each "\r\x1b[K". */
const frames = (text: string) => text.split('\r\x1b[K').slice(1).map((f) => f.replace(/\n$/, ''));

describe('the progress line', () => {
  it('n/? until the total is known, then n/total and an ETA', () => {
    const t = terminal();
    let now = 0;
    const p = progressLine(t.ctx, { now: () => now });
    now = 1000;
    p.update(summary(2));
    p.setTotal(10);
    now = 2000;
    p.update(summary(4));
    now = 2050; // within 100 ms of the last frame: not drawn
    p.update(summary(5));
    now = 4000;
    p.update(summary(7, 1));
    p.done();
    expect(frames(t.err())).toEqual([
      '2/? done · 2 sent · 0 failed · 2/s',
      '4/10 done · 4 sent · 0 failed · 2/s · ETA 3s',
      '8/10 done · 7 sent · 1 failed · 2/s · ETA 1s',
      '8/10 done · 7 sent · 1 failed · 2/s · ETA 1s',
    ]);
    expect(t.err().endsWith('\n')).toBe(true);
  });

  it('ETA in minutes and hours; none before the first document', () => {
    const t = terminal();
    let now = 0;
    const p = progressLine(t.ctx, { now: () => now });
    p.setTotal(100_000);
    now = 10;
    p.update(summary(0, 0));
    now = 10_000;
    p.update(summary(100));
    now = 20_000;
    p.update(summary(10_000));
    expect(frames(t.err())).toEqual([
      '0/100000 done · 0 sent · 0 failed · 0/s',
      '100/100000 done · 100 sent · 0 failed · 10/s · ETA 2h46m',
      '10000/100000 done · 10000 sent · 0 failed · 500/s · ETA 3m00s',
    ]);
  });

  it('CI: plain lines, the total included', () => {
    const t = terminal(200, { CI: 'true' });
    let now = 0;
    const p = progressLine(t.ctx, { now: () => now });
    p.setTotal(3);
    now = 1000;
    p.update(summary(1));
    now = 2000;
    p.update(summary(3));
    p.done();
    expect(t.err()).toBe('1/3 done · 1 sent · 0 failed · 1/s · ETA 2s\n3/3 done · 3 sent · 0 failed · 2/s\n');
  });

  it('a narrow terminal: the frame is cut to its width', () => {
    const t = terminal(20);
    const p = progressLine(t.ctx, { now: () => 1000 });
    p.setTotal(10);
    p.update(summary(4));
    expect(frames(t.err())).toEqual(['4/10 done · 4 sent '.slice(0, 19)]);
  });
});

describe('countBatch: the documents of a batch file, counted cheaply', () => {
  beforeAll(() => mkdirSync(work, { recursive: true }));

  it('CSV: documents (consecutive rows of one document count once), malformed rows count as one each', async () => {
    expect(await countBatch(EXAMPLE_CSV, 'csv')).toBe(3);
    const lines = readFileSync(EXAMPLE_CSV, 'utf8').trimEnd().split('\n');
    writeFileSync(join(work, 'count.csv'), [...lines, '1,2,3', ''].join('\n'));
    expect(await countBatch(join(work, 'count.csv'), 'csv')).toBe(4);
  });

  it('JSONL: non-blank lines, broken ones included; JSON: the elements of the array', async () => {
    writeFileSync(join(work, 'count.jsonl'), '{"a":1}\n\n{"b": oops\n  \n{"c":3}\n');
    expect(await countBatch(join(work, 'count.jsonl'), 'jsonl')).toBe(3);
    writeFileSync(join(work, 'count.json'), JSON.stringify([{ a: 1 }, { b: '[,]' }, { c: 3 }, 4], null, 2));
    expect(await countBatch(join(work, 'count.json'), 'json')).toBe(4);
  });

  it('an unreadable or malformed file counts as unknown (the batch itself reports it)', async () => {
    expect(await countBatch(join(work, 'missing.jsonl'), 'jsonl')).toBeUndefined();
    writeFileSync(join(work, 'not-array.json'), '{"a":1}');
    expect(await countBatch(join(work, 'not-array.json'), 'json')).toBeUndefined();
  });
});

describe('fecr batch: progress with the total, and the failed rows in the summary', () => {
  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
    const r = await runCli(['emisor', 'register', 'issuer.json'], { env, cwd: work });
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  it('on a terminal: the last frame is n/n; the failed rows follow the table with their first finding', async () => {
    const body = (n: number) => JSON.stringify({ ...fixture('10-te-sin-receptor'), numeroReferencia: n });
    const bad = { ...fixture('01-fe-servicios-13'), numeroReferencia: 705, codigoActividad: '12' };
    writeFileSync(join(work, 'p.jsonl'), [body(701), body(702), '{"emisor": oops', body(703), JSON.stringify(bad), body(704)].join('\n') + '\n');
    const t = terminal();
    const code = await main(['batch', 'p.jsonl'], { io: t.io });
    expect(code, t.err()).toBe(1);
    expect(t.out()).toBe('total\tsent\tinvalid\terrors\n6\t4\t2\t0\n');
    const drawn = frames(t.err().split('\nfailed')[0]!);
    expect(drawn.at(-1)).toMatch(/^6\/6 done · 4 sent · 2 failed · \d+\/s$/);
    for (const f of drawn) expect(f).toMatch(/^\d+\/(6|\?) done · /);
    const after = t.err().slice(t.err().lastIndexOf('\r\x1b[K'));
    expect(after).toMatch(/\nfailed: 2 of 6 documents\n {2}row 3: p\.jsonl:3:12: Unexpected token 'o'\n {2}row 5 \(numeroReferencia 705\): [^\n]*codigoActividad[^\n]*\nresults: /);
  }, 60_000);

  it('CSV: the row of the document and the row of its finding; --json lists them as "failed"', async () => {
    writeFileSync(join(work, 'p.csv'), readFileSync(EXAMPLE_CSV, 'utf8').replace(/^3101123456,20([123]),/gm, '3101123456,80$1,'));
    const r = await runCli(['batch', 'p.csv', '--dry-run'], { env, cwd: work });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^failed: 1 of 3 documents\n {2}row 5 \(numeroReferencia 803\): row 6\.cantidad: [^\n]*"tres"[^\n]*\nresults: /m);
    const j = await runCli(['batch', 'p.csv', '--dry-run', '--json'], { env, cwd: work });
    expect(JSON.parse(j.stdout)).toMatchObject({
      total: 3,
      invalid: 1,
      failed: [{ row: 5, numeroReferencia: 803, state: 'invalido', error: expect.stringMatching(/^row 6\.cantidad: .*"tres"/) }],
    });
  }, 60_000);

  it('--wait: a document Hacienda rejects is a failed row too, with its clave', async () => {
    // FechaEmision three days ahead: sent with --force (fecr refuses it otherwise, issue 36), Hacienda (the emulator) rejects it.
    const future = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 19);
    const ok = { ...fixture('10-te-sin-receptor'), numeroReferencia: 901 };
    const late = { ...fixture('10-te-sin-receptor'), numeroReferencia: 902, fechaEmision: future };
    writeFileSync(join(work, 'w.jsonl'), `${JSON.stringify(ok)}\n${JSON.stringify(late)}\n`);
    const r = await runCli(['batch', 'w.jsonl', '--wait', '--force'], { env, cwd: work });
    expect(r.code, r.stderr).toBe(3);
    const clave = (readFileSync(join(work, 'w.jsonl.results.jsonl'), 'utf8').split('\n').map((l) => (l ? (JSON.parse(l) as { row: number; clave: string }) : undefined)).find((x) => x?.row === 2))!.clave;
    expect(r.stderr).toMatch(new RegExp(`^failed: 1 of 2 documents\\n {2}row 2 \\(numeroReferencia 902\\): rechazado by Hacienda \\(clave ${clave}\\)\\n`, 'm'));
    // Again, as JSON, from the start (the same bodies get the same claves back).
    const j = await runCli(['batch', 'w.jsonl', '--restart', '--wait', '--force', '--json'], { env, cwd: work });
    expect(j.code, j.stderr).toBe(3);
    expect((JSON.parse(j.stdout) as { failed: unknown }).failed).toEqual([
      { row: 2, numeroReferencia: 902, state: 'enviado', estado: 'rechazado', clave, error: `rechazado by Hacienda (clave ${clave})`, errores: [expect.objectContaining({ codigo: -53, aviso: false })] },
    ]);
  }, 60_000);

  it('at most 20 failed rows are listed, then how many more and where they are', async () => {
    writeFileSync(join(work, 'many.jsonl'), Array.from({ length: 25 }, (_, i) => `{"broken ${i}`).join('\n') + '\n');
    const r = await runCli(['batch', 'many.jsonl', '--dry-run'], { env, cwd: work });
    expect(r.code).toBe(1);
    const listed = r.stderr.split('\n').filter((l) => /^ {2}row \d+: /.test(l));
    expect(listed.map((l) => Number(/row (\d+)/.exec(l)![1]))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(r.stderr).toMatch(/\n {2}… and 5 more in \S*many\.jsonl\.dry-run\.results\.jsonl\n/);
  }, 60_000);
});
