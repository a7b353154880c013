// The first hour's files and listings (issue 13): `fecr init` (an issuer record and one body per kind, the nine of
// v4.4 with issue 15's ND, FEC, FEE and REP, each valid with `fecr validate --issuer` as written and each new one
// aceptado when sent, never overwriting without --force), `fecr emisor list` and `show` (the
// record as registered, never a secret: locally, through a remote profile and on the raw API), `fecr send --quiet`
// (the clave alone), and `fecr serve`'s ready line on stderr: the `fecr config set` command that points a remote
// profile at it, which run as printed makes a working profile.
import { readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileHint } from '../src/commands/serve/run.js';
import { TEMPLATE_BODIES } from '../src/commands/init/run.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { waitUntil } from './helpers/e2e.js';

const root = tempDir('fecr-templates-');
const PIN = 'pin-Xq81z';
const HACIENDA_PASSWORD = 'hacienda-Secreto-77';
const ACCOUNT_PASSWORD = 'clave-de-la-cuenta-2026';
const p12 = createTestP12({ id: '3101123456', type: '02', pin: PIN, name: 'SOFTWARE TICO SOCIEDAD ANONIMA' });
const FILES = ['issuer.json', 'fe.json', 'fe-exonerada.json', 'nc.json', 'te.json', 'te-extranjero.json', 'nd.json', 'fec.json', 'fee.json', 'rep.json'];

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** No secret of the issuer, by name or by value, in any output. */
function expectNoSecrets(...outputs: string[]): void {
  const secrets = [
    'claveHacienda',
    'pinCertificado',
    'certificadoHacienda',
    'signingKey',
    'PRIVATE KEY',
    PIN,
    Buffer.from(HACIENDA_PASSWORD).toString('base64'),
    HACIENDA_PASSWORD,
    p12.toString('base64').slice(0, 40),
  ];
  for (const out of outputs) for (const s of secrets) expect(out).not.toContain(s);
}

function dir(name: string): string {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  return d;
}

/** The issuer.json that `init --p12` wrote, with the Hacienda password set as a user would. */
function withPassword(file: string): void {
  const r = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  r.claveHacienda = Buffer.from(HACIENDA_PASSWORD).toString('base64');
  writeFileSync(file, JSON.stringify(r, null, 2));
}

describe('fecr init', () => {
  const home = dir('init-home');
  const env = { HOME: home, FECR_NO_KEYCHAIN: '1', FECR_DATA_DIR: join(home, 'data') };
  const fecr = (args: string[], cwd: string, stdin?: string) => runCli(args, { env, cwd, ...(stdin !== undefined ? { stdin } : {}) });

  it('writes issuer.json (0600) and one body per kind, each valid with fecr validate --issuer issuer.json as written', async () => {
    const work = dir('init-plain');
    const r = await fecr(['init'], work);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(FILES);
    expect(statSync(join(work, 'issuer.json')).mode & 0o777).toBe(0o600);
    const issuer = JSON.parse(readFileSync(join(work, 'issuer.json'), 'utf8')) as Record<string, unknown>;
    // Without --p12: the test issuer of `fecr certs create-test --id 3101123456`, secrets as placeholders.
    // The activity as Hacienda writes it since TRIBU-CR (CIIU-4), in the record and in every body (issue 24).
    expect(issuer).toMatchObject({ identificacion: '3101123456', tipoIdentificacion: '02', ambiente: 2, codigoActividad: '6201.0' });
    expect(String(issuer.certificadoHacienda)).toMatch(/^REPLACE/);
    expect(String(issuer.pinCertificado)).toMatch(/^REPLACE/);
    const kinds: string[] = [];
    for (const f of FILES.slice(1)) {
      const body = JSON.parse(readFileSync(join(work, f), 'utf8')) as Record<string, unknown>;
      expect(body.emisor).toBe('3101123456');
      expect(body.codigoActividad, f).toBe('6201.0');
      kinds.push(String(body.tipoDoc));
      const v = await fecr(['validate', f, '--issuer', 'issuer.json', '--strict'], work);
      expect(v.code, `${f}: ${v.stdout}${v.stderr}`).toBe(0);
      expect(v.stderr, `${f}: no warning`).toBe('');
      expect(v.stdout).toMatch(/^valid (FE|NC|TE|ND|FEC|FEE|REP) /);
    }
    expect(kinds).toEqual(['1', '1', '3', '4', '4', '2', '8', '9', '10']);
    // The bodies are the reference fixtures made this issuer's (fixtures stay the reference).
    const fe = JSON.parse(readFileSync(join(work, 'fe.json'), 'utf8')) as Record<string, unknown>;
    const fixture = JSON.parse(readFileSync(new URL(`../fixtures/documents/${TEMPLATE_BODIES[0]!.fixture}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
    expect(fe.detalleServicio).toEqual(fixture.detalleServicio);
    expect(fe.resumenFactura).toEqual(fixture.resumenFactura);
  });

  it('never overwrites without --force: nothing is written, the files are named', async () => {
    const work = dir('init-twice');
    expect((await fecr(['init'], work)).code).toBe(0);
    writeFileSync(join(work, 'fe.json'), '{"mine": true}\n');
    const again = await fecr(['init'], work);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe('error: issuer.json, fe.json, fe-exonerada.json, nc.json, te.json, te-extranjero.json, nd.json, fec.json, fee.json, rep.json exist already: nothing written (fecr init --force overwrites them)');
    expect(readFileSync(join(work, 'fe.json'), 'utf8')).toBe('{"mine": true}\n');
    // One file in the way is enough to write nothing.
    const partial = dir('init-partial');
    writeFileSync(join(partial, 'nc.json'), 'x');
    const p = await fecr(['init'], partial);
    expect(p.code).toBe(1);
    expect(p.stderr).toContain('error: nc.json exists already: nothing written');
    expect(() => statSync(join(partial, 'issuer.json'))).toThrow();
    const forced = await fecr(['init', '--force'], work);
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(work, 'fe.json'), 'utf8'))).toMatchObject({ tipoDoc: '1', emisor: '3101123456' });
  });

  it('--p12 FILE --pin-stdin puts the .p12 and its PIN in issuer.json, with the identificación it certifies; DIR as argument', async () => {
    const work = dir('init-p12');
    const other = createTestP12({ id: '3101654321', type: '02', pin: PIN });
    writeFileSync(join(work, 'other.p12'), other);
    const r = await fecr(['init', 'start', '--p12', 'other.p12', '--pin-stdin', '--json'], work, `${PIN}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ dir: 'start', files: FILES.map((f) => join('start', f)), identificacion: '3101654321', certificate: 'other.p12' });
    const issuer = JSON.parse(readFileSync(join(work, 'start', 'issuer.json'), 'utf8')) as Record<string, unknown>;
    expect(issuer).toMatchObject({ identificacion: '3101654321', tipoIdentificacion: '02', pinCertificado: PIN, certificadoHacienda: other.toString('base64') });
    for (const f of FILES.slice(1)) {
      expect(JSON.parse(readFileSync(join(work, 'start', f), 'utf8'))).toMatchObject({ emisor: '3101654321' });
      const v = await fecr(['validate', join('start', f), '--issuer', join('start', 'issuer.json')], work);
      expect(v.code, `${f}: ${v.stdout}${v.stderr}`).toBe(0);
    }
  });

  it('usage: --p12 and --pin-stdin go together; a wrong PIN is one line', async () => {
    const work = dir('init-usage');
    writeFileSync(join(work, 'issuer.p12'), p12);
    expect((await fecr(['init', '--p12', 'issuer.p12'], work)).code).toBe(2);
    expect((await fecr(['init', '--pin-stdin'], work, `${PIN}\n`)).code).toBe(2);
    const wrong = await fecr(['init', '--p12', 'issuer.p12', '--pin-stdin'], work, 'nope\n');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim()).toBe('error: issuer.p12: wrong PIN for this certificate');
    expect(() => statSync(join(work, 'issuer.json'))).toThrow();
  });
});

describe('local profile: init, register, send --quiet, emisor list/show', () => {
  const home = dir('local-home');
  const work = dir('local-work');
  const env = { HOME: home, FECR_NO_KEYCHAIN: '1', FECR_DATA_DIR: join(home, 'data') };
  const fecr = (args: string[], stdin?: string) => runCli(args, { env, cwd: work, ...(stdin !== undefined ? { stdin } : {}) });

  beforeAll(async () => {
    writeFileSync(join(work, 'issuer.p12'), p12);
    expect((await fecr(['init', '--p12', 'issuer.p12', '--pin-stdin'], `${PIN}\n`)).code).toBe(0);
    withPassword(join(work, 'issuer.json'));
  });

  it('emisor list before any registration: nothing on stdout, a hint on stderr; [] as JSON', async () => {
    const r = await fecr(['emisor', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('no issuer is registered yet');
    expect(JSON.parse((await fecr(['emisor', 'list', '--json'])).stdout)).toEqual([]);
  });

  it('registers the issuer of init as written, and send --wait --quiet prints the clave alone (the verdict is the exit code)', async () => {
    const reg = await fecr(['emisor', 'register', 'issuer.json']);
    expect(reg.code, reg.stderr).toBe(0);
    const sent = await fecr(['send', 'fe.json', '--wait', '--quiet']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^\d{50}\n$/);
    expect(sent.stderr).toBe('');
    const clave = sent.stdout.trim();
    const status = await fecr(['status', clave, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ clave, estado: 'aceptado' });
    // Without --wait too; the same body is the same clave.
    const again = await fecr(['send', 'fe.json', '--quiet']);
    expect(again.stdout).toBe(`${clave}\n`);
    expect((await fecr(['send', 'fe.json', '--quiet', '--json'])).code).toBe(2);
  });

  it("init's nd.json, fec.json, fee.json and rep.json, sent as written, reach aceptado (each its kind's clave)", async () => {
    for (const [file, tipo] of [['nd.json', '02'], ['fec.json', '08'], ['fee.json', '09'], ['rep.json', '10']] as const) {
      const sent = await fecr(['send', file, '--wait', '--quiet']);
      expect(sent.code, `${file}: ${sent.stdout}${sent.stderr}`).toBe(0);
      expect(sent.stdout.trim().slice(29, 31)).toBe(tipo);
    }
  }, 60_000);

  it('emisor list and show: the record as registered, never a secret', async () => {
    const list = await fecr(['emisor', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const [header, row, ...rest] = list.stdout.trim().split('\n');
    expect(header).toBe('identificacion\ttipo\tnombre\tcodigoActividad\tsucursal\tambiente\tcorreoElectronico\tcertificateUntil');
    expect(row!.split('\t').slice(0, 2)).toEqual(['3101123456', '02']);
    // The day the issuer's certificate ends (issue 29).
    expect(row!.split('\t').at(-1)).toMatch(/^\d{4}-\d\d-\d\d$/);
    expect(rest).toEqual([]);
    const listJson = await fecr(['emisor', 'list', '--json']);
    const [details] = JSON.parse(listJson.stdout) as Record<string, unknown>[];
    expect(Object.keys(details!).sort()).toEqual(
      ['identificacion', 'tipoIdentificacion', 'nombre', 'nombreComercial', 'codigoActividad', 'sucursal', 'telefono', 'correoElectronico', 'ubicacion', 'ambiente', 'usuarioHacienda', 'registeredAt', 'updatedAt', 'certificateUntil'].sort(),
    );
    const show = await fecr(['emisor', 'show', '3101123456']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^usuarioHacienda\tcpj-3-101-123456@stag\.comprobanteselectronicos\.go\.cr$/m);
    expect(show.stdout).toMatch(/^ubicacion\.provincia\t1$/m);
    const showJson = await fecr(['emisor', 'show', '3101123456', '--json']);
    expect(JSON.parse(showJson.stdout)).toEqual(details);
    expectNoSecrets(list.stdout, list.stderr, listJson.stdout, show.stdout, show.stderr, showJson.stdout);
  });
});

describe('fecr serve: the ready command on stderr, run as printed; a remote profile lists issuers without secrets', () => {
  const home = dir('remote-home');
  const work = dir('remote-work');
  const serverEnv = { HOME: join(root, 'server-home'), FECR_DATA_DIR: join(root, 'server-data'), FECR_NO_KEYCHAIN: '1' };
  const env = { HOME: home, FECR_NO_KEYCHAIN: '1' };
  const fecr = (args: string[], stdin?: string): Promise<CliRun> => runCli(args, { env, cwd: work, ...(stdin !== undefined ? { stdin } : {}) });
  let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;
  let hint = '';

  beforeAll(async () => {
    const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: `${ACCOUNT_PASSWORD}\n` });
    expect(acct.code, acct.stderr).toBe(0);
    serve = await spawnFecr(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--emulator-delay', '50'], { env: serverEnv });
    await waitUntil(() => serve!.stderr().includes('--profile hosted\n'), { timeoutMs: 10_000, label: 'the ready command on stderr', describe: () => serve!.stderr() });
    hint = serve.stderr();
    writeFileSync(join(work, 'issuer.p12'), p12);
    expect((await fecr(['init', '--p12', 'issuer.p12', '--pin-stdin'], `${PIN}\n`)).code).toBe(0);
    withPassword(join(work, 'issuer.json'));
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
  });

  it('stdout is the JSON ready line; stderr has the config command with its URLs and the one account', async () => {
    const line = `  fecr config set mode=remote authUrl=${serve!.ready.authUrl} baseUrl=${serve!.ready.baseUrl} base=acme --profile hosted`;
    expect(hint.split('\n')).toContain(line);
    expect(hint.split('\n')).toContain('  fecr login --profile hosted');
    // Run as printed (less the leading "fecr"): the profile exists and logging in works.
    const args = line.trim().split(' ').slice(1);
    const set = await fecr(args);
    expect(set.code, set.stderr).toBe(0);
    const login = await fecr(['login', '--profile', 'hosted', '--password-stdin'], `${ACCOUNT_PASSWORD}\n`);
    expect(login.code, login.stderr).toBe(0);
  });

  it('emisor register/list/show over HTTP: the record without secrets, on the CLI and on the raw API', async () => {
    expect((await fecr(['emisor', 'register', 'issuer.json', '--profile', 'hosted'])).code).toBe(0);
    const list = await fecr(['emisor', 'list', '--json', '--profile', 'hosted']);
    expect(list.code, list.stderr).toBe(0);
    const [details] = JSON.parse(list.stdout) as Record<string, unknown>[];
    expect(details).toMatchObject({ identificacion: '3101123456', nombre: 'MI EMPRESA SOCIEDAD ANONIMA' });
    const show = await fecr(['emisor', 'show', '3101123456', '--profile', 'hosted']);
    expect(show.code, show.stderr).toBe(0);
    const missing = await fecr(['emisor', 'show', '3101999999', '--profile', 'hosted']);
    expect(missing.code).toBe(1);
    // The endpoint itself.
    const login = (await (
      await fetch(`${serve!.ready.authUrl}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ base: 'acme', password: ACCOUNT_PASSWORD }) })
    ).json()) as { token: string };
    const api = await fetch(`${serve!.ready.baseUrl}/api/consultar/emisores`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
      body: '{}',
    });
    expect(api.status).toBe(200);
    const raw = await api.text();
    expect(JSON.parse(raw)).toEqual({ status: 'success', data: [details] });
    const unauth = await fetch(`${serve!.ready.baseUrl}/api/consultar/emisores`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauth.status).toBe(401);
    expectNoSecrets(list.stdout, show.stdout, raw);
  });

  it('the ready command names the account only when there is exactly one', async () => {
    const fakeDb = (bases: string[]) =>
      ({
        selectFrom: () => ({ select: () => ({ where: () => ({ orderBy: () => ({ limit: () => ({ execute: async () => bases.map((base) => ({ base })) }) }) }) }) }),
      }) as unknown as Parameters<typeof profileHint>[0];
    const none = await profileHint(fakeDb([]), 'http://a', 'http://b');
    expect(none).toContain('base=ACCOUNT --profile hosted');
    expect(none).toContain('no account yet: fecr accounts create ACCOUNT --password-stdin');
    const two = await profileHint(fakeDb(['acme', 'beta']), 'http://a', 'http://b');
    expect(two).toContain('(ACCOUNT: one of acme, beta)');
    expect(await profileHint(fakeDb(['acme']), 'http://a', 'http://b')).toContain('authUrl=http://a baseUrl=http://b base=acme --profile hosted');
  });
});
