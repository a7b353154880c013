// Issue 25, point 7, as the CLI user sees it: a local profile (the service in-process on a temp data dir) pointed at
// an emulator in strict mode (`--users`: only known users with their passwords), one issuer registered with a wrong
// claveHacienda and another with its right one. `fecr send --wait`, `fecr send`, `fecr batch --wait` and `fecr status`
// each print one line naming the issuer and the fix (exit 4); every command is a new worker, yet the emulator sees ONE
// failed login in all; the other issuer's documents are accepted. `fecr emisor update` with the right password sends
// the held documents, each POSTed once, and they reach aceptado.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendFactory } from '../src/cli/context.js';
import { openLocalBackend } from '../src/client/local-backend.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { resolveEndpoints } from '../src/hacienda/client/index.js';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const RIGHT = 'secreto';
const OTHER_ID = '3101654321';
const OTHER_USER = 'cpj-3-101-654321@stag.comprobanteselectronicos.go.cr';
const OTHER_PASSWORD = 'otra-clave';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

const root = tempDir('fecr-cred-cli-');
const work = join(root, 'work');
const env = { HOME: root, FECR_DATA_DIR: join(root, 'data'), FECR_NO_KEYCHAIN: '1' };
let emu: RunningEmulator;
let backend: BackendFactory;
let seq = 100;

const fecr = (args: string[], opts: { stdin?: string } = {}): Promise<CliRun> => runCli(args, { env, cwd: work, backend, ...opts });

function body(emisor: string): Record<string, unknown> {
  const b = validInvoice();
  b['emisor'] = emisor;
  b['numeroReferencia'] = ++seq;
  return b;
}

function write(name: string, content: unknown): string {
  const file = join(work, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The line every verb prints for a held document or batch: the issuer, and the fix. */
const HELD_LINE = new RegExp(`^error: Hacienda refused the usuarioHacienda/claveHacienda of issuer ${ISSUER.identificacion}: .*fix them with: fecr emisor update`, 'm');

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  emu = await startEmulator({ processingDelayMs: 30, users: { [ISSUER.usuarioHacienda]: RIGHT, [OTHER_USER]: OTHER_PASSWORD } });
  // The profile's service talks to this emulator as to the sandbox (only the base URL changed).
  const endpoints = resolveEndpoints('sandbox', { baseUrl: emu.url });
  backend = (ctx, opts) => openLocalBackend(ctx, { dataDir: env.FECR_DATA_DIR, env: 'sandbox', endpoints }, opts);
  const test = makeTestIssuer();
  write('issuer-wrong.json', { ...test.issuer, claveHacienda: b64('clave-equivocada') });
  write('issuer-right.json', { ...test.issuer, claveHacienda: b64(RIGHT) });
  const p12 = createTestP12({ id: OTHER_ID, type: '02', pin: '4321', name: 'OTRA EMPRESA SOCIEDAD ANONIMA' });
  loadP12(p12, '4321', new Date());
  write('other.json', {
    ...ISSUER,
    identificacion: OTHER_ID,
    nombre: 'OTRA EMPRESA SOCIEDAD ANONIMA',
    nombreComercial: 'Otra Empresa',
    usuarioHacienda: OTHER_USER,
    claveHacienda: b64(OTHER_PASSWORD),
    pinCertificado: '4321',
    certificadoHacienda: p12.toString('base64'),
  });
}, 60_000);

afterAll(async () => {
  await emu?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a wrong Hacienda password, through the CLI (local profile, strict emulator)', () => {
  const heldClaves: string[] = [];

  it('registers both issuers (the first with a wrong claveHacienda: not checked at registration)', async () => {
    for (const f of ['issuer-wrong.json', 'other.json']) {
      const r = await fecr(['emisor', 'register', f]);
      expect(r.code, r.stderr).toBe(0);
    }
  });

  it('fecr send --wait: the document is held at once, one line names the issuer and the fix, exit 4', async () => {
    const r = await fecr(['send', write('fe1.json', body(ISSUER.identificacion)), '--wait', '--timeout', '20']);
    expect(r.code, r.stderr).toBe(4);
    const [clave, estado, ...detalle] = r.stdout.trim().split('\n');
    expect(estado).toBe('credenciales_invalidas');
    expect(detalle.join('\n')).toContain(`Hacienda rechazó las credenciales del emisor ${ISSUER.identificacion}`);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(HELD_LINE);
    expect(r.stderr).toContain(`${clave} is held, not sent`);
    heldClaves.push(clave!);
    expect(emu.state.idp.failedGrants).toBe(1);
  });

  it('fecr send (no --wait): the clave, then the same line, exit 4; no IdP request', async () => {
    const r = await fecr(['send', write('fe2.json', body(ISSUER.identificacion))]);
    expect(r.code, r.stderr).toBe(4);
    heldClaves.push(r.stdout.trim());
    expect(r.stderr).toMatch(HELD_LINE);
    expect(emu.state.idp.failedGrants).toBe(1);
  });

  it('fecr batch --wait: the other issuer accepted, one line for the held issuer with its count, exit 4; no IdP request', async () => {
    const lines = [body(ISSUER.identificacion), body(OTHER_ID), body(ISSUER.identificacion), body(ISSUER.identificacion)];
    const file = write('lote.jsonl', lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = await fecr(['batch', file, '--wait', '--timeout', '30', '--json']);
    expect(r.code, r.stderr).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 4, sent: 4, aceptado: 1, pending: 3, invalid: 0, errors: 0 });
    expect(r.stderr).toMatch(HELD_LINE);
    expect(r.stderr).toContain('3 documents are held, not sent');
    const results = (await import('node:fs')).readFileSync(`${file}.results.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const x of results) {
      if (String(x.clave).slice(9, 21) === ISSUER.identificacion.padStart(12, '0')) {
        expect(x.estado).toBe('credenciales_invalidas');
        heldClaves.push(x.clave);
      } else expect(x.estado).toBe('aceptado');
    }
    expect(heldClaves).toHaveLength(5);
    expect(emu.state.idp.failedGrants).toBe(1);
  });

  it('fecr status CLAVE: credenciales_invalidas, the line, exit 4, at once; no IdP request', async () => {
    const started = Date.now();
    const r = await fecr(['status', heldClaves[0]!]);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toContain('credenciales_invalidas');
    expect(r.stderr).toMatch(HELD_LINE);
    expect(Date.now() - started).toBeLessThan(2_500);
    const list = await fecr(['documents', 'list', '--state', 'credenciales_invalidas', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { clave: string }[]).map((d) => d.clave).sort()).toEqual([...heldClaves].sort());
    // Every command above ran its own worker: one failed login in all, and nothing of this issuer was received.
    expect(emu.state.idp.failedGrants).toBe(1);
    expect(emu.state.receptions().filter((x) => heldClaves.includes(x.clave))).toHaveLength(0);
  });

  it('fecr emisor update with the right password sends the held documents; each POSTed once, all aceptado', async () => {
    const r = await fecr(['emisor', 'update', 'issuer-right.json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`updated issuer ${ISSUER.identificacion}`);
    expect(r.stderr).toContain('5 documents held for the refused credentials sent to Hacienda');
    for (const clave of heldClaves) {
      const s = await fecr(['status', clave, '--watch', '--timeout', '20']);
      expect(s.code, s.stderr).toBe(0);
      expect(s.stdout).toContain('aceptado');
    }
    const recs = emu.state.receptions().filter((x) => heldClaves.includes(x.clave));
    expect(recs).toHaveLength(5);
    for (const x of recs) expect(x).toMatchObject({ acceptedPosts: 1, duplicatePosts: 0, estado: 'aceptado' });
    expect(emu.state.idp.failedGrants).toBe(1);
  });
});
