// Issue 12, defects 3 and 4, at the CLI (in-process, temp HOME):
//  - a control character in a text field is a finding at its path in `fecr validate`, `fecr send` and
//    `fecr emisor register`, never an "internal error";
//  - a validation failure prints a headline that says what is invalid (`error: invalid issuer record: 1 finding`,
//    `error: invalid document: 3 findings`), not the API's "Campos requeridos faltantes", then one line per
//    finding (`  path: message`), exit 1, the same in a local profile and in a remote one (a real client API on
//    127.0.0.1:0, reached over HTTP with FECR_TOKEN).
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { FIVE_KINDS, fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { ISSUER } from './helpers/bodies.js';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const AUTH_URL = 'http://auth.fecr.test';
const root = tempDir('fecr-findings-');
const MASTER_KEY = randomBytes(32).toString('base64');
/** 3101123456 with a real .p12: registered in both profiles, so a body for it gets as far as the XML. */
const registered = makeTestIssuer();

let service: TestContext;
let app: ReturnType<typeof buildApiApp>;
let baseUrl: string;
let token: string;

beforeAll(async () => {
  service = await makeServiceContext();
  await ensureSigningKey(service.ctx);
  await createAccount(service.ctx, { base: 'acme', password: 'contrasena-acme-123' });
  token = (await issueToken(service.ctx, { base: 'acme' }, { issuer: AUTH_URL })).token;
  app = buildApiApp(service.ctx, { authenticate: createTokenVerifier(service.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await service?.close();
  rmSync(root, { recursive: true, force: true });
});

function expectNoInternalError(r: CliRun): void {
  expect(r.stderr).not.toMatch(/internal error/);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('Campos requeridos faltantes');
}

describe.each(['local', 'remote'] as const)('%s profile', (mode) => {
  const dir = join(root, mode);
  const work = join(dir, 'work');
  const env: Record<string, string> =
    mode === 'local'
      ? { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1', FECR_MASTER_KEY: MASTER_KEY }
      : { HOME: dir, FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
  const fecr = (args: string[], stdin?: string) => runCli(args, { env, cwd: work, ...(stdin !== undefined ? { stdin } : {}) });

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    if (mode === 'remote') {
      for (const [k, v] of [
        ['mode', 'remote'],
        ['authUrl', AUTH_URL],
        ['baseUrl', baseUrl],
        ['base', 'acme'],
      ] as const) {
        const r = await fecr(['config', 'set', k, v]);
        expect(r.code, r.stderr).toBe(0);
      }
      env.FECR_TOKEN = token;
    }
    writeFileSync(join(work, 'issuer.json'), JSON.stringify(registered.issuer));
    const reg = await fecr(['emisor', 'register', 'issuer.json']);
    expect(reg.code, reg.stderr).toBe(0);
  });

  it('emisor register with ambiente "sandbox": the headline names the issuer record, then the finding', async () => {
    writeFileSync(join(work, 'sandbox-issuer.json'), JSON.stringify({ ...ISSUER, ambiente: 'sandbox' }));
    const r = await fecr(['emisor', 'register', 'sandbox-issuer.json']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: invalid issuer record: 1 finding\n  ambiente: must be 1 (production) or 2 (testing/sandbox)\n');
    expectNoInternalError(r);
  });

  it('emisor register with a control character: a finding at its path', async () => {
    writeFileSync(join(work, 'bell-issuer.json'), JSON.stringify({ ...ISSUER, nombreComercial: 'Software\u0007Tico' }));
    const r = await fecr(['emisor', 'register', 'bell-issuer.json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: invalid issuer record: 1 finding\n  nombreComercial: contains U+0007, not allowed in XML\n');
    expectNoInternalError(r);
  });

  it('send with three bad values: "invalid document: 3 findings", one line per finding', async () => {
    const body = fixtureBody(FIVE_KINDS.FE);
    delete body.codigoActividad;
    body.folioType = 'RECEIPT';
    body.detalleServicio[0].precioUnitario = 'mil';
    const r = await fecr(['send', '-', '--wait'], JSON.stringify(body));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: invalid document: 3 findings');
    expect(lines.slice(1).sort()).toEqual(
      [
        '  codigoActividad: is required',
        '  detalleServicio[0].precioUnitario: must be a non-negative decimal in a string with at most 5 decimals, e.g. "1000.00"',
        '  folioType: must be "INVOICE"',
      ].sort(),
    );
    expectNoInternalError(r);
  });

  it('send with a control character in detalle: a finding at detalleServicio[0].detalle', async () => {
    const body = fixtureBody(FIVE_KINDS.FE);
    body.detalleServicio[0].detalle = 'bell\u0007char';
    const r = await fecr(['send', '-'], JSON.stringify(body));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: invalid document: 1 finding\n  detalleServicio[0].detalle: contains U+0007, not allowed in XML\n');
    expectNoInternalError(r);
  });

  it('a refusal that says what is wrong keeps its own headline', async () => {
    // Not a validation of the body: the issuer is not registered in this account.
    const r = await fecr(['send', '-'], JSON.stringify({ ...fixtureBody(FIVE_KINDS.FE), emisor: '3101999999' }));
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^error: El emisor 3101999999 no está registrado/);
    expect(lines.slice(1)).toEqual(['  emisor: no es un emisor registrado de la cuenta']);
  });
});

describe('fecr validate (offline)', () => {
  const work = join(root, 'validate');

  beforeAll(() => {
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'issuer.json'), JSON.stringify(ISSUER));
  });

  it('a control character in detalle: the finding, exit 1, no internal error', async () => {
    const body = fixtureBody(FIVE_KINDS.FE);
    body.detalleServicio[0].detalle = 'bell\u0007char';
    for (const args of [['validate', '-'], ['validate', '-', '--issuer', 'issuer.json']]) {
      const r = await runCli(args, { cwd: work, env: { HOME: work }, stdin: JSON.stringify(body) });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('detalleServicio[0].detalle: contains U+0007, not allowed in XML\n');
      expect(r.stderr).toBe('error: invalid document: 1 finding\n');
      expectNoInternalError(r);
      const j = await runCli([...args, '--json'], { cwd: work, env: { HOME: work }, stdin: JSON.stringify(body) });
      expect(j.code).toBe(1);
      expect(JSON.parse(j.stdout)).toMatchObject({ valid: false, findings: [{ path: 'detalleServicio[0].detalle', message: 'contains U+0007, not allowed in XML' }] });
    }
  });

  it('a control character in the --issuer record: its findings, exit 1', async () => {
    writeFileSync(join(work, 'bad-issuer.json'), JSON.stringify({ ...ISSUER, ambiente: 'sandbox', nombre: 'SOFTWARE\u001fTICO' }));
    const r = await runCli(['validate', '-', '--issuer', 'bad-issuer.json'], { cwd: work, env: { HOME: work }, stdin: JSON.stringify(fixtureBody(FIVE_KINDS.FE)) });
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: bad-issuer.json: invalid issuer record: 2 findings');
    expect(lines.slice(1).sort()).toEqual(['  ambiente: must be 1 (production) or 2 (testing/sandbox)', '  nombre: contains U+001F, not allowed in XML']);
    expectNoInternalError(r);
  });
});
