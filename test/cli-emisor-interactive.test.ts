// Interactive `fecr emisor register` in a real terminal: fecr runs as a child process (tsx) inside a detached tmux
// session; answers are typed with `tmux send-keys` and the screen is read with `tmux capture-pane -p`. Checks the
// prefill from the certificate and from Hacienda's registry (the local emulator's taxpayer data), that no secret
// ever shows on screen, that a wrong PIN is asked again, and that the issuer is registered afterwards. Also: without
// a terminal and without FILE.json it is a usage error (exit 2), no prompt.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { runCli, tempDir } from './helpers/cli.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const ENTRY = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');

const dir = tempDir('fecr-emisor-tty-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1', NO_COLOR: '1' };
const PIN = 'Zq7pin9xw';
const HACIENDA_PASSWORD = 'hunter2-Secreto';
/** Our own tmux server (socket), so a person's tmux is never touched; killed at the end. */
const SOCKET = `fecr-test-${process.pid}`;
const SESSION = 'emisor';

function tmux(...args: string[]): string {
  const r = spawnSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const screen = () => tmux('capture-pane', '-p', '-t', SESSION);
/** Everything the terminal showed so far (scrollback included). */
const history = () => tmux('capture-pane', '-p', '-S', '-', '-t', SESSION);

async function waitForScreen(text: string | RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = screen();
    if (typeof text === 'string' ? s.includes(text) : text.test(s)) return s;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(text)} on the screen:\n${s}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Types `text` (literally) then Enter. */
function answer(text: string): void {
  if (text) tmux('send-keys', '-t', SESSION, '-l', text);
  tmux('send-keys', '-t', SESSION, 'Enter');
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

beforeAll(() => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.p12'), createTestP12({ id: '3101123456', type: '02', pin: PIN, name: 'SOFTWARE TICO' }));
});

afterAll(() => {
  if (hasTmux) spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
  rmSync(dir, { recursive: true, force: true });
});

describe('fecr emisor register without FILE.json', () => {
  it('without a terminal: a usage error naming FILE.json, exit 2, no prompt', async () => {
    const r = await runCli(['emisor', 'register'], { env, cwd: work });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('missing argument FILE.json');
    expect(r.stderr).not.toContain('?');
    const u = await runCli(['emisor', 'update', '--p12', 'issuer.p12'], { env, cwd: work });
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('missing argument FILE.json');
  });

  it.skipIf(!hasTmux)('in a terminal (tmux): asks, prefills from the certificate and the registry, hides secrets, registers', { timeout: 180_000 }, async () => {
    const vars = Object.entries(env)
      .map(([k, v]) => `${k}=${sq(v)}`)
      .join(' ');
    // From the repository (as spawnFecr runs children): running from sources, the emulator's worker threads load
    // tsx, which resolves from the working directory.
    const p12 = join(work, 'issuer.p12');
    const command = `env ${vars} ${sq(process.execPath)} --import ${sq(TSX)} ${sq(ENTRY)} emisor register --p12 ${sq(p12)}; echo "EXIT=$?"; sleep 600`;
    tmux('new-session', '-d', '-s', SESSION, '-x', '120', '-y', '40', command);

    // The identificación comes first (issue 27), then the registry lookup (the emulator's taxpayer data).
    await waitForScreen('Identificación (digits only):', 60_000);
    answer('3101123456');
    await waitForScreen("Hacienda's registry: SOFTWARE TICO SOCIEDAD ANONIMA (tipo 02)");
    await waitForScreen('PIN of the certificate');
    answer('0000');
    await waitForScreen('wrong PIN for this certificate');
    tmux('send-keys', '-t', SESSION, 'C-u');
    answer(PIN);
    await waitForScreen('Identification type');
    expect(screen()).toMatch(/❯ 02 jurídica/);
    answer('');
    await waitForScreen('Legal name (razón social): (SOFTWARE TICO SOCIEDAD ANONIMA)');
    answer('');
    await waitForScreen('Trade name (nombre comercial): (SOFTWARE TICO SOCIEDAD ANONIMA)');
    answer('Software Tico');
    // The taxpayer's active activity is offered by name, as Hacienda writes its code, with its old code (issue 24).
    await waitForScreen('6201.0  Actividades de programación informática  (before TRIBU-CR: 722003)');
    answer('');
    await waitForScreen('Branch (sucursal');
    answer('');
    await waitForScreen('Phone:');
    answer('+506 2222-3333');
    await waitForScreen('E-mail:');
    answer('facturas@softwaretico.cr');
    // Provincia, cantón and distrito by name from the codification: typing narrows the list (accents ignored).
    await waitForScreen('Province (provincia):');
    expect(screen()).toContain('Limón (7)');
    tmux('send-keys', '-t', SESSION, '-l', 'jose');
    await waitForScreen(/San José \(1\)/);
    answer('');
    await waitForScreen('Canton (cantón):');
    expect(screen()).toContain('Escazú (02)');
    tmux('send-keys', '-t', SESSION, '-l', 'san jos');
    await waitForScreen(/San José \(01\)/);
    answer('');
    await waitForScreen('District (distrito):');
    expect(screen()).toContain('Carmen (01)');
    tmux('send-keys', '-t', SESSION, '-l', 'mata');
    await waitForScreen(/Mata Redonda \(08\)/);
    answer('');
    await waitForScreen('Neighbourhood');
    answer('Escalante');
    await waitForScreen('Address (otras señas)');
    answer('Avenida 7, calles 31 y 33');
    await waitForScreen('Environment (ambiente)');
    answer('');
    await waitForScreen('usuarioHacienda');
    answer('cpj-3-101-123456@stag.comprobanteselectronicos.go.cr');
    await waitForScreen('Password of that user');
    answer(HACIENDA_PASSWORD);
    const summary = await waitForScreen('Register this issuer?');
    expect(summary).toMatch(/nombreComercial\s+Software Tico/);
    expect(summary).toMatch(/codigoActividad\s+6201\.0$/m);
    expect(summary).toMatch(/pinCertificado\s+\(hidden\)/);
    expect(summary).toMatch(/claveHacienda\s+\(hidden\)/);
    expect(summary).toMatch(/ubicacion\s+Mata Redonda, San José, San José \(1-01-08\), Escalante, Avenida 7/);
    answer('y');
    const done = await waitForScreen(/EXIT=\d+/, 60_000);
    expect(done).toContain('registered issuer 3101123456');
    expect(done).toContain('EXIT=0');

    // No secret was ever on the screen (PIN, Hacienda password, its base64), only masks.
    const all = history();
    expect(all).not.toContain(PIN);
    expect(all).not.toContain(HACIENDA_PASSWORD);
    expect(all).not.toContain(Buffer.from(HACIENDA_PASSWORD).toString('base64'));
    expect(all).toContain('PIN of the certificate: ' + '*'.repeat(PIN.length));

    const show = await runCli(['emisor', 'show', '3101123456', '--json'], { env, cwd: work });
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout).ubicacion).toMatchObject({ provincia: '1', canton: '01', distrito: '08' });
    expect(JSON.parse(show.stdout)).toMatchObject({
      identificacion: '3101123456',
      tipoIdentificacion: '02',
      nombreComercial: 'Software Tico',
      correoElectronico: 'facturas@softwaretico.cr',
      telefono: '+506 2222-3333',
      ambiente: 2,
    });
    for (const secret of ['pinCertificado', 'claveHacienda', 'certificadoHacienda', 'signingKey', PIN, Buffer.from(HACIENDA_PASSWORD).toString('base64')]) {
      expect(show.stdout).not.toContain(secret);
    }
  });

  it.skipIf(!hasTmux)('in a terminal: an identificación already registered stops register at once, before the certificate', { timeout: 120_000 }, async () => {
    const vars = Object.entries(env)
      .map(([k, v]) => `${k}=${sq(v)}`)
      .join(' ');
    const command = `env ${vars} ${sq(process.execPath)} --import ${sq(TSX)} ${sq(ENTRY)} emisor register; echo "EXIT=$?"; sleep 600`;
    tmux('kill-session', '-t', SESSION);
    tmux('new-session', '-d', '-s', SESSION, '-x', '120', '-y', '40', command);
    await waitForScreen('Identificación (digits only):', 60_000);
    answer('3101123456');
    const done = await waitForScreen(/EXIT=\d+/, 60_000);
    expect(done).toContain('issuer 3101123456 is already registered in this profile (fecr emisor update 3101123456 changes it)');
    expect(done).toContain('EXIT=1');
    expect(history()).not.toContain('Certificate (.p12');
    expect(history()).not.toContain('PIN of the certificate');
  });
});
