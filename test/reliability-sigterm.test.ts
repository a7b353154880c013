// SIGTERM under load (issue 12): `fecr serve` (SQLite, the embedded emulator) gets SIGTERM while 200 submissions
// are in flight. It exits 0 within 10 s; every submission it answered 200 is stored, and after a restart on the
// same data dir the CLI's backend sends the rest again (same numbers, same bodies): every document reaches
// aceptado once, with one reception at Hacienda and its webhook delivered.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../src/client/http-client.js';
import { RemoteBackend } from '../src/client/remote-backend.js';
import { validInvoice } from './helpers/bodies.js';
import { runCli, tempDir } from './helpers/cli.js';
import { mapLimit, postJson, startWebhookReceiver, waitUntil } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

type Ready = { authUrl: string; baseUrl: string; haciendaUrl: string };
const N = 200;

describe('SIGTERM under load', () => {
  const dir = tempDir('fecr-sigterm-');
  const procs: Spawned<Ready>[] = [];
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  });

  it(`exits 0 within 10 s with ${N} submissions in flight; nothing is lost after a restart`, { timeout: 120_000 }, async () => {
    const receiver = await startWebhookReceiver();
    const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1', FECR_MASTER_KEY: Buffer.alloc(32, 3).toString('base64'), FECR_LOG_LEVEL: 'warn' };
    const created = await runCli(['accounts', 'create', 'apagado', '--password-stdin', '--webhook-url', receiver.url, '--json'], { stdin: 'password-apagado-1\n', env, cwd: dir });
    expect(created.code, created.stderr).toBe(0);
    receiver.secret = (JSON.parse(created.stdout) as { webhookSecret: string }).webhookSecret;
    const start = async () => {
      const s = await spawnFecr<Ready>(['serve', '--emulator-delay', '50'], { env });
      procs.push(s);
      const login = await postJson(`${s.ready.authUrl}/login`, { base: 'apagado', password: 'password-apagado-1' });
      expect(login.status).toBe(200);
      return { s, backend: new RemoteBackend({ baseUrl: s.ready.baseUrl, token: login.body.token as string, http: new HttpClient({ connections: 256 }), retry: { attempts: 3, maxMs: 500 } }) };
    };

    const first = await start();
    const issuer = makeTestIssuer().issuer;
    writeFileSync(join(dir, 'issuer.json'), JSON.stringify(issuer));
    await first.backend.registerIssuer(issuer);
    const body = (i: number) => ({ ...validInvoice(), numeroReferencia: 30_000 + i });

    // 200 submissions at once; SIGTERM as soon as the first answers come back.
    const answered = new Map<number, string>();
    const failed: number[] = [];
    const inFlight = mapLimit(
      Array.from({ length: N }, (_, i) => i),
      N,
      async (i) => {
        try {
          answered.set(i, (await first.backend.submit(body(i))).clave);
        } catch {
          failed.push(i);
        }
      },
    );
    await waitUntil(() => answered.size >= 10, { timeoutMs: 30_000, intervalMs: 2, label: 'first answers' });
    const t0 = Date.now();
    const code = await first.s.stop('SIGTERM');
    const exitMs = Date.now() - t0;
    await inFlight;
    await first.backend.close();
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(10_000);
    expect(first.s.stderr()).not.toMatch(/internal error|unhandled/i);

    // Restart on the same data dir: send again what did not get an answer (same numbers, same bodies).
    const second = await start();
    const retried = await mapLimit(failed, 16, async (i) => ({ i, clave: (await second.backend.submit(body(i))).clave }));
    const claves = new Map(answered);
    for (const r of retried) claves.set(r.i, r.clave);
    expect(claves.size).toBe(N);
    // A number answered before the stop gives the same clave now (nothing stored twice).
    for (const i of [...answered.keys()].slice(0, 20)) expect((await second.backend.submit(body(i))).clave).toBe(answered.get(i));

    const all = new Set(claves.values());
    await waitUntil(async () => receiver.claves().size === N, {
      timeoutMs: 60_000,
      intervalMs: 200,
      label: 'every webhook delivered',
      describe: () => `${receiver.claves().size} webhooks; log ${second.s.stderr().slice(-1500)}`,
    });
    expect(receiver.claves()).toEqual(all);
    for (const clave of all) expect((await second.backend.status(clave))?.estado).toBe('aceptado');
    const recs = ((await (await fetch(`${second.s.ready.haciendaUrl}/_emulator/receptions`)).json()) as { receptions: { clave: string; acceptedPosts: number; duplicatePosts: number }[] }).receptions;
    const mine = recs.filter((r) => all.has(r.clave));
    expect(mine).toHaveLength(N);
    expect(mine.filter((r) => r.acceptedPosts !== 1 || r.duplicatePosts !== 0)).toEqual([]);
    const listed = await second.backend.listDocuments({ limit: 1000 });
    expect(listed.filter((d) => all.has(d.clave))).toHaveLength(N);
    console.log(`[reliability] SIGTERM with ${N} in flight: exit ${code} in ${exitMs} ms; ${answered.size} answered before, ${failed.length} sent again after the restart; ${N} aceptado, 0 duplicates`);
    await second.backend.close();
    await receiver.close();
  });
});
