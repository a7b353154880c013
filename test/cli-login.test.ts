// fecr login / logout / whoami against a real `fecr serve` child process: the token stored per profile (0600 file
// with one warning line where no keychain answers; the OS keychain under a private D-Bus session), never printed;
// FECR_TOKEN over both; an expired session is one line and exit 4; logout revokes on the server.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';
import { postJson } from './helpers/e2e.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const PASSWORD = 'clave-de-login-2026';
const dir = tempDir('fecr-login-');
const dataDir = join(dir, 'data');
const serverEnv = { HOME: join(dir, 'server-home'), FECR_DATA_DIR: dataDir, FECR_NO_KEYCHAIN: '1' };
const home = join(dir, 'home');
/** The client's environment: temp HOME, no keychain (the file fallback), profile "hosted". */
const env = { HOME: home, FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
const tokenPath = join(home, '.config', 'fecr', 'tokens', 'hosted.token');
const ENTRY = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');
const hasKeyring = spawnSync('sh', ['-c', 'command -v dbus-run-session && command -v gnome-keyring-daemon']).status === 0;
const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0;

let serve: Spawned<{ authUrl: string; baseUrl: string }>;
const seen: CliRun[] = [];

async function cli(args: string[], opts: Parameters<typeof runCli>[1] = {}): Promise<CliRun> {
  const r = await runCli(args, { env, ...opts });
  seen.push(r);
  return r;
}

async function configure(e: Record<string, string>, profile = 'hosted'): Promise<void> {
  for (const [k, v] of [
    ['authUrl', serve.ready.authUrl],
    ['baseUrl', serve.ready.baseUrl],
  ] as const) {
    const r = await runCli(['config', 'set', k, v, '--profile', profile], { env: e });
    expect(r.code, r.stderr).toBe(0);
  }
}

beforeAll(async () => {
  const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: `${PASSWORD}\n` });
  expect(acct.code, acct.stderr).toBe(0);
  serve = await spawnFecr(['serve', '--data-dir', dataDir, '--emulator-delay', '50'], { env: serverEnv });
  await configure(env);
});

afterAll(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('fecr login / whoami / logout (remote profile, real fecr serve)', () => {
  let token = '';

  it('without a terminal, a missing value is a usage error naming the flag; bad credentials exit 4', async () => {
    const noBase = await cli(['login', '--password-stdin'], { stdin: `${PASSWORD}\n` });
    expect(noBase.code).toBe(2);
    expect(noBase.stderr).toMatch(/^error: missing --base NAME/);
    const noPw = await cli(['login', '--base', 'acme']);
    expect(noPw.code).toBe(2);
    expect(noPw.stderr).toMatch(/^error: missing --password-stdin/);
    const wrong = await cli(['login', '--base', 'acme', '--password-stdin'], { stdin: 'otra-clave-mala\n' });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toBe('error: login refused: Base o contraseña incorrectos\n');
    expect(existsSync(tokenPath)).toBe(false);
    const whoami = await cli(['whoami']);
    expect(whoami.code).toBe(4);
    expect(whoami.stderr).toBe('error: not logged in: run fecr login --profile hosted\n');
  });

  it('logs in: the token lands in a 0600 file with one warning line, the base is remembered', async () => {
    const r = await cli(['login', '--base', 'acme', '--password-stdin'], { stdin: `${PASSWORD}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines.filter((l) => l.includes('no OS keychain'))).toEqual([`warning: no OS keychain available: the session token of profile "hosted" is in ${tokenPath} (mode 0600)`]);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`^logged in to ${serve.ready.authUrl} as acme \\(profile "hosted", token in the file\\) until \\d{4}-`));
    expect(statSync(tokenPath).mode & 0o777).toBe(0o600);
    token = readFileSync(tokenPath, 'utf8').trim();
    expect(token.split('.')).toHaveLength(3);
    expect((await cli(['config', 'get', 'base'])).stdout).toBe('acme\n');
    // the token works on the client API
    expect((await postJson(`${serve.ready.baseUrl}/api/hacienda/cabys`, { name: 'café' }, token)).status).toBe(200);
  });

  it('whoami shows base, iss, jti, expiry and time left (JSON and TSV), never the token', async () => {
    const now = Date.now();
    const j = await cli(['whoami', '--json']);
    expect(j.code, j.stderr).toBe(0);
    const w = JSON.parse(j.stdout);
    expect(w).toMatchObject({ profile: 'hosted', base: 'acme', iss: serve.ready.authUrl, token: 'file', baseUrl: serve.ready.baseUrl });
    expect(w.jti).toMatch(/^[\w-]{8,}$/);
    expect(w.secondsLeft).toBeGreaterThan(28_700);
    expect(w.secondsLeft).toBeLessThanOrEqual(28_800);
    expect(Date.parse(w.expiresAt) - now).toBeGreaterThan(28_700_000);
    const t = await cli(['whoami']);
    const rows = Object.fromEntries(t.stdout.trim().split('\n').map((l) => l.split('\t') as [string, string]));
    // A piped table neutralises a cell that a spreadsheet would take for a formula: a jti starting with '-' gets a '.
    expect(rows).toMatchObject({ field: 'value', profile: 'hosted', base: 'acme', iss: serve.ready.authUrl, jti: /^[-+=@]/.test(w.jti) ? `'${w.jti}` : w.jti, expires: w.expiresAt, token: 'file' });
    expect(rows['time left']).toMatch(/^(7h 5\dm|8h 00m)$/);
    // Two hours later, by the injected clock: 2 hours less.
    const later = await cli(['whoami', '--json'], { now: () => new Date(Date.now() + 2 * 3600_000) });
    expect(JSON.parse(later.stdout).secondsLeft).toBeLessThanOrEqual(28_800 - 7200);
  });

  it('an expired token is one line, "session expired: run fecr login", exit 4 — whoami and any verb', async () => {
    const future = () => new Date(Date.now() + 8 * 3600_000 + 60_000);
    const w = await cli(['whoami'], { now: future });
    expect(w.code).toBe(4);
    expect(w.stderr).toBe('session expired: run fecr login\n');
    expect(w.stdout).toBe('');
    // A verb that goes through openBackend (checked before any request).
    const { openBackend } = await import('../src/client/select.js');
    const { PassThrough } = await import('node:stream');
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const ctx = {
      io: { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env, cwd: home, stdoutIsTTY: false, stdinIsTTY: false },
      debug: false,
      now: future,
      randomBytes: (n: number) => new Uint8Array(n),
    };
    await expect(openBackend(ctx)).rejects.toMatchObject({ name: 'ClientError', code: 'auth', bare: true, message: 'session expired: run fecr login' });
    expect(err).toBe(''); // the client prints nothing: the CLI shows the line (tests below, through runCli)
  });

  it('FECR_TOKEN overrides the stored token, for any profile; a token that is not a JWT is exit 4', async () => {
    const e2 = { HOME: join(dir, 'home-env'), FECR_NO_KEYCHAIN: '1' };
    await configure(e2, 'ci');
    const r = await runCli(['whoami', '--json', '--profile', 'ci'], { env: { ...e2, FECR_TOKEN: token } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ profile: 'ci', base: 'acme', token: 'env' });
    const bad = await runCli(['whoami', '--profile', 'ci'], { env: { ...e2, FECR_TOKEN: 'not-a-token' } });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toBe('error: FECR_TOKEN is not a valid session token: run fecr login\n');
  });

  it('logout revokes the token on the server and forgets it', async () => {
    const r = await cli(['logout']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('logged out: token revoked and forgotten (profile "hosted")\n');
    expect(existsSync(tokenPath)).toBe(false);
    const refused = await postJson(`${serve.ready.baseUrl}/api/hacienda/cabys`, { name: 'café' }, token);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: 'unauthorized', message: 'Token inválido o expirado' });
    expect((await cli(['whoami'])).code).toBe(4);
    const again = await cli(['logout']);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('not logged in (profile "hosted")\n');
  });

  it('a revoked token is refused by the API as an authentication error (exit 4 line from the backend)', async () => {
    const { RemoteBackend } = await import('../src/client/remote-backend.js');
    // Not past its own exp: revoked (read from the token, or told by the caller); past it: expired.
    const b = new RemoteBackend({ baseUrl: serve.ready.baseUrl, token });
    await expect(b.cabys('café')).rejects.toMatchObject({ name: 'BackendError', code: 'auth', message: 'session revoked: run fecr login' });
    await b.close();
    const late = new RemoteBackend({ baseUrl: serve.ready.baseUrl, token, tokenExpired: () => true });
    await expect(late.cabys('café')).rejects.toMatchObject({ name: 'BackendError', code: 'auth', message: 'session expired: run fecr login' });
    await late.close();
  });

  it('no run printed the token', () => {
    expect(token).not.toBe('');
    for (const r of seen) {
      expect(r.stdout).not.toContain(token);
      expect(r.stderr).not.toContain(token);
    }
  });
});

/** Runs fecr (sources, tsx) as a child; returns code, stdout, stderr. */
function fecrChild(args: string[], e: NodeJS.ProcessEnv, stdin = ''): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', TSX, ENTRY, ...args], { env: e, input: stdin, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('where the token is kept (child processes)', () => {
  it('no D-Bus session: the 0600 file, said in one line', async () => {
    const h = join(dir, 'home-nodbus');
    const e: NodeJS.ProcessEnv = { ...process.env, HOME: h, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent', FECR_PROFILE: 'hosted' };
    delete e.FECR_NO_KEYCHAIN;
    delete e.XDG_CONFIG_HOME;
    await configure({ HOME: h });
    const r = fecrChild(['login', '--base', 'acme', '--password-stdin'], e, `${PASSWORD}\n`);
    expect(r.code, r.stderr).toBe(0);
    const file = join(h, '.config', 'fecr', 'tokens', 'hosted.token');
    expect(r.stderr.split('\n').filter((l) => /keychain/.test(l))).toEqual([`warning: no OS keychain available: the session token of profile "hosted" is in ${file} (mode 0600)`]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const w = fecrChild(['whoami', '--json'], e);
    expect(JSON.parse(w.stdout)).toMatchObject({ base: 'acme', token: 'file' });
    expect(fecrChild(['logout'], e).code).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  it.skipIf(!hasKeyring)('a Secret Service answering (gnome-keyring in a private D-Bus session): the keychain, no file, no warning', async () => {
    const h = join(dir, 'home-keyring');
    await configure({ HOME: h });
    const file = join(h, '.config', 'fecr', 'tokens', 'hosted.token');
    const fecr = `"${process.execPath}" --import "${TSX}" "${ENTRY}"`;
    const script = [
      `printf 'test' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1`,
      `printf '%s\\n' "$PW" | ${fecr} login --base acme --password-stdin 2>"$OUT/login.err"; echo "login=$?"`,
      `${fecr} whoami --json >"$OUT/whoami.json" 2>/dev/null; echo "whoami=$?"`,
      `if [ -e "${file}" ]; then echo file=yes; else echo file=no; fi`,
      `${fecr} logout 2>/dev/null; echo "logout=$?"`,
      `${fecr} whoami 2>/dev/null; echo "after=$?"`,
    ].join('\n');
    const e: NodeJS.ProcessEnv = { ...process.env, HOME: h, PW: PASSWORD, OUT: h, FECR_PROFILE: 'hosted' };
    delete e.FECR_NO_KEYCHAIN;
    delete e.XDG_CONFIG_HOME;
    // Five starts of the CLI from the sources in a row: 30 s was not enough under CI's load (the fresh run of 6c302b5).
    const out = execFileSync('dbus-run-session', ['--', 'sh', '-c', script], { encoding: 'utf8', env: e, timeout: 110_000 });
    expect(Object.fromEntries(out.trim().split('\n').map((l) => l.split('=') as [string, string]))).toEqual({ login: '0', whoami: '0', file: 'no', logout: '0', after: '4' });
    const loginErr = readFileSync(join(h, 'login.err'), 'utf8');
    expect(loginErr).not.toMatch(/keychain available|warning/);
    expect(loginErr).toMatch(/token in the OS keychain/);
    expect(JSON.parse(readFileSync(join(h, 'whoami.json'), 'utf8'))).toMatchObject({ base: 'acme', token: 'keychain' });
  }, 120_000);
});

describe.skipIf(!hasScript)('login on a terminal', () => {
  it('prompts for the base and the password, without echoing the password', async () => {
    const h = join(dir, 'home-tty');
    await configure({ HOME: h }, 'tty');
    const cmd = `"${process.execPath}" --import "${TSX}" "${ENTRY}" login --profile tty`;
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, HOME: h, FECR_NO_KEYCHAIN: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    // The questions of src/cli/prompt.ts (@inquirer/prompts) are styled: compare the text without its escapes.
    child.stdout.on('data', (c: Buffer) => (screen += c.toString().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')));
    const waitFor = async (re: RegExp) => {
      const deadline = Date.now() + 20_000;
      while (!re.test(screen)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${re} on the screen: ${JSON.stringify(screen)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await waitFor(/Account \(base\):/);
    child.stdin.write('acme\r');
    await waitFor(/Password for acme:/);
    await new Promise((r) => setTimeout(r, 100)); // raw mode is set right after the prompt is written
    child.stdin.write(`${PASSWORD}\r`);
    const code = await exited;
    expect(code, screen).toBe(0);
    expect(screen).toMatch(/logged in to .* as acme \(profile "tty"/);
    expect(screen).not.toContain(PASSWORD);
    expect(existsSync(join(h, '.config', 'fecr', 'tokens', 'tty.token'))).toBe(true);
  });
});
