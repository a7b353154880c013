// Issue 26, item 5, on the service: a document Hacienda (the emulator) rejects, FechaEmision three days ahead (-53 in
// Hacienda's words). The API's extra `/api/consultar/estado` and `/api/consultar/documentos` (fecr's extensions) give
// `errores` beside detalleMensaje; the webhook gets the spec's verdict body exactly as before (folioId, folioType,
// folioDetails and nothing else) and fecr's own `documento.rechazado` event with the reasons as data.
import { createServer, type Server } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXTOS } from '../src/core/rules/hacienda-codes.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { findIssuer, registerIssuer } from '../src/service/issuers.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { BODIES, FAST_WORKER, storeSigned, withTimeout } from './helpers/worker-docs.js';

const AUTH_URL = 'http://auth.fecr.test';
const REASON = { codigo: -53, mensaje: TEXTOS.fechaDia53, fila: null, columna: null, aviso: false };

let emu: RunningEmulator;
let t: TestContext;
let app: ReturnType<typeof buildApiApp>;
let baseUrl: string;
let token: string;
let hooks: Server;
const received: { id: string; body: Record<string, unknown> }[] = [];
let rejected: string;
let accepted: string;

beforeAll(async () => {
  hooks = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ id: String(req.headers['webhook-id']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
  emu = await startEmulator({ processingDelayMs: 5 });
  t = await makeServiceContext({ haciendaUrl: emu.url });
  await ensureSigningKey(t.ctx);
  const { account } = await createAccount(t.ctx, { base: 'empresa-r', password: 'contrasena-r-123', webhookUrl: `http://127.0.0.1:${(hooks.address() as { port: number }).port}/hooks` });
  const issuer = makeTestIssuer();
  await registerIssuer(t.ctx, account.id, { ...issuer.issuer });
  const env = { ctx: t.ctx, accountId: account.id, issuerId: (await findIssuer(t.ctx, account.id, issuer.issuer.identificacion))!.id };
  const late = { ...BODIES.TE(), numeroReferencia: 61, fechaEmision: new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 19) };
  rejected = (await storeSigned(env, issuer, late)).clave;
  accepted = (await storeSigned(env, issuer, { ...BODIES.TE(), numeroReferencia: 62 })).clave;
  const worker = startWorker(t.ctx, FAST_WORKER);
  try {
    await withTimeout(worker.idle(), 30_000, 'worker idle');
  } finally {
    await worker.stop();
  }
  token = (await issueToken(t.ctx, { base: 'empresa-r' }, { issuer: AUTH_URL })).token;
  app = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await t?.close();
  await emu?.close();
  await new Promise<void>((r) => hooks.close(() => r()));
});

async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await request(baseUrl + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.statusCode, body: await res.body.json() };
}

describe("the API's extra status: errores", () => {
  it('/api/consultar/estado of a rejected document: errores beside detalleMensaje', async () => {
    const r = await post('/api/consultar/estado', { claveHacienda: rejected });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ clave: rejected, estado: 'rechazado', mensaje: 3 });
    expect(r.body.data.detalleMensaje).toContain('-53, ""');
    expect(r.body.data.errores).toEqual([REASON]);
  });

  it('/api/consultar/documentos: each document with its errores ([] when nothing is listed)', async () => {
    const r = await post('/api/consultar/documentos', {});
    expect(r.status).toBe(200);
    const by = new Map((r.body.data as { clave: string; errores: unknown }[]).map((d) => [d.clave, d.errores]));
    expect(by.get(rejected)).toEqual([REASON]);
    expect(by.get(accepted)).toEqual([]);
  });
});

describe('webhooks: the spec body stays exact, fecr\'s documento.rechazado carries errores', () => {
  it('the rejection: the spec verdict (three fields) and the fecr event with the reasons', () => {
    const verdict = received.find((h) => h.id === `msg_${rejected}`);
    expect(verdict).toBeDefined();
    expect(Object.keys(verdict!.body).sort()).toEqual(['folioDetails', 'folioId', 'folioType']);
    const event = received.find((h) => h.id === `msg_${rejected}_rechazado`);
    expect(event?.body).toEqual({ type: 'documento.rechazado', folioId: rejected, folioType: 'INVOICE', estado: 'rechazado', mensaje: 3, errores: [REASON] });
  });

  it('an accepted document: the spec verdict alone', () => {
    expect(received.filter((h) => h.body.folioId === accepted).map((h) => h.id)).toEqual([`msg_${accepted}`]);
  });
});
