// The README's "A five-minute tour", run as printed: every ```sh block of that section, in order, with bash
// (`set -euo pipefail`), on a fresh HOME and an empty working directory that holds only a copy of the repo's
// fixtures/, against the embedded defaults (local profiles, the embedded emulator; the hosted step runs
// `fecr serve` on port 0). Then, in the same folder, the ```sh block of "The service: `fecr serve`" (curl on the API). `fecr` is this checkout's bin/fecr.js (what `npm link` puts on PATH); `npx` is made to
// fail, so the tour cannot come to rely on npx rebuilding the project.
//
// Conventions the README keeps (and this test reads):
// - a line whose trailing comment ends with `(exit N)` must exit with N; any other non-zero exit fails the test,
//   naming the README line;
// - a line ending with `&` runs in the background until the end of its block, then gets SIGTERM;
// - comment lines and blank lines are not run; a command is one line.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/cli.js';

const root = new URL('..', import.meta.url).pathname;
const TOUR_HEADING = '## A five-minute tour';
/** Run after the tour, in the same folder and HOME: the curl walk through the service's API. */
const SERVICE_HEADING = '## The service: `fecr serve`';

interface TourLine {
  /** 1-based line number in README.md. */
  readmeLine: number;
  command: string;
  expectExit: number;
  background: boolean;
}

/** The ```sh blocks of a section (the tour by default), each as its runnable lines. */
function tourBlocks(markdown: string, heading = TOUR_HEADING): TourLine[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`README.md has no "${heading}" section`);
  const blocks: TourLine[][] = [];
  let block: TourLine[] | null = null;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (block === null && /^## /.test(line)) break;
    if (block === null) {
      if (/^```(sh|bash)\s*$/.test(line)) block = [];
      continue;
    }
    if (/^```\s*$/.test(line)) {
      blocks.push(block);
      block = null;
      continue;
    }
    const text = line.trim();
    if (text === '' || text.startsWith('#')) continue;
    const comment = /\s#\s.*$/.exec(text)?.[0] ?? '';
    const command = text.slice(0, text.length - comment.length).trim();
    const exit = /\(exit (\d+)\)\s*$/.exec(comment);
    block.push({
      readmeLine: i + 1,
      command,
      expectExit: exit ? Number(exit[1]) : 0,
      background: /(^|[^&])&$/.test(command),
    });
  }
  if (block !== null) throw new Error('README.md: unterminated ``` block in the tour');
  return blocks;
}

/** One block as a bash script: each line's README line is known to the ERR trap; background jobs are ended at the end. */
function blockScript(block: TourLine[]): string {
  const out = [
    'set -euo pipefail',
    '__pids=()',
    '__line=0',
    `trap 'echo "tour: README.md:$__line failed (exit $?)" >&2' ERR`,
    // SIGTERM first; a job killed in the instant between its fork and its exec can miss it, so SIGKILL what is left.
    `trap 'for p in \${__pids[@]+"\${__pids[@]}"}; do kill "$p" 2>/dev/null || true; done; sleep 0.3; for p in \${__pids[@]+"\${__pids[@]}"}; do kill -9 "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT`,
  ];
  for (const l of block) {
    out.push(`__line=${l.readmeLine}`);
    out.push(`printf '%s\\n' ${shellQuote(`tour $ ${l.command}`)} >&2`);
    if (l.background) {
      out.push(l.command);
      out.push('__pids+=($!)');
    } else if (l.expectExit !== 0) {
      out.push('set +e');
      out.push(l.command);
      out.push('__rc=$?');
      out.push('set -e');
      out.push(`if [ "$__rc" != ${l.expectExit} ]; then echo "tour: README.md:${l.readmeLine} exited $__rc, the README says ${l.expectExit}" >&2; exit 1; fi`);
    } else {
      out.push(l.command);
    }
  }
  return out.join('\n') + '\n';
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function runBash(script: string, opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, opts.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const home = tempDir('fecr-tour-');
const work = join(home, 'work');
const bin = join(home, 'bin');

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

describe('README tour', () => {
  it('reads the tour: its blocks, expected exits and background lines', () => {
    const sample = [
      TOUR_HEADING,
      '```sh',
      '# a comment',
      'fecr demo   # the demo',
      'fecr send bad.json   # refused (exit 1)',
      'fecr serve > serve.json &   # in the background',
      'a && b',
      '```',
      '## Next',
      '```sh',
      'not in the tour',
      '```',
    ].join('\n');
    expect(tourBlocks(sample)).toEqual([
      [
        { readmeLine: 4, command: 'fecr demo', expectExit: 0, background: false },
        { readmeLine: 5, command: 'fecr send bad.json', expectExit: 1, background: false },
        { readmeLine: 6, command: 'fecr serve > serve.json &', expectExit: 0, background: true },
        { readmeLine: 7, command: 'a && b', expectExit: 0, background: false },
      ],
    ]);
    const blocks = tourBlocks(readme);
    const commands = blocks.flat().map((l) => l.command);
    expect(commands.length).toBeGreaterThan(10);
    // The hosted step is part of the tour and runs `fecr serve` in the background.
    expect(blocks.flat().some((l) => l.background && /\bfecr serve\b/.test(l.command))).toBe(true);
    // Nothing the reader has to fill in: no placeholder words, no variable the tour does not set itself.
    const tourText = [...commands, ...tourBlocks(readme, SERVICE_HEADING).flat().map((l) => l.command)].join('\n');
    expect(tourText).not.toMatch(/\bnpx\b/);
    for (const [, name] of tourText.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) {
      expect(tourText, `$${name} is used but never set in the tour`).toMatch(new RegExp(`(^|[\\s;(])${name}=`, 'm'));
    }
  });

  it('a broken line fails its block, naming the README line; a marked exit must be exactly that exit', async () => {
    const run = (lines: string[]) => {
      const md = [TOUR_HEADING, '```sh', ...lines, '```'].join('\n');
      return runBash(blockScript(tourBlocks(md)[0]!), { cwd: home, env: process.env, timeoutMs: 10_000 });
    };
    const broken = await run(['true', 'false   # this breaks', 'touch never-made']);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toMatch(/README\.md:4 failed/);
    expect(existsSync(join(home, 'never-made'))).toBe(false);
    expect((await run(['(exit 3)   # on purpose (exit 3)', 'true'])).code).toBe(0);
    const wrong = await run(['(exit 1)   # on purpose (exit 3)']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/README\.md:3 exited 1, the README says 3/);
    // Background jobs end with their block.
    const bg = await run(['sleep 30 &', 'echo $! > bg.pid']);
    expect(bg.code, bg.stderr).toBe(0);
    const pid = Number(readFileSync(join(home, 'bg.pid'), 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('runs every command block of the tour, as printed, on a fresh HOME', async () => {
    mkdirSync(work, { recursive: true });
    mkdirSync(bin, { recursive: true });
    cpSync(join(root, 'fixtures'), join(work, 'fixtures'), { recursive: true });
    // `fecr` as `npm link` installs it: this checkout's bin.
    writeFileSync(join(bin, 'fecr'), `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(join(root, 'bin/fecr.js'))} "$@"\n`);
    writeFileSync(join(bin, 'npx'), '#!/bin/sh\necho "tour: the README tour must not use npx (it installs and rebuilds the project on first use)" >&2\nexit 97\n');
    chmodSync(join(bin, 'fecr'), 0o755);
    chmodSync(join(bin, 'npx'), 0o755);

    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      // A fresh machine: nothing of the developer's fecr setup, XDG dirs or session bus (no OS keychain: the
      // documented headless fallback, and the developer's keychain is left alone).
      if (k.startsWith('FECR_') || k.startsWith('XDG_') || k === 'DBUS_SESSION_BUS_ADDRESS' || k.startsWith('npm_')) continue;
      env[k] = v;
    }
    Object.assign(env, {
      HOME: join(home, 'home'),
      PATH: `${bin}:${process.env.PATH}`,
      FECR_NO_KEYCHAIN: '1',
      NO_COLOR: '1',
    });
    mkdirSync(env.HOME!, { recursive: true });

    const blocks = [...tourBlocks(readme), ...tourBlocks(readme, SERVICE_HEADING)];
    const started = Date.now();
    // Step 6 (the hosted instance) starts at the first command after its "# 6." comment.
    const lines = readme.split('\n');
    const tourStart = lines.findIndex((l) => l.trim() === TOUR_HEADING);
    const step6Line = lines.findIndex((l, n) => n > tourStart && /^# 6\. /.test(l)) + 1;
    const step6 = tourBlocks(readme).flat().find((l) => l.readmeLine > step6Line);
    expect(step6, 'the tour has a step 6').toBeDefined();
    let step6Output: { stdout: string; stderr: string } | undefined;
    for (const [i, block] of blocks.entries()) {
      const r = await runBash(blockScript(block), { cwd: work, env, timeoutMs: 90_000 });
      const tail = (s: string) => (s.length > 6000 ? `…${s.slice(-6000)}` : s);
      expect(
        { block: i + 1, code: r.code, timedOut: r.timedOut },
        `tour block ${i + 1} (README.md:${block[0]?.readmeLine}) failed:\n--- stderr\n${tail(r.stderr)}\n--- stdout\n${tail(r.stdout)}`,
      ).toEqual({ block: i + 1, code: 0, timedOut: false });
      if (block.some((l) => l.readmeLine === step6!.readmeLine)) step6Output = { stdout: r.stdout, stderr: r.stderr.slice(r.stderr.indexOf(`tour $ ${step6!.command}\n`)) };
    }
    // Step 6's output is the client's alone: no line of the service's log (pino's JSON lines) among it; the log is in
    // the file the service named once.
    const LOG_LINE = /^\{"level":\d+,"time":\d+/m;
    expect(step6Output!.stderr).toContain(`tour $ ${step6!.command}`);
    expect(step6Output!.stdout, 'a log line in step 6 (stdout)').not.toMatch(LOG_LINE);
    expect(step6Output!.stderr, 'a log line in step 6 (stderr)').not.toMatch(LOG_LINE);
    expect(step6Output!.stderr.match(/^log: .*serve\.log$/gm)).toEqual([`log: ${join(work, 'srv', 'serve.log')}`]);
    expect(readFileSync(join(work, 'srv', 'serve.log'), 'utf8')).toMatch(LOG_LINE);
    // What the tour says it leaves behind.
    expect(existsSync(join(work, 'fecr-demo', 'issuer.p12'))).toBe(true);
    expect(readFileSync(join(work, 'factura.pdf')).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(Date.now() - started).toBeLessThan(100_000);
  }, 110_000);
});
