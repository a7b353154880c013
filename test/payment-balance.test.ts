// Issue 37, point 5: one balance rule wherever a REP is made. A credit FE of 918 125 (condicionVenta 10), accepted;
// REP bodies sent as documents through POST /api/enviar/items (Fastify's inject, a real store: SQLite file, or
// PostgreSQL in the postgres project): one of 5 650 000 is a 400 naming the balance at the REP's amount; then 8 at once
// of 339 000 each: exactly 2 stored (678 000), 6 refused, the balance never below 0. A REP of a sale that is no credit
// sale is refused as paymentBodyFor refuses it. Nothing reaches Hacienda: the sale's verdict is written in the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentBody } from '../src/core/corrections/payment.js';
import { parseComprobanteXml } from '../src/core/xml/parse-comprobante.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { documentLinks, paymentBodyFor } from '../src/service/corrections.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';

let t: TestContext;
let app: ReturnType<typeof buildApiApp>;
let accountId: number;
let numero = 500;

const creditSale = (condicionVenta = '10') => {
  const b = fixtureBody('01-fe-servicios-13');
  b.numeroReferencia = ++numero;
  b.condicionVenta = condicionVenta;
  if (condicionVenta === '10') b.plazoCredito = 60;
  return b;
};

/** A sale stored and accepted (its verdict written: the balance rule reads the state). */
async function acceptedSale(condicionVenta = '10'): Promise<string> {
  const r = await submitDocument(t.ctx, accountId, creditSale(condicionVenta));
  await t.ctx.store.db.updateTable('documents').set({ state: 'aceptado' }).where('clave', '=', r.clave).execute();
  return r.clave;
}

/** A REP body paying `monto` of the sale (written as core/corrections/payment.ts writes it), under a number of its own. */
async function repBody(sale: string, monto: string, cuota = 1): Promise<Record<string, unknown>> {
  const row = (await getDocument(t.ctx, accountId, sale))!;
  const parsed = parseComprobanteXml(row.xml);
  const fecha = row.fecha_emision;
  return { ...paymentBody({ ...parsed, condicionVenta: parsed.condicionVenta === '01' ? '10' : parsed.condicionVenta }, { monto, fechaEmision: fecha, cuota }), numeroReferencia: ++numero };
}

async function post(body: unknown) {
  const res = await app.inject({ method: 'POST', url: '/api/enviar/items', headers: { authorization: 'Bearer tienda', 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

beforeAll(async () => {
  t = await makeServiceContext();
  accountId = (await createAccount(t.ctx, { base: 'tienda', password: 'una clave larga 123' })).account.id;
  await registerIssuer(t.ctx, accountId, makeTestIssuer().issuer);
  app = buildApiApp(t.ctx, { authenticate: async (h) => (h?.startsWith('Bearer ') ? { base: h.slice(7) } : null), heavyWork: { threads: 0 } });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await t?.close();
});

describe('a REP sent as a document (/api/enviar/items) is held to the sale balance', () => {
  it('1 × 5 650 000 against 918 125: 400 naming the balance at the amount; then 8 at once × 339 000: exactly 2 stored, 6 refused', async () => {
    const sale = await acceptedSale();
    expect((await documentLinks(t.ctx, accountId, sale))!.saldoPendiente).toBe('918125.00000');

    const over = await post(await repBody(sale, '5650000'));
    expect(over.status, JSON.stringify(over.body)).toBe(400);
    expect(over.body).toEqual({
      error: 'bad_request',
      message: `El pago de 5650000.00000 CRC excede el saldo de ${sale} (918125.00000 CRC)`,
      details: [{ path: 'detalleServicio[0].montoTotalLinea', message: 'excede el saldo pendiente: 918125.00000 CRC' }],
    });

    const bodies = await Promise.all(Array.from({ length: 8 }, (_, i) => repBody(sale, '339000', i + 1)));
    const answers = await Promise.all(bodies.map((b) => post(b)));
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 400);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 400, 400, 400, 400, 400, 400]);
    expect(ok).toHaveLength(2);
    for (const r of refused) {
      expect(r.body.error).toBe('bad_request');
      expect(r.body.message).toBe(`El pago de 339000.00000 CRC excede el saldo de ${sale} (240125.00000 CRC)`);
      expect(r.body.details).toEqual([{ path: 'detalleServicio[0].montoTotalLinea', message: 'excede el saldo pendiente: 240125.00000 CRC' }]);
    }
    const links = (await documentLinks(t.ctx, accountId, sale))!;
    expect(links.referenciadoPor.filter((r) => r.tipo === 'REP')).toHaveLength(2);
    expect(links.saldoPendiente).toBe('240125.00000');
    // Once Hacienda accepts both: the balance is what is left, never below 0.
    await t.ctx.store.db.updateTable('documents').set({ state: 'aceptado' }).where('kind', '=', 'REP').execute();
    expect((await documentLinks(t.ctx, accountId, sale))!.saldo).toBe('240125.00000');
    // The rest, exactly: stored; then the sale is paid in full and one more colón is refused.
    expect((await post(await repBody(sale, '240125'))).status).toBe(200);
    const full = await post(await repBody(sale, '1'));
    expect([full.status, full.body.message]).toEqual([400, `El comprobante ${sale} ya está pagado por completo (saldo 0.00000 CRC)`]);
    expect((await documentLinks(t.ctx, accountId, sale))!.saldoPendiente).toBe('0.00000');
  }, 60_000);

  it('the same rule for paymentBodyFor\'s body submitted at once twice (fecr documents payment, /api/documentos/pago): one passes', async () => {
    const sale = await acceptedSale();
    const a = { ...(await paymentBodyFor(t.ctx, accountId, sale, { monto: '600000' })), numeroReferencia: ++numero };
    const b = { ...(await paymentBodyFor(t.ctx, accountId, sale, { monto: '600000' })), numeroReferencia: ++numero };
    const r = await Promise.allSettled([submitDocument(t.ctx, accountId, a), submitDocument(t.ctx, accountId, b)]);
    expect(r.map((x) => x.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(String((r.find((x) => x.status === 'rejected') as PromiseRejectedResult).reason.message)).toBe(`El pago de 600000.00000 CRC excede el saldo de ${sale} (318125.00000 CRC)`);
  }, 60_000);

  it('a REP of a cash sale (condicionVenta 01) or of a sale not accepted: 400 at the reference', async () => {
    const cash = await acceptedSale('01');
    const r = await post(await repBody(cash, '1000'));
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^El comprobante \w{50} no es una venta a crédito/);
    expect(r.body.details).toEqual([{ path: 'informacionReferencia[0].numero', message: 'no es una venta a crédito (condicionVenta 08 o 10)' }]);
    const pending = (await submitDocument(t.ctx, accountId, creditSale())).clave;
    const p = await post(await repBody(pending, '1000'));
    expect([p.status, p.body.details]).toEqual([400, [{ path: 'informacionReferencia[0].numero', message: 'estado pendiente, no aceptado' }]]);
  }, 60_000);
});
