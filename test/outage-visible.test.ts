// Issue 36, items 3 and 4: an outage is always visible, and `fecr doctor` tells the truth. A local profile whose
// Hacienda (`haciendaUrl`, env local) is a port where nothing listens, the `contingencia` setting left off (the
// default): `fecr send` leaves the FE pending in situación 1; `fecr contingency status` lists it with its age (on main
// it said "nothing owed"); `fecr doctor` exits 1 naming the dead URL and the connection refused, and says a document
// is owed (on main: "every check holds", exit 0); `fecr status CLAVE` says it is owed and how to send it. A real
// `fecr hacienda serve` then starts on that port: doctor's checks hold; `fecr contingency send` takes the FE to
// aceptado (on main: "0 sent"), POSTed once (the emulator's own count of receptions); nothing is owed after. Every
// verb is the built bundle (`node bin/fecr.js`, dist/ built by vitest's globalSetup) as a child with its own HOME.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWED_LINE } from '../src/commands/status/run.js';
import { NOTHING_OWED } from '../src/commands/contingency/status.js';
import { ageText } from '../src/core/contingency.js';
import { validInvoice } from './helpers/bodies.js';
import { tempDir } from './helpers/cli.js';
import { getJson } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { freePort, runBin, type BinRun } from './helpers/bin.js';

const home = tempDir('fecr-outage-');

/** `node bin/fecr.js ARGS` in its own HOME. */
const fecr = (args: string[]) => runBin(args, { cwd: home, env: { HOME: home, FECR_NO_KEYCHAIN: '1' } });

const lines = (r: BinRun) => r.stdout.trim().split('\n');

let port: number;
let url: string;
let served: Spawned<{ url: string }> | undefined;

beforeAll(async () => {
  port = await freePort();
  url = `http://127.0.0.1:${port}`;
  writeFileSync(join(home, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  writeFileSync(join(home, 'off.json'), JSON.stringify({ ...validInvoice(), numeroReferencia: 1 }));
  const set = await fecr(['config', 'set', `haciendaUrl=${url}`]);
  expect(set.code, set.stderr).toBe(0);
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await served?.stop();
});

describe('a dead haciendaUrl with the contingencia setting off (the default), then Hacienda back', () => {
  let clave = '';

  it('send leaves the FE pending in situación 1; contingency status lists it with its age', async () => {
    const sent = await fecr(['send', 'off.json']);
    expect(sent.code, sent.stderr).toBe(0);
    clave = sent.stdout.trim();
    expect(clave).toMatch(/^\d{50}$/);
    // The setting is off: situación 1 (the clave's 42nd character, ANEXOS p.67), not 3.
    expect(clave.charAt(41)).toBe('1');
    expect(sent.stderr).toContain(`connection refused by 127.0.0.1:${port}`);

    const owed = await fecr(['contingency', 'status', '--json']);
    expect(owed.code, owed.stderr).toBe(0);
    const j = JSON.parse(owed.stdout) as { documentos: { clave: string; situacion: string; estado: string }[]; urgencias: { ref: string; edadHoras: number }[] };
    expect(j.documentos.map((d) => [d.clave, d.situacion, d.estado])).toEqual([[clave, '1', 'pendiente']]);
    expect(j.urgencias).toEqual([expect.objectContaining({ ref: clave, edadHoras: expect.any(Number) as number })]);

    const table = await fecr(['contingency', 'status']);
    expect(table.code, table.stderr).toBe(0);
    expect(lines(table)[0]!.split('\t')).toEqual(['tipo', 'ref', 'kind', 'estado', 'desde', 'age', 'horasRestantes', 'total']);
    const row = lines(table)[1]!.split('\t');
    expect(row.slice(0, 4)).toEqual(['documento', clave, 'FE (situación 1 normal)', 'pendiente (not received)']);
    expect(row[5]).toMatch(/^\d+ min$/);
  }, 60_000);

  it('doctor exits 1 naming the dead URL and the connection refused, and says a document is owed; status says how to send it', async () => {
    const r = await fecr(['doctor']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(lines(r)[0]).toContain(`Hacienda at ${url}`);
    const failing = lines(r).filter((l) => l.startsWith('fail'));
    const refused = `connection refused by 127.0.0.1:${port} (nothing listens there)`;
    expect(failing).toHaveLength(2);
    expect(failing[0]).toMatch(new RegExp(`^fail {2}reception: ${url}/recepcion/v1 cannot be reached: ${refused.replace(/[()]/g, '\\$&')}; fix: the profile's haciendaUrl is ${url}: correct it`));
    expect(failing[1]).toMatch(new RegExp(`^fail {2}idp: ${url}/auth/realms/rut/protocol/openid-connect/token cannot be reached: ${refused.replace(/[()]/g, '\\$&')}`));
    expect(r.stdout).toMatch(/^warn {2}owed: 1 document not received by Hacienda yet; the oldest since \S+ \(\d+ min ago\); fix: fecr contingency send sends the documents once Hacienda answers; fecr contingency status lists them$/m);
    expect(r.stdout).toContain('skip  credentials 3101123456: not checked: Hacienda is not reachable');
    expect(r.stderr.trim().split('\n').at(-1)).toBe('error: 2 of 7 checks of profile "default" failed');

    // Still down: contingency send says so at once (one look at Hacienda, 5 s at most), sends nothing, exit 8; on main
    // it followed the document until --timeout.
    const started = Date.now();
    const early = await fecr(['contingency', 'send', '--timeout', '120']);
    expect(early.code, early.stderr).toBe(8);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(early.stderr.trim().split('\n').at(-1)).toBe(
      `error: Hacienda still cannot be reached (${refused}): 1 document stays owed, none sent; run fecr contingency send again once it answers (fecr doctor checks it)`,
    );

    const status = await fecr(['status', clave]);
    expect(status.code).toBe(8);
    expect(status.stderr.trim().split('\n').slice(-2)).toEqual([`error: ${clave} is not sent yet (Hacienda could not be reached: ${refused}); it is sent by the next fecr command that runs the worker (fecr doctor checks the profile)`, OWED_LINE]);
  }, 60_000);

  it('Hacienda back: doctor holds; contingency send takes the FE to aceptado, POSTed once; nothing owed after', async () => {
    served = await spawnFecr<{ url: string }>(['hacienda', 'serve', '--port', String(port), '--delay', '50'], { env: { HOME: join(home, 'serve-home') } });
    expect(served.ready.url).toBe(url);

    const up = await fecr(['doctor']);
    expect(up.code, up.stdout + up.stderr).toBe(0);
    expect(up.stdout).toMatch(new RegExp(`^ok {4}reception: ${url}/recepcion/v1 answers \\(HTTP \\d+ without a token\\)$`, 'm'));
    expect(up.stdout).toMatch(new RegExp(`^ok {4}idp: ${url}/auth/realms/rut/protocol/openid-connect/token answers \\(HTTP \\d+ without credentials\\)$`, 'm'));
    expect(up.stdout).toMatch(/^ok {4}credentials 3101123456: Hacienda's IdP granted a token to /m);
    // Still owed (doctor sends nothing): a warning, not a failure.
    expect(lines(up).filter((l) => !l.startsWith('ok'))).toEqual([expect.stringMatching(/^warn {2}owed: 1 document not received by Hacienda yet/)]);
    expect(up.stderr.trim().split('\n').at(-1)).toBe('profile "default": every check holds (1 warning)');
    const before = ((await getJson(`${url}/_emulator/receptions`)).body as { receptions: unknown[] }).receptions;
    expect(before).toEqual([]);

    const sent = await fecr(['contingency', 'send', '--timeout', '60', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toEqual([{ clave, estado: 'aceptado' }]);
    expect(sent.stderr).toContain('1 sent or followed: 1 aceptado, 0 rechazado, 0 error, 0 not decided yet');
    const recs = ((await getJson(`${url}/_emulator/receptions`)).body as { receptions: { clave: string; acceptedPosts: number; duplicatePosts: number }[] }).receptions;
    expect(recs.map((x) => [x.clave, x.acceptedPosts, x.duplicatePosts])).toEqual([[clave, 1, 0]]);

    const status = await fecr(['status', clave]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`${clave}\taceptado`);
    expect(status.stderr).not.toContain('owed');
    const none = await fecr(['contingency', 'status']);
    expect(none.stdout.trim()).toBe(NOTHING_OWED);
    const clean = await fecr(['doctor']);
    expect(clean.code).toBe(0);
    for (const l of lines(clean)) expect(l).toMatch(/^ok {4}/);
    // Nothing more was POSTed by the verbs after the send.
    const after = ((await getJson(`${url}/_emulator/receptions`)).body as { receptions: { acceptedPosts: number; duplicatePosts: number }[] }).receptions;
    expect(after.map((x) => [x.acceptedPosts, x.duplicatePosts])).toEqual([[1, 0]]);
  }, 120_000);
});

describe('ageText', () => {
  it('minutes, hours and minutes, days and hours', () => {
    expect(ageText(-5_000)).toBe('0 min');
    expect(ageText(4 * 60_000 + 59_000)).toBe('4 min');
    expect(ageText(3 * 3_600_000)).toBe('3 h');
    expect(ageText(3 * 3_600_000 + 20 * 60_000)).toBe('3 h 20 min');
    expect(ageText(2 * 86_400_000 + 5 * 3_600_000)).toBe('2 d 5 h');
  });
});
