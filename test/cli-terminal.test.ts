// fecr on odd terminals (issue 12, defect 1). The BUILT binary (bin/fecr.js; `npm run build` first) runs under
// `script -qec` on a pseudo-terminal. Started from a parent that is not a terminal, script gives the pty no window
// size: `stty size` says "0 0", so stderr is a TTY whose `columns` is 0. Before the fix `send --wait` never ended
// there (ora divided by the 0 width and its clear loop ran forever, ~1.5 MB/s of ESC[1A ESC[2K). Every verb that
// shows progress must finish (exit 0) within a timeout with a bounded output; on a pty with a width the spinner is
// still drawn, without colour under NO_COLOR, and not at all (plain lines) under CI or TERM=dumb.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { profileBackend, type Ctx } from '../src/cli/context.js';
import { canRedraw, isCI, progressStyle, terminalColumns, useColor } from '../src/cli/output.js';
import { startSpinner } from '../src/commands/documents/spinner.js';
import { tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const ROOT = new URL('..', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/fecr.js');
const FE = join(ROOT, 'fixtures/documents/01-fe-servicios-13.json');
const hasScript = spawnSync('sh', ['-c', 'command -v script && command -v stty']).status === 0;

/** Output budget of one command (the hang wrote megabytes in seconds). */
const LIMIT = 64 * 1024;
/** Time budget of one command under the pty (each takes 1-4 s when it works). */
const PTY_TIMEOUT = 20_000;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Home {
  dir: string;
  work: string;
  env: Record<string, string>;
}

/** A fresh HOME and XDG dirs, local mode on FECR_DATA_DIR, no keychain; nothing of the caller's terminal settings. */
function freshHome(extra: Record<string, string> = {}): Home {
  const dir = tempDir('fecr-term-');
  dirs.push(dir);
  const work = join(dir, 'work');
  mkdirSync(work, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    SHELL: '/bin/sh',
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, '.config'),
    XDG_DATA_HOME: join(dir, '.local', 'share'),
    XDG_CACHE_HOME: join(dir, '.cache'),
    XDG_STATE_HOME: join(dir, '.local', 'state'),
    FECR_DATA_DIR: join(dir, 'data'),
    FECR_NO_KEYCHAIN: '1',
    ...extra,
  };
  return { dir, work, env };
}

/** `fecr ARGS` without a terminal (pipes): setup steps. */
function fecrPiped(h: Home, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: h.work, env: h.env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The test issuer (3101123456, the fixtures' emisor) registered in the home's default local profile. */
function withIssuer(h: Home): void {
  const t = makeTestIssuer();
  writeFileSync(join(h.work, 'issuer.json'), JSON.stringify(t.issuer));
  const r = fecrPiped(h, ['emisor', 'register', 'issuer.json']);
  expect(r.code, r.stderr).toBe(0);
}

interface PtyRun {
  code: number | null;
  timedOut: boolean;
  /** Every byte script copied from the pty. */
  bytes: number;
  /** The first MB of it. */
  out: string;
  ms: number;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the shell command `cmd` under `script -qec` (stdin not a terminal, so the pty is 0x0 unless `cmd` sets a
 * size with stty). After `timeoutMs` script is terminated (it kills its shell; the pty closing ends the rest).
 */
function underPty(h: Home, cmd: string, timeoutMs = PTY_TIMEOUT): Promise<PtyRun> {
  const t0 = performance.now();
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: h.work, env: h.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let bytes = 0;
  let kept = 0;
  const take = (c: Buffer) => {
    bytes += c.length;
    if (kept < 1 << 20) {
      chunks.push(c);
      kept += c.length;
    }
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGTERM');
    setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), 3000).unref();
  }, timeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, timedOut, bytes, out: Buffer.concat(chunks).toString('utf8'), ms: Math.round(performance.now() - t0) });
    });
  });
}

const fecrCmd = (args: string[]) => [process.execPath, BIN, ...args].map(q).join(' ');

const describeRun = (r: PtyRun) => `${r.bytes} bytes in ${r.ms} ms${r.timedOut ? ' (killed at the timeout)' : ''}: ${JSON.stringify(r.out.slice(0, 600))}`;

/** Finished by itself, exit 0, within the output budget. */
function expectFinished(r: PtyRun): void {
  expect(r.timedOut, describeRun(r)).toBe(false);
  expect(r.bytes, describeRun(r)).toBeLessThan(LIMIT);
  expect(r.code, describeRun(r)).toBe(0);
}

/** Plain lines only: no escape sequence, no carriage return but the pty's own before a newline (nothing redrawn). */
function expectPlainLines(r: PtyRun): void {
  expect(r.out, describeRun(r)).not.toMatch(/\x1b/);
  expect(r.out, describeRun(r)).not.toMatch(/\r(?!\n)/);
}

/** A CSV of `n` one-line TE documents (the valid rows of fixtures/batch/example.csv, renumbered). */
function batchCsv(n: number): string {
  const lines = readFileSync(join(ROOT, 'fixtures/batch/example.csv'), 'utf8').split('\n');
  const te = lines[3]!.split(',');
  const rows = Array.from({ length: n }, (_, i) => [te[0], String(500 + i), ...te.slice(2)].join(','));
  return [lines[0], ...rows].join('\n') + '\n';
}

describe.skipIf(!hasScript)('a pty that reports 0 columns (script started without a terminal)', () => {
  it('is really 0x0 there', async () => {
    const r = await underPty(freshHome(), 'stty size', 10_000);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toBe('0 0');
  });

  it('send --wait finishes with the verdict', async () => {
    const h = freshHome();
    withIssuer(h);
    const r = await underPty(h, fecrCmd(['send', FE, '--wait']));
    expectFinished(r);
    expectPlainLines(r);
    expect(r.out).toMatch(/aceptado/);
  }, 60_000);

  it('status --watch finishes with the verdict', async () => {
    const h = freshHome();
    withIssuer(h);
    const sent = fecrPiped(h, ['send', FE]);
    expect(sent.code, sent.stderr).toBe(0);
    const clave = sent.stdout.trim().split('\n')[0]!;
    expect(clave).toMatch(/^\d{50}$/);
    const r = await underPty(h, fecrCmd(['status', clave, '--watch']));
    expectFinished(r);
    expectPlainLines(r);
    expect(r.out).toMatch(/aceptado/);
  }, 60_000);

  it('batch --wait finishes with its summary', async () => {
    const h = freshHome();
    withIssuer(h);
    writeFileSync(join(h.work, 'docs.csv'), batchCsv(40));
    const r = await underPty(h, fecrCmd(['batch', 'docs.csv', '--wait']));
    expectFinished(r);
    expectPlainLines(r);
    expect(r.out).toMatch(/results: \S*docs\.csv\.results\.jsonl/);
    const results = readFileSync(join(h.work, 'docs.csv.results.jsonl'), 'utf8').trim().split('\n');
    expect(results).toHaveLength(40);
  }, 60_000);

  it('demo finishes', async () => {
    const h = freshHome();
    const r = await underPty(h, fecrCmd(['demo']));
    expectFinished(r);
    expectPlainLines(r);
    expect(r.out).toMatch(/wrote 27 files/);
  }, 60_000);
});

describe.skipIf(!hasScript)('a pty with a width', () => {
  const sized = (args: string[]) => `stty cols 100 rows 30 && ${fecrCmd(args)}`;

  it('send --wait draws the spinner (in colour) and clears it', async () => {
    const h = freshHome();
    withIssuer(h);
    const r = await underPty(h, sized(['send', FE, '--wait']));
    expectFinished(r);
    expect(r.out, describeRun(r)).toContain('\x1b[2K');
    expect(r.out, describeRun(r)).toContain('\x1b[36m');
    expect(r.out).toMatch(/aceptado/);
  }, 60_000);

  it('NO_COLOR: the spinner without colour', async () => {
    const h = freshHome({ NO_COLOR: '1' });
    withIssuer(h);
    const r = await underPty(h, sized(['send', FE, '--wait']));
    expectFinished(r);
    expect(r.out, describeRun(r)).toContain('\x1b[2K');
    expect(r.out, describeRun(r)).not.toMatch(/\x1b\[[0-9;]*m/);
  }, 60_000);

  it.each([
    ['CI=true', { CI: 'true' }],
    ['CI=1', { CI: '1' }],
    ['TERM=dumb', { TERM: 'dumb' }],
  ])('%s: send --wait and batch --wait print plain lines, nothing redrawn', async (_, extra) => {
    const h = freshHome(extra);
    withIssuer(h);
    const send = await underPty(h, sized(['send', FE, '--wait']));
    expectFinished(send);
    expectPlainLines(send);
    expect(send.out).toMatch(/waiting for Hacienda's verdict on \d{50}\r\n/);
    writeFileSync(join(h.work, 'docs.csv'), batchCsv(5));
    const batch = await underPty(h, sized(['batch', 'docs.csv', '--wait']));
    expectFinished(batch);
    expectPlainLines(batch);
    expect(batch.out).toMatch(/^5\/5 done · 5 sent · 0 failed · \d+\/s\r$/m);
  }, 60_000);

  it('CI=false is not CI: the progress line is redrawn', async () => {
    const h = freshHome({ CI: 'false' });
    withIssuer(h);
    writeFileSync(join(h.work, 'docs.csv'), batchCsv(5));
    const r = await underPty(h, sized(['batch', 'docs.csv', '--wait']));
    expectFinished(r);
    expect(r.out, describeRun(r)).toContain('\r\x1b[K');
  }, 60_000);
});

/** A context whose stderr is a PassThrough that says what a terminal would. */
function ctxWith(stderrProps: { isTTY?: boolean; columns?: number }, env: Record<string, string> = {}, stdoutIsTTY = false): { ctx: Ctx; err: () => string } {
  const stderr = Object.assign(new PassThrough(), stderrProps);
  let e = '';
  stderr.on('data', (c: Buffer) => (e += c.toString()));
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env, cwd: ROOT, stdoutIsTTY, stdinIsTTY: false };
  return { ctx: { io, debug: false, now: () => new Date(), randomBytes: (n) => new Uint8Array(n), backend: profileBackend }, err: () => e };
}

describe('the decision "may this stream be redrawn?" (src/cli/output.ts)', () => {
  it.each([
    ['a TTY with 80 columns', { isTTY: true, columns: 80 }, {}, true, 'redraw'],
    ['a TTY with 1 column', { isTTY: true, columns: 1 }, {}, true, 'redraw'],
    ['a TTY with 0 columns', { isTTY: true, columns: 0 }, {}, false, 'lines'],
    ['a TTY with no columns', { isTTY: true }, {}, false, 'lines'],
    ['a TTY with NaN columns', { isTTY: true, columns: Number.NaN }, {}, false, 'lines'],
    ['a TTY with -1 columns', { isTTY: true, columns: -1 }, {}, false, 'lines'],
    ['a TTY, CI=true', { isTTY: true, columns: 80 }, { CI: 'true' }, false, 'lines'],
    ['a TTY, CI=1', { isTTY: true, columns: 80 }, { CI: '1' }, false, 'lines'],
    ['a TTY, CI=github-actions', { isTTY: true, columns: 80 }, { CI: 'github-actions' }, false, 'lines'],
    ['a TTY, CI=false', { isTTY: true, columns: 80 }, { CI: 'false' }, true, 'redraw'],
    ['a TTY, CI=0', { isTTY: true, columns: 80 }, { CI: '0' }, true, 'redraw'],
    ['a TTY, CI empty', { isTTY: true, columns: 80 }, { CI: '' }, true, 'redraw'],
    ['a TTY, TERM=dumb', { isTTY: true, columns: 80 }, { TERM: 'dumb' }, false, 'lines'],
    ['a TTY, NO_COLOR=1 (colour only)', { isTTY: true, columns: 80 }, { NO_COLOR: '1' }, true, 'redraw'],
    ['not a TTY', { columns: 80 }, {}, false, 'none'],
    ['not a TTY, CI=true', {}, { CI: 'true' }, false, 'none'],
  ] as const)('%s', (_, props, env, redraw, style) => {
    const { ctx } = ctxWith(props, env);
    expect(canRedraw(ctx, 'stderr')).toBe(redraw);
    expect(progressStyle(ctx, 'stderr')).toBe(style);
  });

  it('the width: only a positive whole number of columns of a terminal', () => {
    expect(terminalColumns(ctxWith({ isTTY: true, columns: 120 }).ctx, 'stderr')).toBe(120);
    expect(terminalColumns(ctxWith({ isTTY: true, columns: 0 }).ctx, 'stderr')).toBeUndefined();
    expect(terminalColumns(ctxWith({ isTTY: false, columns: 120 }).ctx, 'stderr')).toBeUndefined();
    // stdout: its own flag (IO.stdoutIsTTY) and its own stream's width
    const out = ctxWith({ isTTY: true, columns: 80 }, {}, true);
    expect(canRedraw(out.ctx, 'stdout')).toBe(false);
    Object.assign(out.ctx.io.stdout, { columns: 90 });
    expect(terminalColumns(out.ctx, 'stdout')).toBe(90);
    expect(canRedraw(out.ctx, 'stdout')).toBe(true);
  });

  it('isCI', () => {
    for (const v of ['true', '1', 'yes', 'TRUE', 'woodpecker']) expect(isCI({ CI: v })).toBe(true);
    for (const v of [undefined, '', 'false', 'FALSE', '0', ' ']) expect(isCI({ CI: v })).toBe(false);
  });

  it('colour: NO_COLOR (non-empty) and TERM=dumb turn it off; only on a terminal', () => {
    expect(useColor(ctxWith({ isTTY: true, columns: 80 }).ctx, 'stderr')).toBe(true);
    expect(useColor(ctxWith({ isTTY: true, columns: 80 }, { NO_COLOR: '1' }).ctx, 'stderr')).toBe(false);
    expect(useColor(ctxWith({ isTTY: true, columns: 80 }, { NO_COLOR: '' }).ctx, 'stderr')).toBe(true);
    expect(useColor(ctxWith({ isTTY: true, columns: 80 }, { TERM: 'dumb' }).ctx, 'stderr')).toBe(false);
    expect(useColor(ctxWith({ isTTY: false }).ctx, 'stderr')).toBe(false);
  });
});

describe('the spinner, by style', () => {
  it('a terminal with a width: ora draws and clears its line', async () => {
    const t = ctxWith({ isTTY: true, columns: 80 });
    const s = startSpinner(t.ctx, 'waiting');
    s.text('procesando');
    await new Promise((r) => setTimeout(r, 120));
    s.stop();
    expect(t.err()).toContain('procesando');
    expect(t.err().endsWith('\r\x1b[2K')).toBe(true);
  });

  it('a text wider than a narrow terminal: drawn and cleared, and it ends', async () => {
    const t = ctxWith({ isTTY: true, columns: 10 });
    const s = startSpinner(t.ctx, 'x'.repeat(95));
    await new Promise((r) => setTimeout(r, 120));
    s.stop();
    expect(t.err()).toContain('x'.repeat(95));
    expect(t.err().length).toBeLessThan(4096);
  });

  it.each([
    ['0 columns', { isTTY: true, columns: 0 }, {}],
    ['no columns', { isTTY: true }, {}],
    ['CI=true', { isTTY: true, columns: 80 }, { CI: 'true' }],
    ['TERM=dumb', { isTTY: true, columns: 80 }, { TERM: 'dumb' }],
  ] as const)('%s: plain lines, whole, at a bounded rate', async (_, props, env) => {
    const t = ctxWith(props, env);
    const long = `waiting for Hacienda's verdict on ${'5'.repeat(50)} ${'y'.repeat(200)}`;
    const s = startSpinner(t.ctx, long);
    for (let i = 0; i < 10_000; i++) s.text(`estado ${i % 3}`);
    await new Promise((r) => setTimeout(r, 1300));
    s.text('procesando');
    s.stop();
    s.text('after stop');
    const lines = t.err().split('\n').filter(Boolean);
    expect(t.err()).not.toMatch(/[\x1b\r]/);
    expect(lines[0]).toBe(long);
    // the first line, then one for the change after a second (the 10,000 changes in between are not each printed)
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(lines.at(-1)).toMatch(/^(estado \d|procesando)( \(1 s\))?$/);
    expect(t.err()).not.toContain('after stop');
  });

  it('not a terminal: nothing', () => {
    const t = ctxWith({ isTTY: false, columns: 80 });
    const s = startSpinner(t.ctx, 'waiting');
    s.text('procesando');
    s.stop();
    expect(t.err()).toBe('');
  });
});
