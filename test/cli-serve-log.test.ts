// Issue 27 (7): `fecr serve` on a terminal writes its log to <data dir>/serve.log and says that path once on stderr;
// `--log-format json` or `--log-file -` keep it on stderr; not on a terminal (a deployment, a pipe) it stays on
// stderr, as before; `--log-file FILE` names the file anywhere. The terminal is a real pseudo-terminal: util-linux
// `script` runs the CLI (from the sources) with stdin, stdout and stderr on one.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/cli.js';
import { childEnv } from './helpers/hermetic-env.js';
import { spawnFecr } from './helpers/spawn.js';

const ENTRY = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');
const root = tempDir('fecr-serve-log-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** One of pino's JSON lines (the service's log). */
const LOG_LINE = /^\{"level":\d+,"time":\d+/m;
const hasScript = spawnSync('script', ['--version']).status === 0;
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

async function waitUntil(cond: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting; so far:\n${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `fecr serve ARGS` on a pseudo-terminal; its screen (stdout and stderr, as a person sees them) as it comes. */
async function serveOnTerminal(args: string[], home: string): Promise<{ screen: () => string; stop: () => Promise<void> }> {
  const command = [process.execPath, '--import', TSX, ENTRY, 'serve', ...args].map(sq).join(' ');
  const child: ChildProcess = spawn('script', ['-qfec', command, '/dev/null'], {
    env: childEnv({ HOME: home, FECR_NO_KEYCHAIN: '1', TERM: 'xterm' }),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString().replace(/\r/g, '')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitUntil(() => /^\{"authUrl".*\}$/m.test(out), 60_000, () => out);
  return {
    screen: () => out,
    stop: async () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // gone
      }
      await exited;
    },
  };
}

describe.skipIf(!hasScript)('fecr serve on a terminal', () => {
  it('writes its log to <data dir>/serve.log and says the path once; the screen holds no log line', async () => {
    const dir = join(root, 'tty');
    mkdirSync(dir, { recursive: true });
    const data = join(dir, 'data');
    const s = await serveOnTerminal(['--data-dir', data], dir);
    try {
      const file = join(data, 'serve.log');
      await waitUntil(() => existsSync(file) && readFileSync(file, 'utf8').includes('"msg":"worker started"'), 20_000, () => (existsSync(file) ? readFileSync(file, 'utf8') : '(no file)'));
      expect(readFileSync(file, 'utf8')).toMatch(LOG_LINE);
      // Give a stray line time to show up on the screen before judging it.
      await new Promise((r) => setTimeout(r, 300));
      expect(s.screen().match(/^log: .*$/gm)).toEqual([`log: ${file}`]);
      expect(s.screen()).not.toMatch(LOG_LINE);
      expect(s.screen()).toMatch(/^ready\. A remote profile for this service/m);
    } finally {
      await s.stop();
    }
  }, 90_000);

  it('--log-format json and --log-file - keep the log on the terminal (stderr), no file', async () => {
    for (const [i, flags] of [['--log-format', 'json'], ['--log-file', '-']].entries()) {
      const dir = join(root, `tty-json-${i}`);
      mkdirSync(dir, { recursive: true });
      const data = join(dir, 'data');
      const s = await serveOnTerminal(['--data-dir', data, ...flags], dir);
      try {
        await waitUntil(() => /"msg":"worker started"/.test(s.screen()), 20_000, s.screen);
        expect(s.screen()).toMatch(LOG_LINE);
        expect(s.screen()).not.toMatch(/^log: /m);
        expect(existsSync(join(data, 'serve.log'))).toBe(false);
      } finally {
        await s.stop();
      }
    }
  }, 120_000);
});

describe('fecr serve not on a terminal', () => {
  it('logs JSON lines on stderr as before, no file and no path line', async () => {
    const dir = join(root, 'piped');
    const data = join(dir, 'data');
    const s = await spawnFecr(['serve', '--data-dir', data], { env: { HOME: dir, FECR_NO_KEYCHAIN: '1' } });
    try {
      await waitUntil(() => /"msg":"worker started"/.test(s.stderr()), 20_000, s.stderr);
      expect(s.stderr()).toMatch(LOG_LINE);
      expect(s.stderr()).not.toMatch(/^log: /m);
      expect(existsSync(join(data, 'serve.log'))).toBe(false);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it('--log-file FILE: the log in that file, its path said once', async () => {
    const dir = join(root, 'piped-file');
    const data = join(dir, 'data');
    const file = join(dir, 'logs', 'fecr.log');
    const s = await spawnFecr(['serve', '--data-dir', data, '--log-file', file], { env: { HOME: dir, FECR_NO_KEYCHAIN: '1' } });
    try {
      await waitUntil(() => existsSync(file) && readFileSync(file, 'utf8').includes('"msg":"worker started"'), 20_000, () => (existsSync(file) ? readFileSync(file, 'utf8') : '(no file)'));
      expect(s.stderr().match(/^log: .*$/gm)).toEqual([`log: ${file}`]);
      expect(s.stderr()).not.toMatch(LOG_LINE);
    } finally {
      await s.stop();
    }
  }, 60_000);
});
