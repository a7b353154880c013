// Issue 29: tipoCambio "auto" for EUR (Hacienda's /indicadores/tc/euro gives today's rate only, {fecha, dolares,
// colones}), and the rate on a hosted service: POST /api/consultar/tipo-cambio (fecr tipo-cambio on a remote profile).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { emulatorTipoCambio, emulatorTipoCambioEuro } from '../src/emulator/routes-public.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { ServiceError } from '../src/service/service-error.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { fixture } from './helpers/worker-docs.js';

let emu: RunningEmulator;
let t: TestContext;
let accountId: number;
const today = formatCr(new Date()).slice(0, 10);

function eurBody(numero: number, fechaEmision: string): Record<string, any> {
  const b = fixture('08-fe-usd.json');
  b.numeroReferencia = numero;
  b.fechaEmision = fechaEmision;
  b.resumenFactura.codigoTipoMoneda = { codigoMoneda: 'EUR', tipoCambio: 'auto' };
  return b;
}

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 5 });
  t = await makeServiceContext({ haciendaUrl: emu.url });
  accountId = (await createAccount(t.ctx, { base: 'empresa-eur', password: 'contrasena-eur-123' })).account.id;
  await registerIssuer(t.ctx, accountId, { ...makeTestIssuer().issuer });
}, 30_000);

afterAll(async () => {
  await t?.close();
  await emu?.close();
});

describe('tipoCambio "auto" in euros', () => {
  it("today: the route's colones in the XML, the rate recorded with its source", async () => {
    const want = emulatorTipoCambioEuro(today).colones;
    expect(want).not.toBe(emulatorTipoCambio(today).venta);
    const r = await submitDocument(t.ctx, accountId, eurBody(701, formatCr(new Date(Date.now() - 60_000))));
    const xml = (await getDocument(t.ctx, accountId, r.clave))!.xml;
    expect(/<CodigoMoneda>([^<]+)</.exec(xml)?.[1]).toBe('EUR');
    expect(/<TipoCambio>([^<]+)</.exec(xml)?.[1]).toBe(`${want}000`);
    const row = await t.ctx.store.db.selectFrom('exchange_rates').selectAll().where('moneda', '=', 'EUR').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ fecha: today, venta: String(Number(want)) }); // the route's JSON number, as it came
    expect(row.fuente).toMatch(/\/indicadores\/tc\/euro$/);
  });

  it('another day: the finding of before, saying the euro is published for today only', async () => {
    const err = await submitDocument(t.ctx, accountId, eurBody(702, '2026-11-02T10:00:00-06:00')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    const f = ((err as ServiceError).details ?? []).filter((x) => x.path === 'resumenFactura.codigoTipoMoneda.tipoCambio');
    expect(f.map((x) => x.message)).toEqual([expect.stringMatching(/is required for EUR .*"auto" could not take it: Hacienda's indicator API gives the euro for today only/)]);
  });
});

describe('POST /api/consultar/tipo-cambio', () => {
  it('answers the rate of a day (USD by default, EUR today), 400 naming the field, 503 with why; listed in /openapi.json', async () => {
    const app = buildApiApp(t.ctx, { authenticate: async () => ({ base: 'empresa-eur' }) });
    const post = (payload: unknown) => app.inject({ method: 'POST', url: '/api/consultar/tipo-cambio', headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    try {
      const usd = await post({ fecha: '2026-11-20' });
      expect(usd.statusCode).toBe(200);
      expect(usd.json().data).toMatchObject({ moneda: 'USD', fecha: '2026-11-20', venta: emulatorTipoCambio('2026-11-20').venta });
      const eur = await post({ fecha: today, moneda: 'EUR' });
      expect(eur.json().data).toMatchObject({ moneda: 'EUR', venta: String(Number(emulatorTipoCambioEuro(today).colones)), cached: true });
      for (const [body, field] of [[{ fecha: '2026-02-30' }, 'fecha'], [{}, 'fecha'], [{ fecha: today, moneda: 'JPY' }, 'moneda']] as const) {
        const r = await post(body);
        expect(r.statusCode).toBe(400);
        expect(JSON.stringify(r.json())).toContain(field);
      }
      const old = await post({ fecha: '2026-10-01', moneda: 'EUR' });
      expect(old.statusCode).toBe(503);
      expect(old.json().message).toMatch(/euro for today only/);
      const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
      expect(spec.paths['/api/consultar/tipo-cambio']).toBeDefined();
    } finally {
      await app.close();
    }
  });
});
