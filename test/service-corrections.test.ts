// Issue 30, the use cases on both stores (SQLite, and PostgreSQL in the "postgres" project): each derived document is
// submitted through submitDocument and decided by the real worker against the emulator; its references land in
// document_references in the document's own transaction (migration 0015), so documentLinks is a query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { createAccount } from '../src/service/accounts.js';
import { annulmentBodyFor, documentLinks, paymentBodyFor, replacementBodyFor } from '../src/service/corrections.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { registerIssuer } from '../src/service/issuers.js';
import { ServiceError } from '../src/service/service-error.js';
import { dec, money } from '../src/core/money.js';
import { fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { FAST_WORKER, withTimeout } from './helpers/worker-docs.js';

let emu: RunningEmulator;
let env: TestContext;
let accountId: number;

async function decided(clave: string): Promise<string> {
  const worker = startWorker(env.ctx, FAST_WORKER);
  try {
    return await withTimeout(
      (async () => {
        for (;;) {
          const d = await getDocument(env.ctx, accountId, clave);
          if (d && ['aceptado', 'rechazado', 'error'].includes(d.state)) return d.state;
          await new Promise((r) => setTimeout(r, 50));
        }
      })(),
      20_000,
      `verdict on ${clave}`,
    );
  } finally {
    await worker.stop();
  }
}

async function issue(body: unknown): Promise<{ clave: string; estado: string }> {
  const r = await submitDocument(env.ctx, accountId, body, { assignNumber: true });
  return { clave: r.clave, estado: await decided(r.clave) };
}

const refusal = async (p: Promise<unknown>): Promise<string> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ServiceError);
  expect((e as ServiceError).status).toBe(400);
  return (e as ServiceError).message;
};

const creditSale = () => {
  const b = fixtureBody('01-fe-servicios-13');
  delete b.numeroReferencia;
  b.condicionVenta = '10';
  b.plazoCredito = 60;
  return b;
};

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  env = await makeServiceContext({ haciendaUrl: emu.url });
  accountId = (await createAccount(env.ctx, { base: 'tienda', password: 'una clave larga 123' })).account.id;
  await registerIssuer(env.ctx, accountId, makeTestIssuer().issuer);
}, 60_000);

afterAll(async () => {
  await env?.close();
  await emu?.close();
});

describe('corrections on the store', () => {
  it('an NC annuls an accepted FE; the FE names it; its balance is 0; the reference row is the NC\'s', async () => {
    const fe = await issue(creditSale());
    expect(fe.estado).toBe('aceptado');
    const nc = await issue(await annulmentBodyFor(env.ctx, accountId, fe.clave, { razon: 'Venta anulada' }));
    expect(nc.estado).toBe('aceptado');
    const links = await documentLinks(env.ctx, accountId, fe.clave);
    expect(links).toMatchObject({ clave: fe.clave, saldo: '0.00000', saldoPendiente: '0.00000', moneda: 'CRC' });
    expect(links!.referenciadoPor).toEqual([expect.objectContaining({ clave: nc.clave, tipo: 'NC', estado: 'aceptado', codigoReferencia: '01', monto: '918125.00000' })]);
    expect(await refusal(annulmentBodyFor(env.ctx, accountId, fe.clave))).toBe(`${fe.clave} is already annulled by ${nc.clave} (aceptado)`);
    // Paying an annulled sale: nothing is left to pay.
    expect(await refusal(paymentBodyFor(env.ctx, accountId, fe.clave, { monto: '1' }))).toBe(`${fe.clave} is paid in full (balance 0.00000 CRC)`);
    // Another account sees none of it.
    const other = (await createAccount(env.ctx, { base: 'otra', password: 'una clave larga 456' })).account.id;
    expect(await documentLinks(env.ctx, other, fe.clave)).toBeNull();
  }, 60_000);

  it('two REPs pay a credit sale; a payment beyond the balance is refused; a REP in flight already counts', async () => {
    const fe = await issue(creditSale());
    const first = await issue(await paymentBodyFor(env.ctx, accountId, fe.clave, { monto: '500000' }));
    expect(first.estado).toBe('aceptado');
    expect((await documentLinks(env.ctx, accountId, fe.clave))!.saldo).toBe('418125.00000');
    expect(await refusal(paymentBodyFor(env.ctx, accountId, fe.clave, { monto: '418125.00001' }))).toBe(
      `a payment of 418125.00001 CRC exceeds the balance left on ${fe.clave} (418125.00000 CRC)`,
    );
    // Submitted, not yet decided: the balance Hacienda has accepted stays, the committed one counts it.
    const r = await submitDocument(env.ctx, accountId, await paymentBodyFor(env.ctx, accountId, fe.clave, { monto: '418125', medioPago: '01' }), { assignNumber: true });
    const pending = await documentLinks(env.ctx, accountId, fe.clave);
    expect(pending).toMatchObject({ saldo: '418125.00000', saldoPendiente: '0.00000' });
    expect(await decided(r.clave)).toBe('aceptado');
    const links = await documentLinks(env.ctx, accountId, fe.clave);
    expect(links!.saldo).toBe('0.00000');
    expect(links!.referenciadoPor.map((x) => [x.tipo, x.codigoReferencia, x.monto])).toEqual([
      ['REP', '17', '500000.00000'],
      ['REP', '17', '418125.00000'],
    ]);
  }, 60_000);

  it('a partial NC sent as a body (fecr send) is listed with its amount, and the balance is what it leaves', async () => {
    const fe = await issue(creditSale());
    const ncBody = fixtureBody('09-nc-devolucion');
    delete ncBody.numeroReferencia;
    ncBody.informacionReferencia[0].numero = fe.clave;
    const nc = await issue(ncBody);
    expect(nc.estado).toBe('aceptado');
    const links = await documentLinks(env.ctx, accountId, fe.clave);
    expect(links!.referenciadoPor).toEqual([expect.objectContaining({ clave: nc.clave, tipo: 'NC', codigoReferencia: '06', monto: '697775.00000' })]);
    expect(links!.saldo).toBe('220350.00000'); // 918125 − 697775
    // An annulment (the whole FE copied) would credit the returned part twice: refused, naming what is left.
    expect(await refusal(annulmentBodyFor(env.ctx, accountId, fe.clave))).toBe(
      `${fe.clave} is already credited in part by ${nc.clave} (aceptado); what is left (220350.00000 CRC) needs a nota de crédito of its own (fecr send)`,
    );
    // A payment up to the balance is taken; beyond it, refused.
    expect(await refusal(paymentBodyFor(env.ctx, accountId, fe.clave, { monto: '220350.00001' }))).toContain('exceeds the balance left');
  }, 60_000);

  it('an ND is annulled too; its NC references it with TipoDocIR 02', async () => {
    const fe = await issue(creditSale());
    const ndBody = fixtureBody('14-nd-ajuste-servicios');
    delete ndBody.numeroReferencia;
    ndBody.informacionReferencia[0].numero = fe.clave;
    const nd = await issue(ndBody);
    expect(nd.estado).toBe('aceptado');
    const body = await annulmentBodyFor(env.ctx, accountId, nd.clave);
    expect(body.informacionReferencia).toEqual([expect.objectContaining({ tipoDocIR: '02', numero: nd.clave, codigo: '01' })]);
    expect((await issue(body)).estado).toBe('aceptado');
    // The FE's balance: its total + the ND (the ND's own NC references the ND, not the FE).
    const links = await documentLinks(env.ctx, accountId, fe.clave);
    expect(links!.referenciadoPor.map((x) => x.tipo)).toEqual(['ND']);
    expect(links!.saldo).toBe(money(dec('918125').plus(dec(links!.referenciadoPor[0]!.monto!))));
  }, 60_000);

  it('replace is only for a rejected comprobante', async () => {
    const fe = await issue(creditSale());
    expect(await refusal(replacementBodyFor(env.ctx, accountId, fe.clave, creditSale()))).toBe(
      `${fe.clave} is aceptado: only a comprobante Hacienda rejected is replaced (CodigoReferencia 16)`,
    );
  }, 60_000);
});
