// Issue 37 point 8: the files a user's folder holds are read as regular files under a cap, never through a FIFO, a
// device or a link out of the folder (src/adapters/user-files.ts, the one reader of them). As a user runs it (the
// built bin/fecr.js, its own HOME, each run under a deadline: a FIFO that is opened blocking hangs it, a link to
// /dev/zero grows it by gigabytes): `fecr test` with a NAME.expect.json that is a FIFO, a symlink to /dev/zero, a
// symlink to a file outside the folder, or over EXPECT_MAX_BYTES; a body file that is a FIFO or a symlink to
// /dev/zero; `fecr test --faults` and `fecr hacienda serve --faults` with a FIFO, a link to /dev/zero, an oversized
// file. Each is refused naming the file, exit 1, nothing sent. Before: the FIFOs hung, /dev/zero was read without end.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
const EXPECT_MAX_BYTES = 256 * 1024;
const FAULT_FILE_MAX_BYTES = 4 * 1024 * 1024;
import { runBin, type BinRun } from './helpers/bin.js';
import { tempDir } from './helpers/cli.js';

const home = tempDir('fecr-untrusted-files-');
const work = join(home, 'work');
mkdirSync(work, { recursive: true });
const env = { HOME: home, FECR_NO_KEYCHAIN: '1', NO_COLOR: '1', LANG: 'C.UTF-8' };
const BODY = join(import.meta.dirname, '..', 'fixtures', 'test-suite', '01-factura-servicios.json');
/** A refusal takes well under a second; a hang is what this catches (killed and failed at 30 s). */
const DEADLINE_MS = 30_000;

afterAll(() => rmSync(home, { recursive: true, force: true }));

async function fecr(args: string[]): Promise<BinRun> {
  const r = await runBin(args, { cwd: work, env, deadlineMs: DEADLINE_MS });
  expect(r.timedOut, `fecr ${args.join(' ')} hung: ${r.stderr}`).toBeUndefined();
  return r;
}

const mkfifo = (p: string) => execFileSync('mkfifo', [p]);

/** A folder `name` with one body a.json and its a.expect.json made by `make`. */
function suite(name: string, make: (expectFile: string) => void): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  cpSync(BODY, join(dir, 'a.json'));
  make(join(dir, 'a.expect.json'));
  return name;
}

describe('fecr test: NAME.expect.json', () => {
  it.each([
    ['a FIFO', (f: string) => mkfifo(f), /a FIFO \(named pipe\), not a regular file/],
    // Out of the folder first: refused as such before anything opens it.
    ['a symlink to /dev/zero', (f: string) => symlinkSync('/dev/zero', f), /a symlink to outside the folder: not read/],
    ['a symlink to a file outside the folder', (f: string) => {
      writeFileSync(join(home, 'secret.json'), '{"estado": "aceptado"}');
      symlinkSync(join(home, 'secret.json'), f);
    }, /a symlink to outside the folder/],
    ['over the cap', (f: string) => writeFileSync(f, `{"nombre": "x"${' '.repeat(EXPECT_MAX_BYTES)}}`), new RegExp(`\\d+ bytes: over the limit of ${EXPECT_MAX_BYTES} bytes for an expectation; not read`)],
  ])('%s: refused naming it, exit 1, nothing sent', async (what, make, said) => {
    const dir = suite(`expect-${what.replace(/\W+/g, '-')}`, make);
    const r = await fecr(['test', dir]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^  ${dir}/a\\.expect\\.json: ${said.source}`, 'm'));
    expect(r.stderr).not.toContain('throwaway');
  });
});

describe('fecr test: a body file', () => {
  it('a FIFO, a symlink to /dev/zero: refused naming each, exit 1', async () => {
    mkfifo(join(work, 'pipe.json'));
    symlinkSync('/dev/zero', join(work, 'zero.jsonl'));
    const r = await fecr(['test', 'pipe.json', 'zero.jsonl']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('  pipe.json: a FIFO (named pipe), not a regular file');
    expect(r.stderr).toContain('  zero.jsonl: a device, not a regular file');
  });
});

describe('--faults FILE', () => {
  const make: [string, (f: string) => void, RegExp][] = [
    ['a FIFO', (f) => mkfifo(f), /a FIFO \(named pipe\), not a regular file/],
    ['a symlink to /dev/zero', (f) => symlinkSync('/dev/zero', f), /a device, not a regular file/],
    ['over the cap', (f) => writeFileSync(f, `{"errorRate": 0${' '.repeat(FAULT_FILE_MAX_BYTES)}}`), new RegExp(`\\d+ bytes: over the limit of ${FAULT_FILE_MAX_BYTES} bytes for a fault file`)],
  ];
  it.each(make)('fecr test --faults: %s is refused naming it, exit 1', async (what, mk, said) => {
    const file = `faults-test-${what.replace(/\W+/g, '-')}.json`;
    mk(join(work, file));
    cpSync(BODY, join(work, 'one.json'));
    const r = await fecr(['test', 'one.json', '--faults', file]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${file.replace(/\./g, '\\.')}: cannot read the fault file \\(${said.source}`));
  });

  it.each(make)('fecr hacienda serve --faults: %s is refused naming it, exit 1', async (what, mk, said) => {
    const file = `faults-serve-${what.replace(/\W+/g, '-')}.json`;
    mk(join(work, file));
    const r = await fecr(['hacienda', 'serve', '--port', '0', '--faults', file]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${file.replace(/\./g, '\\.')}: cannot read the fault file \\(${said.source}`));
  });
});
