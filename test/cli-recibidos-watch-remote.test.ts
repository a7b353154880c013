// Issue 30, the suppliers' mailbox with a remote profile: the CLI reads the Maildir and a real `fecr serve` child
// (pointed at an emulator of this test) imports and answers through the client API (/api/recibidos,
// /api/recibidos/decidir), the same checks and the same one row per clave as in local mode.
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { supplierMail, tampered } from './helpers/supplier-mail.js';

const root = tempDir('fecr-watch-remote-');
const test = makeTestIssuer();
const PASSWORD = 'clave-de-la-cuenta-2026';
const BUYER = { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre };
const CAFETAL = '3101987654';
const MARIA = '114560789';
const work = join(root, 'work');
const maildir = join(root, 'Maildir');
const env = { HOME: join(root, 'home'), FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
const fecr = (args: string[], opts: { stdin?: string } = {}) => runCli(args, { env, cwd: work, ...opts });
let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;
let emu: RunningEmulator | undefined;
const docs: { clave: string; proveedor: string; xml: Buffer }[] = [];

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  for (const d of ['tmp', 'new', 'cur']) mkdirSync(join(maildir, d), { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  writeFileSync(join(work, 'rules.json'), JSON.stringify({ suppliers: { [CAFETAL]: 'accept' } }));
  emu = await startEmulator({ processingDelayMs: 10 });
  for (const proveedor of [CAFETAL, MARIA]) {
    const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receptor: BUYER, proveedor, cantidad: 2, esperarMs: 30_000 }) });
    const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string }[] };
    for (const d of documentos) docs.push({ clave: d.clave, proveedor, xml: Buffer.from(d.xml, 'base64') });
  }
  const serverEnv = { HOME: join(root, 'server-home'), FECR_DATA_DIR: join(root, 'server-data'), FECR_NO_KEYCHAIN: '1' };
  const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: `${PASSWORD}\n` });
  expect(acct.code, acct.stderr).toBe(0);
  serve = await spawnFecr(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--hacienda-url', emu.url], { env: serverEnv });
  expect((await fecr(['config', 'set', 'authUrl', serve.ready.authUrl])).code).toBe(0);
  expect((await fecr(['config', 'set', 'baseUrl', serve.ready.baseUrl])).code).toBe(0);
  const login = await fecr(['login', '--base', 'acme', '--password-stdin'], { stdin: `${PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  await serve?.stop();
  await emu?.close();
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
async function deliver(raw: Buffer): Promise<string> {
  const name = `${1_700_000_000 + n++}.R${n}.test`;
  writeFileSync(join(maildir, 'tmp', name), raw);
  renameSync(join(maildir, 'tmp', name), join(maildir, 'new', name));
  return name;
}

describe('fecr recibidos watch with a remote profile', () => {
  it('imports through the service, answers by the rules, sets aside the tampered mail', async () => {
    const [c1, c2, m1] = [docs[0]!, docs[1]!, docs[2]!];
    for (const d of [c1, m1, c1]) await deliver(await supplierMail({ from: 'facturas@proveedor.example', subject: 'Factura', attachments: [{ filename: `${d.clave}.xml`, content: d.xml }] }));
    const bad = await deliver(await supplierMail({ from: 'falso@proveedor.example', subject: 'Factura', attachments: [{ filename: 'alterada.xml', content: tampered(c2.xml) }] }));
    const r = await fecr(['recibidos', 'watch', '--maildir', maildir, '--rules', 'rules.json', '--once']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${c1.clave} imported from ${CAFETAL}, accepted by the rules`);
    expect(r.stdout).toContain(`${m1.clave} imported from ${MARIA}, held`);
    expect(r.stdout).toContain(`${c1.clave} already imported from ${CAFETAL}, already answered`);
    expect(r.stdout).toMatch(new RegExp(`mail new/${bad}: set aside: alterada\\.xml: ds:Signature`));
    expect(readdirSync(join(maildir, 'new'))).toEqual([]);
    expect(readdirSync(join(maildir, '.fecr-imported', 'cur'))).toHaveLength(3);
    const show = JSON.parse((await fecr(['recibidos', 'show', c1.clave, '--json'])).stdout) as { estado: string; decision: { condicionImpuesto: string } | null };
    expect(show).toMatchObject({ estado: 'aceptado', decision: { condicionImpuesto: '01' } });
    const held = JSON.parse((await fecr(['recibidos', 'show', m1.clave, '--json'])).stdout) as { estado: string };
    expect(held.estado).toBe('pendiente');
  }, 120_000);
});
