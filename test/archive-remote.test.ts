// Issue 29: `fecr archive export` on a remote profile streams the period's archive from the hosted service
// (POST /api/archivo/exportar, a real HTTP server on 127.0.0.1) — the same files as the service's own export, and
// `fecr archive verify` exits 0 on it; a request the service refuses (an issuer of no account's) is one error line and
// leaves no partial file; the route is in /openapi.json as application/gzip and needs a bearer token.
import { createReadStream, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { exportArchive, type ManifestLine } from '../src/service/archive.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { FAST_WORKER, withTimeout } from './helpers/worker-docs.js';

const AUTH_URL = 'http://auth.fecr.test';
const root = tempDir('fecr-archive-remote-');
const work = join(root, 'work');
const env: Record<string, string> = { HOME: root, FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
const fecr = (args: string[]) => runCli(args, { env, cwd: work });
const today = formatCr(new Date()).slice(0, 10);
const period = ['--since', `${today.slice(0, 7)}-01`, '--until', today];

let emu: RunningEmulator;
let service: TestContext;
let app: ReturnType<typeof buildApiApp>;
let accountId: number;
let baseUrl: string;

async function manifestOf(file: string): Promise<ManifestLine[]> {
  let text = '';
  const extract = tar.extract();
  extract.on('entry', (h, s, next) => {
    s.on('data', (c: Buffer) => (h.name === 'manifest.jsonl' ? (text += c.toString('utf8')) : undefined));
    s.on('end', () => next());
  });
  await pipeline(createReadStream(file), createGunzip(), extract);
  return text.trim().split('\n').map((l) => JSON.parse(l) as ManifestLine);
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  emu = await startEmulator({ processingDelayMs: 5 });
  service = await makeServiceContext({ haciendaUrl: emu.url });
  await ensureSigningKey(service.ctx);
  accountId = (await createAccount(service.ctx, { base: 'acme', password: 'contrasena-acme-123' })).account.id;
  await registerIssuer(service.ctx, accountId, makeTestIssuer().issuer);
  for (const [name, n] of [['01-fe-servicios-13', 1], ['03-fe-tarifas-reducidas', 2]] as const) {
    const b = fixtureBody(name);
    b['numeroReferencia'] = n;
    b['fechaEmision'] = formatCr(new Date(Date.now() - 60_000));
    await submitDocument(service.ctx, accountId, b);
  }
  const worker = startWorker(service.ctx, FAST_WORKER);
  try {
    await withTimeout(
      (async () => {
        for (;;) {
          const docs = await service.ctx.store.db.selectFrom('documents').select('state').where('account_id', '=', accountId).execute();
          if (docs.length === 2 && docs.every((d) => d.state === 'aceptado')) return;
          await new Promise((r) => setTimeout(r, 50));
        }
      })(),
      25_000,
      'both accepted',
    );
  } finally {
    await worker.stop();
  }
  const token = (await issueToken(service.ctx, { base: 'acme' }, { issuer: AUTH_URL })).token;
  app = buildApiApp(service.ctx, { authenticate: createTokenVerifier(service.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  for (const [k, v] of [['mode', 'remote'], ['authUrl', AUTH_URL], ['baseUrl', baseUrl], ['base', 'acme']] as const) {
    const r = await fecr(['config', 'set', k, v]);
    expect(r.code, r.stderr).toBe(0);
  }
  env.FECR_TOKEN = token;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await service?.close();
  await emu?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('fecr archive export on a remote profile', () => {
  it("streams the hosted service's archive: the same files as its own export; verify exits 0", async () => {
    const out = join(root, 'remote.tar.gz');
    const r = await fecr(['archive', 'export', ...period, '--no-pdf', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^archived 2 sales and 0 received documents: 4 files, \d+ bytes in /);
    const verify = await fecr(['archive', 'verify', out]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    // The service's own export of the same period, for comparison: the same files, byte for byte (sha256).
    const local = join(root, 'local.tar.gz');
    const sink = (await import('node:fs')).createWriteStream(local);
    await exportArchive(service.ctx, accountId, sink, { since: `${today.slice(0, 7)}-01`, until: today, pdf: false });
    const strip = (m: ManifestLine[]) => m.map((x) => `${x.file} ${x.sha256} ${x.size}`).sort();
    expect(strip(await manifestOf(out))).toEqual(strip(await manifestOf(local)));
  }, 60_000);

  it('with PDFs: rendered by the service for each sale; verify exits 0', async () => {
    const out = join(root, 'pdf.tar.gz');
    const r = await fecr(['archive', 'export', ...period, out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ documents: { ventas: 2, compras: 0 }, files: 6 });
    const m = await manifestOf(out);
    expect(m.filter((x) => x.role === 'pdf')).toHaveLength(2);
    expect((await fecr(['archive', 'verify', out])).code).toBe(0);
  }, 60_000);

  it('a refusal is one error line naming the field, and no partial file is left', async () => {
    const out = join(root, 'refused.tar.gz');
    const r = await fecr(['archive', 'export', ...period, '--issuer', '3101999999', out]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^error: /);
    expect(r.stderr).toContain('emisor');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(root).filter((f) => f.endsWith('.partial'))).toEqual([]);
  });

  it('the route: a bearer token is needed; bad dates are a 400 naming the field; in /openapi.json as application/gzip', async () => {
    const post = (payload: unknown, auth?: string) => fetch(`${baseUrl}/api/archivo/exportar`, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) }, body: JSON.stringify(payload) });
    expect((await post({ desde: today, hasta: today })).status).toBe(401);
    const bad = await post({ desde: '2026-02-30', hasta: today }, `Bearer ${env.FECR_TOKEN}`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('desde');
    const spec = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as { paths: Record<string, { post: { responses: Record<string, { content: Record<string, unknown> }> } }> };
    expect(Object.keys(spec.paths['/api/archivo/exportar']!.post.responses['200']!.content)).toEqual(['application/gzip']);
  });
});

