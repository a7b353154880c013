// Issue 25, point 10c: a remote `fecr batch` rides out a restart of the service. A real client API on 127.0.0.1
// (in-process, SQLite) behind a TCP front on a fixed port that "restarts": at the 20th submission, after the document
// is stored, every connection is reset (the answer is lost) and the port refuses connections for 3 s. The batch
// (60 documents, concurrency 8, through a remote profile) retries the reset and the refused connections and sends
// every row; the lost answer's retry gets the stored clave back: more POSTs than documents, and exactly one document
// per numeroReferencia in the service. Also, on the RemoteBackend: a service that stays down fails after the bound
// with a message that says so; a call that is not idempotent (a mail) is not repeated after a reset.
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../src/client/http-client.js';
import { RemoteBackend } from '../src/client/remote-backend.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const AUTH_URL = 'http://auth.fecr.test';
const DOCS = 60;
const root = tempDir('fecr-batch-restart-');
const work = join(root, 'work');
const env: Record<string, string> = { HOME: root, FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
const fecr = (args: string[]) => runCli(args, { env, cwd: work });

/** A TCP front on a fixed port: `restart(ms)` resets every connection and refuses new ones for `ms`. */
interface Front {
  port: number;
  restarts: number;
  restart(downMs: number): void;
  close(): Promise<void>;
}

async function startFront(target: number): Promise<Front> {
  const open = new Set<Socket>();
  let server: Server;
  const listen = (port: number) =>
    new Promise<number>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(target, '127.0.0.1');
        open.add(client).add(upstream);
        const drop = () => {
          open.delete(client);
          open.delete(upstream);
          client.destroy();
          upstream.destroy();
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    });
  const port = await listen(0);
  let up: Promise<unknown> = Promise.resolve();
  const front: Front = {
    port,
    restarts: 0,
    restart(downMs) {
      front.restarts++;
      server.close();
      for (const s of open) s.resetAndDestroy();
      open.clear();
      up = new Promise((r) => setTimeout(r, downMs)).then(() => listen(port));
    },
    close: async () => {
      await up;
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return front;
}

let service: TestContext;
let app: ReturnType<typeof buildApiApp>;
let front: Front;
let token: string;
let posts = 0;

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  service = await makeServiceContext();
  await ensureSigningKey(service.ctx);
  await createAccount(service.ctx, { base: 'acme', password: 'contrasena-acme-123' });
  token = (await issueToken(service.ctx, { base: 'acme' }, { issuer: AUTH_URL })).token;
  app = buildApiApp(service.ctx, { authenticate: createTokenVerifier(service.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
  app.addHook('onSend', async (req, reply) => {
    if (req.url !== '/api/enviar/items') return;
    posts++;
    // The 20th submission is stored; its answer is lost in a restart of 3 s.
    if (posts === 20 && reply.statusCode === 200) front.restart(3000);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  front = await startFront((app.server.address() as AddressInfo).port);
  for (const [k, v] of [['mode', 'remote'], ['authUrl', AUTH_URL], ['baseUrl', `http://127.0.0.1:${front.port}`], ['base', 'acme']] as const) {
    const r = await fecr(['config', 'set', k, v]);
    expect(r.code, r.stderr).toBe(0);
  }
  env.FECR_TOKEN = token;
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
  const out = createWriteStream(join(work, 'docs.csv'));
  out.write('emisor,numeroReferencia,tipoDoc,fechaEmision,codigoActividad,receptorNombre,receptorTipo,receptorNumero,receptorCorreo,moneda,medioPago,condicionVenta,codigo,detalle,cantidad,unidadMedida,precioUnitario,descuento,codigoTarifa\n');
  for (let n = 1; n <= DOCS; n++) {
    const doc = `3101123456,${n},1,2026-03-02T09:15:00-06:00,6201.0,DISTRIBUIDORA EL CAFETAL LIMITADA,02,3101987654,compras@elcafetal.example.cr,CRC,04,01`;
    out.write(`${doc},8311200000000,Consultoría en gestión comercial,${1 + (n % 5)},h,50000,,08\n`);
  }
  await new Promise<void>((r) => out.end(r));
}, 60_000);

afterAll(async () => {
  await front?.close();
  await app?.close();
  await service?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('fecr batch against a hosted service that restarts', () => {
  it('every row is sent once: the reset and the refused connections are retried, the lost answer gives the stored clave', async () => {
    const r = await fecr(['batch', 'docs.csv', '--concurrency', '8', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: DOCS, sent: DOCS, invalid: 0, errors: 0 });
    expect(front.restarts).toBe(1);
    const results = readFileSync(join(work, 'docs.csv.results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { numeroReferencia: number; clave: string; state: string });
    expect(results.every((x) => x.state === 'enviado')).toBe(true);
    expect(new Set(results.map((x) => x.clave)).size).toBe(DOCS);
    // The server saw more submissions than documents (the one whose answer was lost came again), and kept one each.
    expect(posts).toBeGreaterThan(DOCS);
    const rows = await service.ctx.store.db.selectFrom('documents').select(['clave', 'numero_referencia']).execute();
    expect(rows).toHaveLength(DOCS);
    expect(new Set(rows.map((x) => Number(x.numero_referencia))).size).toBe(DOCS);
    const byNumero = new Map(rows.map((x) => [Number(x.numero_referencia), x.clave]));
    for (const x of results) expect(byNumero.get(x.numeroReferencia)).toBe(x.clave);
  }, 120_000);
});

describe('RemoteBackend retries', () => {
  it('a service that stays down: refused connections retried up to the bound, then one error that says so', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const backend = new RemoteBackend({ baseUrl: `http://127.0.0.1:${port}`, token, retry: { attempts: 3, baseMs: 10, maxMs: 20, refused: true } });
    const e = (await backend.submit({}).catch((x: unknown) => x)) as Error;
    expect(e).toMatchObject({ name: 'BackendError', code: 'unavailable' });
    expect(e.message).toMatch(new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED; still after 3 retries over \\d+ s\\)$`));
    await backend.close();
  });

  it('after a reset, a submission is sent again but a mail is not', async () => {
    let connections = 0;
    const resetting = createServer((s) => {
      connections++;
      s.once('data', () => s.resetAndDestroy());
    });
    await new Promise<void>((r) => resetting.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(resetting.address() as AddressInfo).port}`;
    const backend = new RemoteBackend({ baseUrl: url, token, http: new HttpClient({ connections: 1 }), retry: { attempts: 2, baseMs: 10, maxMs: 20, refused: true } });
    try {
      await expect(backend.submit({ numeroReferencia: 1 })).rejects.toMatchObject({ code: 'unavailable' });
      expect(connections).toBe(3);
      connections = 0;
      await expect(backend.emailDocument('5'.repeat(50))).rejects.toMatchObject({ code: 'unavailable' });
      expect(connections).toBe(1);
    } finally {
      await backend.close();
      await new Promise<void>((r) => resetting.close(() => r()));
    }
  });
});

