// Issue 37, point 9: the Hacienda HTTP client (src/hacienda/client/http.ts, the one `send` every call to Hacienda goes
// through) caps each answer by kind (ANSWER_LIMITS) and bounds each request by an overall deadline (headers and body);
// exchange rates outside PLAUSIBLE_RATES (service/exchange-rate.ts) are refused and never cached. Real HTTP servers on
// 127.0.0.1:0: an endless body, a drip-fed body, an oversized answer (declared, and sent whole), absurd rates.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_LIMITS, HttpClient, NetworkError, PublicQueryClient, resolveEndpoints, TokenManager } from '../src/hacienda/index.js';
import { createAccount } from '../src/service/accounts.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { tipoCambioFor } from '../src/service/exchange-rate.js';
import { registerIssuer } from '../src/service/issuers.js';
import { closeLookups } from '../src/service/lookups.js';
import { ServiceError } from '../src/service/service-error.js';
import { storeRate } from '../src/store/exchange-rates.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { fixture } from './helpers/worker-docs.js';

/** The deadline the tests give the client (the default is 60 s); "answers within" it means under it plus 1.5 s. */
const DEADLINE_MS = 1_500;
/** What the endless body sends at most before the server gives up (so the code of before fails without eating memory). */
const ENDLESS_STOP = 64 * 1024 * 1024;
const DAY = '2026-11-20';

let server: Server;
let base: string;
/** Bytes the endless route has written so far. */
let endlessSent = 0;
/** The selling rate the indicator route answers. */
let rate = '512.34';

function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length announced
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const pump = () => {
    while (endlessSent < ENDLESS_STOP) {
      endlessSent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.destroy();
  };
  res.on('close', () => undefined);
  pump();
}

function drip(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
  const timer = setInterval(() => res.write(' '), 200); // a byte well within every idle timeout, for ever
  res.on('close', () => clearInterval(timer));
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  if (url.startsWith('/endless')) return endless(res);
  if (url.startsWith('/drip') || url.startsWith('/idp-drip')) return drip(res);
  if (url.startsWith('/declared')) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * 1024 * 1024) });
    return void res.write('{'); // and nothing more: the length alone must refuse it
  }
  if (url.startsWith('/oversized')) {
    const body = Buffer.alloc(ANSWER_LIMITS.query + 1024 * 1024, 0x20);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    return void res.end(body);
  }
  if (url.startsWith('/fine')) return void res.end('{"ok":true}');
  // The indicator API (NOTES §5): today's dollar and euro; no history.
  if (url.startsWith('/rates/indicadores/tc/dolar/historico')) return void res.writeHead(404).end();
  if (url.startsWith('/rates/indicadores/tc/dolar')) return void res.end(JSON.stringify({ venta: { fecha: `${DAY}T00:00:00`, valor: rate }, compra: { fecha: DAY, valor: rate } }));
  if (url.startsWith('/rates/indicadores/tc/euro')) return void res.end(`{"fecha":"${DAY}","dolares":1.1,"colones":${rate}}`);
  if (url.startsWith('/endless-rates/indicadores/tc/dolar')) return endless(res);
  res.writeHead(404).end();
}

beforeAll(async () => {
  server = createServer(route);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** The request's outcome, or 'still waiting' when it is not over within `ms` (the code of before never ends some). */
async function within<T>(ms: number, p: Promise<T>): Promise<{ value?: T; error?: unknown; waiting?: true; elapsedMs: number }> {
  const started = Date.now();
  const settled = p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  const out = await Promise.race([settled, new Promise<{ waiting: true }>((r) => setTimeout(() => r({ waiting: true }), ms))]);
  return { ...out, elapsedMs: Date.now() - started };
}

function codeOf(e: unknown): string | undefined {
  return e instanceof NetworkError ? e.code : undefined;
}

describe('the answer-size cap and the deadline of every Hacienda request', () => {
  const http = () => new HttpClient({ deadlineMs: DEADLINE_MS, connections: 2 });

  it('an endless body: cut at the cap (ANSWER_TOO_LARGE), having taken little more than the cap', async () => {
    const c = http();
    endlessSent = 0;
    try {
      const r = await within(10_000, c.send(`${base}/endless`, { method: 'GET', kind: 'idp' }));
      expect(codeOf(r.error), String(r.error)).toBe('ANSWER_TOO_LARGE');
      expect(r.elapsedMs).toBeLessThan(DEADLINE_MS + 1_500);
      // What the server got out before the client stopped reading: the cap plus the sockets' buffers, far from the 64 MiB.
      expect(endlessSent).toBeLessThan(ANSWER_LIMITS.idp + 16 * 1024 * 1024);
    } finally {
      await c.close();
    }
  });

  it('a drip-fed body (a byte every 200 ms, within every idle timeout): DEADLINE_EXCEEDED at the deadline', async () => {
    const c = http();
    try {
      const r = await within(8_000, c.send(`${base}/drip`, { method: 'GET', kind: 'query' }));
      expect(r.waiting, 'still waiting after 8 s').toBeUndefined();
      expect(codeOf(r.error), String(r.error)).toBe('DEADLINE_EXCEEDED');
      expect(r.elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(r.elapsedMs).toBeLessThan(DEADLINE_MS + 1_500);
    } finally {
      await c.close();
    }
  });

  it('an oversized answer: refused by its Content-Length before the body, and when sent whole', async () => {
    const c = http();
    try {
      const declared = await within(8_000, c.send(`${base}/declared`, { method: 'GET', kind: 'reception' }));
      expect(codeOf(declared.error), String(declared.error)).toBe('ANSWER_TOO_LARGE');
      expect(declared.elapsedMs).toBeLessThan(1_000); // at the headers, not at the deadline
      const whole = await within(8_000, c.send(`${base}/oversized`, { method: 'GET', kind: 'query' }));
      expect(codeOf(whole.error), String(whole.error)).toBe('ANSWER_TOO_LARGE');
      // An answer within its cap still comes through, on the same client.
      const fine = await c.send(`${base}/fine`, { method: 'GET', kind: 'probe' });
      expect([fine.status, fine.body.toString()]).toEqual([200, '{"ok":true}']);
    } finally {
      await c.close();
    }
  });

  it("the callers go through it: the IdP's drip-fed token and the indicator's endless body end within their deadline", async () => {
    const c = http();
    try {
      const endpoints = resolveEndpoints('local', { baseUrl: base });
      const tokens = new TokenManager({ endpoints: { ...endpoints, tokenUrl: `${base}/idp-drip` }, http: c, retry: { maxAttempts: 1 } });
      const idp = await within(8_000, tokens.getAccessToken({ username: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr', password: 'x' }));
      expect(idp.waiting, 'still waiting after 8 s').toBeUndefined();
      expect(String(idp.error)).toMatch(/DEADLINE_EXCEEDED/);
      expect(idp.elapsedMs).toBeLessThan(DEADLINE_MS + 1_500);
      endlessSent = 0;
      const q = new PublicQueryClient({ baseUrl: `${base}/endless-rates`, http: c });
      const tc = await within(8_000, q.getTipoCambio(DAY));
      expect(String(tc.error)).toMatch(/ANSWER_TOO_LARGE/);
      expect(endlessSent).toBeLessThan(ANSWER_LIMITS.query + 16 * 1024 * 1024);
    } finally {
      await c.close();
    }
  });
});

describe('exchange rates: sanity-checked, never cached when refused', () => {
  let t: TestContext;
  let accountId: number;

  beforeAll(async () => {
    t = await makeServiceContext({ haciendaUrl: `${base}/rates` });
    const { account } = await createAccount(t.ctx, { base: 'empresa-tc-absurdo', password: 'contrasena-tc-123' });
    accountId = account.id;
    await registerIssuer(t.ctx, accountId, { ...makeTestIssuer().issuer });
  }, 30_000);

  afterAll(async () => {
    if (t) await closeLookups(t.ctx);
    await t?.close();
  });

  const usdBody = (numero: number): Record<string, any> => {
    const b = fixture('08-fe-usd.json');
    b.numeroReferencia = numero;
    b.fechaEmision = `${DAY}T09:15:00-06:00`;
    b.resumenFactura.codigoTipoMoneda.tipoCambio = 'auto';
    return b;
  };
  const cachedRows = async () => t.ctx.store.db.selectFrom('exchange_rates').selectAll().execute();

  it('0, 10^38 and a million digits: the finding of "no rate", nothing cached; a sane rate afterwards is used', async () => {
    let numero = 901;
    for (const absurd of ['0', '0.5', '1' + '0'.repeat(38), '9'.repeat(1_000_000)]) {
      rate = absurd;
      const err = await submitDocument(t.ctx, accountId, usdBody(numero++)).catch((e: unknown) => e);
      expect(err, absurd.slice(0, 40)).toBeInstanceOf(ServiceError);
      const f = ((err as ServiceError).details ?? []).filter((x) => x.path === 'resumenFactura.codigoTipoMoneda.tipoCambio');
      expect(f).toHaveLength(1);
      expect(f[0]!.message).toMatch(/is required for USD \(the BCCR reference selling rate\); "auto" could not take it: Hacienda's indicator API gave .* colones per USD, outside 250–2000/);
      expect(f[0]!.message.length).toBeLessThan(400); // the million digits are not echoed
      expect(await cachedRows()).toEqual([]);
    }
    rate = '512.34';
    const ok = await submitDocument(t.ctx, accountId, usdBody(numero++));
    expect(/<TipoCambio>([^<]+)<\/TipoCambio>/.exec((await getDocument(t.ctx, accountId, ok.clave))!.xml)?.[1]).toBe('512.34000');
    expect((await cachedRows()).map((r) => [r.moneda, r.fecha, r.venta])).toEqual([['USD', DAY, '512.34']]);
  });

  it('the euro too; and an absurd rate cached by an older fecr is dropped and asked again', async () => {
    rate = '99999';
    await expect(tipoCambioFor(t.ctx, 'EUR', DAY)).rejects.toThrow(/outside 200–3200/);
    expect((await cachedRows()).filter((r) => r.moneda === 'EUR')).toEqual([]);
    await t.ctx.store.db.deleteFrom('exchange_rates').execute();
    await storeRate(t.ctx.store.db, { moneda: 'USD', fecha: DAY, venta: '0', fuente: 'old', fetched_at: Date.now() });
    rate = '511.11';
    const r = await tipoCambioFor(t.ctx, 'USD', DAY);
    expect([r.venta, r.cached]).toEqual(['511.11', false]);
    expect((await cachedRows()).map((x) => x.venta)).toEqual(['511.11']);
  });
});
