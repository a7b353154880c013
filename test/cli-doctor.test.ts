// Issue 27, item 3: `fecr doctor [--profile P]` checks a profile end to end, one line per check with what to do, and
// exits 0 only when no check fails. The default local profile as the README's tour sets it up (a test .p12, fecr init,
// fecr emisor register): every check holds. A certificate 10 days from expiry: a warning line, exit 0. A sandbox
// profile (the emulator on 127.0.0.1 port 0 standing in for Hacienda's sandbox, strict: only its user and password)
// with fecr init's placeholder password: one failing line naming it and the fix, and no login attempted; with the
// right password every check holds (one IdP grant); with a wrong one the IdP's refusal. A profile pointed at a closed
// port or at a name that does not resolve: one failing line naming the cause; `fecr send` there says the same cause
// without --debug. Also the cause wording (hacienda/client/describe.ts) and a certificate's environment by its CA.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateEnvironment } from '../src/core/sign/cert-environment.js';
import { describeP12 } from '../src/core/sign/p12.js';
import { createTestCa, createTestP12 } from '../src/core/sign/testcert.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { describeFailure, describeNetworkCode, NetworkError, probe, ServiceUnavailableError } from '../src/hacienda/client/index.js';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';

const ID = '3101123456';
const USER = 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr';
const PASSWORD = 'clave-del-sandbox';
const DAY = 86_400_000;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

const root = tempDir('fecr-doctor-');
let emu: RunningEmulator;
let closedPort: number;

/** The CLI in-process, in its own HOME (no developer XDG_* or FECR_* variables). */
function cli(home: string) {
  const work = join(home, 'work');
  mkdirSync(work, { recursive: true });
  return (args: string[], stdin?: string): Promise<CliRun> => runCli(args, { env: { HOME: home, FECR_NO_KEYCHAIN: '1' }, cwd: work, ...(stdin !== undefined ? { stdin } : {}) });
}

const lines = (r: CliRun) => r.stdout.trim().split('\n');
const failing = (r: CliRun) => lines(r).filter((l) => l.startsWith('fail'));

/** The README tour's step 2 in a fresh HOME, with this .p12 (PIN 1234). */
async function tourIssuer(fecr: ReturnType<typeof cli>, p12: Buffer, profile: string[] = []): Promise<void> {
  writeFileSync(join(root, 'tmp.p12'), p12);
  const init = await fecr(['init', '--p12', join(root, 'tmp.p12'), '--pin-stdin', '--force'], '1234\n');
  expect(init.code, init.stderr).toBe(0);
  const reg = await fecr(['emisor', 'register', 'issuer.json', ...profile]);
  expect(reg.code, reg.stderr).toBe(0);
}

beforeAll(async () => {
  emu = await startEmulator({ host: '127.0.0.1', port: 0, processingDelayMs: 30, users: { [USER]: PASSWORD } });
  const s: Server = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closedPort = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
}, 60_000);

afterAll(async () => {
  await emu?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('fecr doctor on the default local profile', () => {
  it('after the README tour step 2 (certs create-test, init --p12, emisor register): every check holds, exit 0', async () => {
    const fecr = cli(join(root, 'tour'));
    const cert = await fecr(['certs', 'create-test', '--id', ID, '--type', '02', '--pin', '1234', '--out', 'issuer.p12']);
    expect(cert.code, cert.stderr).toBe(0);
    expect((await fecr(['init', '--p12', 'issuer.p12', '--pin-stdin'], '1234\n')).code).toBe(0);
    expect((await fecr(['emisor', 'register', 'issuer.json'])).code).toBe(0);
    const r = await fecr(['doctor']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const l of lines(r)) expect(l).toMatch(/^ok {4}/);
    expect(r.stdout).toMatch(/^ok {4}config: profile "default" \(local, env local\)/m);
    expect(r.stdout).toMatch(/^ok {4}data dir: .*\(mode 0700, readable and writable\)/m);
    expect(r.stdout).toMatch(new RegExp(`^ok {4}certificate ${ID}: .*SERIALNUMBER=CPJ-3-101-123456, identificación ${ID}, valid until \\d{4}-\\d\\d-\\d\\d \\(7\\d\\d days left\\)$`, 'm'));
    expect(r.stderr.trim()).toBe('profile "default": every check holds');
    const j = await fecr(['doctor', '--json']);
    expect(j.code).toBe(0);
    const report = JSON.parse(j.stdout) as { profile: string; mode: string; env: string; ok: boolean; checks: { status: string }[] };
    expect(report).toMatchObject({ profile: 'default', mode: 'local', env: 'local', ok: true });
    expect(new Set(report.checks.map((c) => c.status))).toEqual(new Set(['ok']));
  });

  it('a fresh profile with no issuer: fails, saying how to register one', async () => {
    const r = await cli(join(root, 'fresh'))(['doctor']);
    expect(r.code).toBe(1);
    expect(failing(r)).toEqual(['fail  issuers: no issuer is registered; fix: fecr init --p12 FILE --pin-stdin writes issuer.json; then fecr emisor register issuer.json']);
    expect(r.stderr.trim()).toBe('error: 1 of 3 checks of profile "default" failed');
  });

  it('a certificate 10 days from expiry: a warning line naming the date and the fix, exit 0', async () => {
    const fecr = cli(join(root, 'expiring'));
    const notAfter = new Date(Date.now() + 10 * DAY + 12 * 3_600_000);
    await tourIssuer(fecr, createTestP12({ id: ID, type: '02', pin: '1234', notBefore: new Date(Date.now() - 300 * DAY), notAfter }));
    const r = await fecr(['doctor']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const warn = lines(r).filter((l) => l.startsWith('warn'));
    const until = notAfter.toISOString().slice(0, 10);
    expect(warn).toHaveLength(1);
    expect(warn[0]).toMatch(new RegExp(`^warn  certificate ${ID}: .*valid until ${until} \\(10 days left\\); fix: renew it before ${until}: .*fecr emisor update ISSUER\\.json --p12 FILE --pin-stdin\\)$`));
    expect(r.stderr.trim()).toBe('profile "default": every check holds (1 warning)');
  });
});

describe('fecr doctor on a sandbox profile (the emulator as the sandbox)', () => {
  const fecr = cli(join(root, 'sandbox'));
  // A llave criptográfica as the sandbox's CA issues it (CN=CA PERSONA JURIDICA - SANDBOX), not a fecr test one.
  const sandboxCa = createTestCa({ name: 'CA PERSONA JURIDICA - SANDBOX' });
  const p12 = createTestP12({ id: ID, type: '02', pin: '1234', issuer: sandboxCa });

  it('with fecr init\'s placeholder password: exit 1, one line naming it and the fix, no login tried', async () => {
    expect((await fecr(['config', 'set', 'env=sandbox', `haciendaUrl=${emu.url}`, '--profile', 'sandbox'])).code).toBe(0);
    await tourIssuer(fecr, p12, ['--profile', 'sandbox']);
    const grants = { ...emu.state.idp };
    const r = await fecr(['doctor', '--profile', 'sandbox']);
    expect(r.code, r.stdout).toBe(1);
    expect(failing(r)).toEqual([
      `fail  credentials ${ID}: claveHacienda is the placeholder fecr init wrote, not a password; fix: put the issuer's Hacienda user and password (ATV, sandbox) in usuarioHacienda and claveHacienda (base64) of ISSUER.json, then run fecr emisor update ISSUER.json`,
    ]);
    expect(r.stdout).toMatch(new RegExp(`^ok {4}ambiente ${ID}: ambiente 2 \\(sandbox\\), a llave criptográfica of sandbox$`, 'm'));
    expect(r.stdout).toMatch(/^ok {4}reception: http:\/\/127\.0\.0\.1:\d+\/recepcion-sandbox\/v1 answers \(HTTP 401 without a token\)$/m);
    expect(r.stdout).toMatch(new RegExp(`^ok {4}activity ${ID}: 6201\\.0 is one of ${ID}'s active activities at Hacienda \\(/fe/ae\\)$`, 'm'));
    expect(r.stderr.trim()).toBe('error: 1 of 7 checks of profile "sandbox" failed');
    expect(emu.state.idp.passwordGrants).toBe(grants.passwordGrants);
    expect(emu.state.idp.failedGrants).toBe(grants.failedGrants);
  });

  it('with the right password: every check holds (one IdP grant); with a wrong one: the IdP\'s refusal', async () => {
    const record = JSON.parse((await import('node:fs')).readFileSync(join(root, 'sandbox', 'work', 'issuer.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(root, 'sandbox', 'work', 'right.json'), JSON.stringify({ ...record, claveHacienda: b64(PASSWORD) }));
    expect((await fecr(['emisor', 'update', 'right.json', '--profile', 'sandbox'])).code).toBe(0);
    const before = emu.state.idp.passwordGrants;
    const ok = await fecr(['doctor', '--profile', 'sandbox']);
    expect(ok.code, ok.stdout).toBe(0);
    for (const l of lines(ok)) expect(l).toMatch(/^ok {4}/);
    expect(ok.stdout).toContain(`ok    credentials ${ID}: Hacienda's IdP granted a token to ${USER}`);
    expect(emu.state.idp.passwordGrants).toBe(before + 1);

    writeFileSync(join(root, 'sandbox', 'work', 'wrong.json'), JSON.stringify({ ...record, claveHacienda: b64('no-es-la-clave') }));
    expect((await fecr(['emisor', 'update', 'wrong.json', '--profile', 'sandbox'])).code).toBe(0);
    const bad = await fecr(['doctor', '--profile', 'sandbox']);
    expect(bad.code).toBe(1);
    expect(failing(bad)).toHaveLength(1);
    expect(failing(bad)[0]).toMatch(new RegExp(`^fail  credentials ${ID}: Hacienda's IdP refused the credentials of "${USER}".*; fix: put the issuer's Hacienda user and password`));
  });

  it('a fecr test .p12 on a sandbox profile is refused: Hacienda would refuse its signature', async () => {
    const other = cli(join(root, 'sandbox-test-p12'));
    expect((await other(['config', 'set', 'env=sandbox', `haciendaUrl=${emu.url}`, '--profile', 'sb'])).code).toBe(0);
    await tourIssuer(other, createTestP12({ id: ID, type: '02', pin: '1234' }), ['--profile', 'sb']);
    const r = await other(['doctor', '--profile', 'sb']);
    expect(r.code).toBe(1);
    expect(failing(r)[0]).toMatch(new RegExp(`^fail  ambiente ${ID}: the \\.p12 is a fecr test certificate \\(fecr certs create-test\\): Hacienda's sandbox refuses its signature; fix: put the llave criptográfica Hacienda issued for sandbox`));
  });
});

describe('fecr doctor on a local profile whose haciendaUrl is an emulator of its own (issue 36)', () => {
  const fecr = cli(join(root, 'local-external'));

  it('its reception and IdP answer; the issuer\'s credentials refused by a strict emulator are named; with its user, every check holds', async () => {
    expect((await fecr(['config', 'set', `haciendaUrl=${emu.url}`, '--profile', 'ext'])).code).toBe(0);
    await tourIssuer(fecr, createTestP12({ id: ID, type: '02', pin: '1234' }), ['--profile', 'ext']);
    const r = await fecr(['doctor', '--profile', 'ext']);
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/^ok {4}reception: http:\/\/127\.0\.0\.1:\d+\/recepcion\/v1 answers \(HTTP 401 without a token\)$/m);
    expect(r.stdout).toMatch(/^ok {4}idp: http:\/\/127\.0\.0\.1:\d+\/auth\/realms\/rut\/protocol\/openid-connect\/token answers \(HTTP \d+ without credentials\)$/m);
    expect(failing(r)).toHaveLength(1);
    expect(failing(r)[0]).toMatch(new RegExp(`^fail  credentials ${ID}: Hacienda's IdP refused the credentials of "`));
    const record = JSON.parse((await import('node:fs')).readFileSync(join(root, 'local-external', 'work', 'issuer.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(root, 'local-external', 'work', 'right.json'), JSON.stringify({ ...record, usuarioHacienda: USER, claveHacienda: b64(PASSWORD) }));
    expect((await fecr(['emisor', 'update', 'right.json', '--profile', 'ext'])).code).toBe(0);
    const ok = await fecr(['doctor', '--profile', 'ext']);
    expect(ok.code, ok.stdout).toBe(0);
    for (const l of lines(ok)) expect(l).toMatch(/^ok {4}/);
    expect(ok.stdout).toContain(`ok    credentials ${ID}: Hacienda's IdP granted a token to ${USER}`);
  });
});

describe('fecr doctor on a profile pointed at a host that cannot be reached', () => {
  const fecr = cli(join(root, 'offline'));
  const p12 = createTestP12({ id: ID, type: '02', pin: '1234', issuer: createTestCa({ name: 'CA PERSONA JURIDICA - SANDBOX' }) });

  beforeAll(async () => {
    expect((await fecr(['config', 'set', 'env=sandbox', `haciendaUrl=http://127.0.0.1:${closedPort}`, '--profile', 'offline'])).code).toBe(0);
    await tourIssuer(fecr, p12, ['--profile', 'offline']);
    const record = JSON.parse((await import('node:fs')).readFileSync(join(root, 'offline', 'work', 'issuer.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(root, 'offline', 'work', 'issuer.json'), JSON.stringify({ ...record, claveHacienda: b64(PASSWORD) }));
    expect((await fecr(['emisor', 'update', 'issuer.json', '--profile', 'offline'])).code).toBe(0);
  }, 30_000);

  it('a closed port: exit 1, one line naming the connection refused and the profile key to fix', async () => {
    const r = await fecr(['doctor', '--profile', 'offline']);
    expect(r.code, r.stdout).toBe(1);
    expect(failing(r)).toEqual([
      `fail  reception: http://127.0.0.1:${closedPort}/recepcion-sandbox/v1 cannot be reached: connection refused by 127.0.0.1:${closedPort} (nothing listens there); fix: the profile's haciendaUrl is http://127.0.0.1:${closedPort}: correct it (fecr config set haciendaUrl URL --profile offline) or unset it for Hacienda's own (fecr config unset haciendaUrl --profile offline)`,
    ]);
    expect(r.stdout).toContain(`skip  credentials ${ID}: not checked: Hacienda is not reachable`);
  });

  it('a name that does not resolve: one line saying DNS', async () => {
    expect((await fecr(['config', 'set', 'haciendaUrl=http://fecr-doctor.invalid', '--profile', 'offline'])).code).toBe(0);
    try {
      const r = await fecr(['doctor', '--profile', 'offline']);
      expect(r.code).toBe(1);
      expect(failing(r)).toHaveLength(1);
      expect(failing(r)[0]).toMatch(/^fail {2}reception: http:\/\/fecr-doctor\.invalid\/recepcion-sandbox\/v1 cannot be reached: DNS: (no such host fecr-doctor\.invalid|fecr-doctor\.invalid could not be resolved now)/);
    } finally {
      await fecr(['config', 'set', `haciendaUrl=http://127.0.0.1:${closedPort}`, '--profile', 'offline']);
    }
  });

  it('fecr send there says the same cause without --debug (no --wait: a warning; --wait: the error line, exit 8)', async () => {
    const cause = `Hacienda could not be reached: connection refused by 127.0.0.1:${closedPort} (nothing listens there)`;
    const plain = await fecr(['send', 'fe.json', '--profile', 'offline']);
    expect(plain.code, plain.stderr).toBe(0);
    const clave = plain.stdout.trim();
    expect(plain.stderr.trim().split('\n').at(-1)).toBe(`warning: ${clave} is not sent yet (${cause}); it is sent by the next fecr command that runs the worker (fecr doctor checks the profile)`);
    const waited = await fecr(['send', 'nc.json', '--profile', 'offline', '--wait', '--timeout', '5']);
    expect(waited.code).toBe(8);
    const waitedClave = lines(waited)[0]!;
    expect(waited.stderr.trim().split('\n').at(-1)).toBe(`error: ${waitedClave} is not sent yet (${cause}); it is sent by the next fecr command that runs the worker (fecr doctor checks the profile)`);
    const status = await fecr(['status', clave, '--profile', 'offline']);
    expect(status.code).toBe(8);
    expect(status.stderr).toContain(cause);
  }, 60_000);
});

describe('the cause of a failure to reach Hacienda, in words (hacienda/client/describe.ts)', () => {
  it('names DNS, TLS, refused connections and HTTP statuses', () => {
    const url = 'https://api.comprobanteselectronicos.go.cr/recepcion-sandbox/v1/recepcion';
    expect(describeNetworkCode('ENOTFOUND', 'https://api-sandbox.example.invalid/x')).toBe('DNS: no such host api-sandbox.example.invalid');
    expect(describeNetworkCode('SELF_SIGNED_CERT_IN_CHAIN', url)).toBe('TLS: certificate not trusted (api.comprobanteselectronicos.go.cr)');
    expect(describeNetworkCode('UNABLE_TO_VERIFY_LEAF_SIGNATURE', url)).toBe('TLS: certificate not trusted (api.comprobanteselectronicos.go.cr)');
    expect(describeNetworkCode('CERT_HAS_EXPIRED', url)).toBe("TLS: the server's certificate has expired (api.comprobanteselectronicos.go.cr)");
    expect(describeNetworkCode('ECONNREFUSED', 'http://127.0.0.1:9/x')).toBe('connection refused by 127.0.0.1:9 (nothing listens there)');
    // Through the client's errors: the transport failure kept as the cause, or an HTTP status after the retries.
    const net = new NetworkError('POST', url, Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    expect(describeFailure(new ServiceUnavailableError(url, 'ENOTFOUND after 3 attempts', { cause: net }))).toBe('DNS: no such host api.comprobanteselectronicos.go.cr');
    expect(describeFailure(new ServiceUnavailableError(url, 'HTTP 503 after 3 attempts', { status: 503 }))).toBe('HTTP 503 Service Unavailable from api.comprobanteselectronicos.go.cr');
  });

  it('probe: a real server answering 503, and a closed port', async () => {
    const s = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    try {
      expect(await probe(`http://127.0.0.1:${port}/recepcion/v1/comprobantes`)).toEqual({ ok: false, status: 503, cause: `HTTP 503 Service Unavailable from 127.0.0.1:${port}` });
    } finally {
      await new Promise<void>((r) => s.close(() => r()));
    }
    expect(await probe(`http://127.0.0.1:${closedPort}/`)).toEqual({ ok: false, cause: `connection refused by 127.0.0.1:${closedPort} (nothing listens there)` });
  });

  it("a certificate's environment by its CA: fecr's test root, a sandbox CA, a production one", () => {
    const cert = (p12: Buffer) => describeP12(p12, '1234', new Date()).certificate;
    expect(certificateEnvironment(cert(createTestP12({ id: ID, type: '02', pin: '1234' })))).toBe('fecr-test');
    expect(certificateEnvironment(cert(createTestP12({ id: ID, type: '02', pin: '1234', issuer: createTestCa({ name: 'CA PERSONA FISICA - SANDBOX' }) })))).toBe('sandbox');
    expect(certificateEnvironment({ issuer: 'CN=CA PERSONA JURIDICA, OU=DGT, O=MINISTERIO DE HACIENDA, C=CR' })).toBe('production');
    expect(certificateEnvironment({ issuer: 'CN=CA PERSONA JURIDICA - SANDBOX, OU=DGT, O=MINISTERIO DE HACIENDA - SANDBOX, C=CR' })).toBe('sandbox');
    expect(certificateEnvironment({ issuer: 'CN=CA SINPE - PERSONA FISICA v2, OU=DIVISION SISTEMAS DE PAGO, O=BANCO CENTRAL DE COSTA RICA, C=CR' })).toBe('unknown');
  });
});
