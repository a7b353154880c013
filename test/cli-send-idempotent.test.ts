// Issue 36, item 1 (and item 8's numeroReferencia): `fecr send venta.json` of a body without numeroReferencia, sent
// again, answers the document it made ("already sent as CLAVE", exit as its state) instead of issuing a second legal
// invoice; `--new` issues another on purpose. As a user runs it: `node bin/fecr.js` (the built bundle) with its own HOME,
// in a local profile (the embedded service and emulator) and in a remote profile logged in to a real `fecr serve`.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import { validInvoice } from './helpers/bodies.js';
import { runCli, tempDir } from './helpers/cli.js';
import { runBin } from './helpers/bin.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

const PASSWORD = 'clave-de-la-cuenta-2026';
const root = tempDir('fecr-send-once-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `node bin/fecr.js …` as a child process: its own HOME, none of the developer's FECR_/XDG_ variables. */
const fecrBin = (args: string[], env: Record<string, string>, cwd: string) => runBin(args, { cwd, env });

/** An invoice as `fecr init` writes it, dated now, with numeroReferencia left out (fecr takes the next free number). */
function venta(detalle: string): Record<string, unknown> {
  const { numeroReferencia: _n, ...body } = validInvoice();
  (body.detalleServicio as { detalle: string }[])[0]!.detalle = detalle;
  return { ...body, fechaEmision: formatCr(new Date()) };
}

describe.each(['local', 'remote'] as const)('fecr send of an unnumbered body, %s profile (node bin/fecr.js)', (mode) => {
  const dir = join(root, mode);
  const work = join(dir, 'work');
  const env: Record<string, string> = mode === 'local' ? { HOME: join(dir, 'home'), FECR_NO_KEYCHAIN: '1' } : { HOME: join(dir, 'home'), FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
  const fecr = (args: string[], stdin?: string) => runCli(args, { env, cwd: work, ...(stdin !== undefined ? { stdin } : {}) });
  const send = (args: string[]) => fecrBin(['send', ...args], env, work);
  let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;
  const claves = async () => {
    const r = await fecrBin(['documents', 'list', '--json'], env, work);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { clave: string }[]).map((d) => d.clave);
  };

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
    if (mode === 'remote') {
      const serverEnv = { HOME: join(dir, 'server-home'), FECR_DATA_DIR: join(dir, 'server-data'), FECR_NO_KEYCHAIN: '1' };
      const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: `${PASSWORD}\n` });
      expect(acct.code, acct.stderr).toBe(0);
      serve = await spawnFecr(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--emulator-delay', '20'], { env: serverEnv });
      const set = await fecr(['config', 'set', `authUrl=${serve.ready.authUrl}`, `baseUrl=${serve.ready.baseUrl}`, 'base=acme']);
      expect(set.code, set.stderr).toBe(0);
      const login = await fecr(['login', '--password-stdin'], `${PASSWORD}\n`);
      expect(login.code, login.stderr).toBe(0);
    }
    const reg = await fecr(['emisor', 'register', 'issuer.json']);
    expect(reg.code, reg.stderr).toBe(0);
  }, 90_000);

  afterAll(async () => {
    await serve?.stop();
  });

  it('three times → one document ("already sent as CLAVE", exit 0); --new → a second one', async () => {
    writeFileSync(join(work, 'venta.json'), JSON.stringify(venta('Consultoría de marzo')));
    const first = await send(['venta.json']);
    expect(first.code, first.stderr).toBe(0);
    const clave = first.stdout.trim();
    expect(clave).toMatch(/^\d{50}$/);
    expect(first.stderr).toContain(`numeroReferencia ${Number(clave.slice(31, 41))} (the next free number)`);
    for (let i = 0; i < 2; i++) {
      const again = await send(['venta.json']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe(clave);
      expect(again.stderr).toContain(`already sent as ${clave}`);
    }
    expect(await claves()).toEqual([clave]);

    const another = await send(['venta.json', '--new']);
    expect(another.code, another.stderr).toBe(0);
    const second = another.stdout.trim();
    expect(second).toMatch(/^\d{50}$/);
    expect(second).not.toBe(clave);
    expect(another.stderr).not.toContain('already sent');
    expect(Number(second.slice(31, 41))).toBe(Number(clave.slice(31, 41)) + 1);
    expect((await claves()).sort()).toEqual([clave, second].sort());
  }, 120_000);

  it('send --wait --json carries numeroReferencia, as send --json does; sent again, alreadySent too, and the verdict\'s exit', async () => {
    writeFileSync(join(work, 'otra.json'), JSON.stringify(venta('Soporte de abril')));
    const first = await send(['otra.json', '--wait', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout) as { clave: string; estado: string; numeroReferencia: number; alreadySent?: boolean };
    expect(out).toMatchObject({ estado: 'aceptado', numeroReferencia: Number(out.clave.slice(31, 41)) });
    expect(out.alreadySent).toBeUndefined();
    const again = await send(['otra.json', '--wait', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ clave: out.clave, estado: 'aceptado', numeroReferencia: out.numeroReferencia, alreadySent: true });
    const plain = await send(['otra.json', '--json']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).toEqual({ clave: out.clave, numeroReferencia: out.numeroReferencia, alreadySent: true });
    // A numbered body's --json names its number too.
    writeFileSync(join(work, 'numerada.json'), JSON.stringify({ ...venta('Numerada'), numeroReferencia: 900 }));
    const numbered = await send(['numerada.json', '--json']);
    expect(numbered.code, numbered.stderr).toBe(0);
    expect(JSON.parse(numbered.stdout)).toMatchObject({ numeroReferencia: 900 });
  }, 120_000);

  it.runIf(mode === 'local')('sent again after Hacienda rejected it: the same document, its rejection said, exit 3 (with --wait or without)', async () => {
    // The embedded emulator rejects a line whose Detalle says RECHAZAR (docs/faults.md).
    writeFileSync(join(work, 'faults.json'), JSON.stringify({ reject: [{ detalleContains: 'RECHAZAR', codigo: '-54' }] }));
    const set = await fecr(['config', 'set', 'emulatorFaults=faults.json']);
    expect(set.code, set.stderr).toBe(0);
    writeFileSync(join(work, 'rechazar.json'), JSON.stringify(venta('RECHAZAR por favor')));
    const first = await send(['rechazar.json', '--wait']);
    expect(first.code, first.stderr).toBe(3);
    const clave = first.stdout.split('\n')[0]!;
    const again = await send(['rechazar.json']);
    expect(again.code, again.stderr).toBe(3);
    expect(again.stdout.trim()).toBe(clave);
    expect(again.stderr).toContain(`already sent as ${clave}`);
    expect(again.stderr).toContain(`error: Hacienda rejected ${clave}`);
    const json = await send(['rechazar.json', '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toEqual({ clave, estado: 'rechazado', numeroReferencia: Number(clave.slice(31, 41)), alreadySent: true });
    const waited = await send(['rechazar.json', '--wait']);
    expect(waited.code).toBe(3);
    expect(waited.stderr).toContain(`already sent as ${clave}`);
    expect((await claves()).filter((c) => c === clave)).toHaveLength(1);
  }, 120_000);
});
