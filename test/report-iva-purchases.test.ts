// Issue 29: the purchases of `fecr report iva` are in colones (a USD supplier invoice at its own TipoCambio) and belong
// to the issuer named with --issuer (the buyer), not to every issuer of the account. Two issuers of one account each
// receive supplier invoices, answered and accepted by the emulator; the figures are computed here from the signed XML.
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { createAccount } from '../src/service/accounts.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { registerIssuer } from '../src/service/issuers.js';
import { decideRecibido } from '../src/service/recibidos/decide.js';
import { importRecibidos } from '../src/service/recibidos/import.js';
import { issuerSummaries, recibidoFile } from '../src/service/recibidos/queries.js';
import { ivaReport, ivaReports } from '../src/service/report-iva.js';
import { buildApiApp } from '../src/server/api-app.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { FAST_WORKER, withTimeout } from './helpers/worker-docs.js';

const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP });
const m5 = (d: Decimal) => d.toFixed(5, Decimal.ROUND_HALF_UP);
const tag = (xml: string, name: string): string => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)![1]!;

let emu: RunningEmulator;
let env: TestContext;
let accountId: number;
const A = '3101123456';
const B = '3101987654';
let usdClave = '';
let crcClave = '';
let mes = '';
let pendingClave = '';
let offsetMs = 0;
const DAY = 86_400_000;

async function issueTo(numero: string, moneda?: { codigoMoneda: string; tipoCambio: string }): Promise<{ clave: string; xml: string }> {
  const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ receptor: { tipo: '02', numero }, ...(moneda ? { moneda } : {}) }),
  });
  expect(res.status).toBe(201);
  const d = ((await res.json()) as { documentos: { clave: string; xml: string }[] }).documentos[0]!;
  return { clave: d.clave, xml: Buffer.from(d.xml, 'base64').toString('utf8') };
}

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  env = await makeServiceContext({ haciendaUrl: emu.url, now: () => Date.now() + offsetMs });
  accountId = (await createAccount(env.ctx, { base: 'contador2', password: 'una clave larga 123' })).account.id;
  const a = makeTestIssuer();
  await registerIssuer(env.ctx, accountId, a.issuer);
  const pB = createTestP12({ id: B, type: '02', pin: '4321', name: 'OTRA EMPRESA SOCIEDAD ANONIMA' });
  await registerIssuer(env.ctx, accountId, { ...a.issuer, identificacion: B, nombre: 'OTRA EMPRESA SOCIEDAD ANONIMA', certificadoHacienda: pB.toString('base64'), pinCertificado: '4321' });
  const usd = await issueTo(A, { codigoMoneda: 'USD', tipoCambio: '505.25' });
  const crc = await issueTo(B);
  const pending = await issueTo(A);
  pendingClave = pending.clave;
  usdClave = usd.clave;
  crcClave = crc.clave;
  mes = tag(usd.xml, 'FechaEmision').slice(0, 7);
  await emu.state.whenIdle();
  const imported = await importRecibidos(env.ctx, accountId, [usd, crc, pending].map((d) => ({ name: `${d.clave}.xml`, bytes: Buffer.from(d.xml, 'utf8') })));
  expect(JSON.stringify(imported)).not.toContain('invalido');
  await decideRecibido(env.ctx, accountId, usdClave, { decision: 'aceptar' });
  await decideRecibido(env.ctx, accountId, crcClave, { decision: 'aceptar' });
  const worker = startWorker(env.ctx, FAST_WORKER);
  try {
    await withTimeout(
      (async () => {
        for (;;) {
          const docs = await env.ctx.store.db.selectFrom('documents').select(['state']).where('account_id', '=', accountId).execute();
          if (docs.length === 2 && docs.every((d) => d.state === 'aceptado')) return;
          await new Promise((r) => setTimeout(r, 50));
        }
      })(),
      25_000,
      'both MensajeReceptor accepted',
    );
  } finally {
    await worker.stop();
  }
}, 60_000);

afterAll(async () => {
  await env?.close();
  await emu?.close();
});

/** The IVA acreditable of a received document in colones, from its signed XML and our MensajeReceptor. */
async function acreditableColones(clave: string): Promise<Decimal> {
  const xml = (await recibidoFile(env.ctx, accountId, clave, 'XML'))!.toString('utf8');
  const mr = (await recibidoFile(env.ctx, accountId, clave, 'MENSAJE_RECEPTOR'))!.toString('utf8');
  const tc = /<CodigoMoneda>CRC</.test(xml) ? new D(1) : new D(tag(xml, 'TipoCambio'));
  return new D(tag(mr, 'MontoTotalImpuestoAcreditar')).times(tc);
}

describe('report iva: purchases in colones, of the named issuer', () => {
  it('a USD supplier invoice counts at its TipoCambio (505.25), in colones', async () => {
    const xml = (await recibidoFile(env.ctx, accountId, usdClave, 'XML'))!.toString('utf8');
    expect(tag(xml, 'CodigoMoneda')).toBe('USD');
    expect(tag(xml, 'TipoCambio')).toMatch(/^505\.25/);
    const r = await ivaReport(env.ctx, accountId, mes, A);
    expect(r.compras.documentos).toBe(1);
    expect(r.compras.excluidos.map((x) => x.clave)).toEqual([pendingClave]);
    const want = await acreditableColones(usdClave);
    expect(r.compras.totales.ivaAcreditable).toBe(m5(want));
    // The base too: TotalVentaNeta (the lines' bases) at the rate, not in dollars.
    const base = new D(tag(xml, 'TotalVentaNeta')).times('505.25');
    expect(new D(r.compras.totales.base).minus(base).abs().lte('0.0001')).toBe(true);
    expect(new D(r.compras.totales.base).gt(new D(tag(xml, 'TotalVentaNeta')).times(100))).toBe(true);
  });

  it("--issuer: each issuer's report holds its own purchases only; without it, one report per issuer, never their sum", async () => {
    const rb = await ivaReport(env.ctx, accountId, mes, B);
    expect(rb.emisor).toEqual({ identificacion: B, nombre: 'OTRA EMPRESA SOCIEDAD ANONIMA' });
    expect(rb.compras.documentos).toBe(1);
    expect(rb.compras.totales.ivaAcreditable).toBe(m5(await acreditableColones(crcClave)));
    expect(rb.compras.excluidos).toEqual([]);
    // Issue 36: two issuers, two reports, each the one --issuer gives (by identificación).
    const each = await ivaReports(env.ctx, accountId, mes);
    expect(each.map((r) => r.emisor.identificacion)).toEqual([A, B]);
    expect(each).toEqual([await ivaReport(env.ctx, accountId, mes, A), rb]);
    expect(each[0]!.compras.totales.ivaAcreditable).toBe(m5(await acreditableColones(usdClave)));
    // The saldo follows the purchases of the issuer named (no sales here: a credit of its own IVA acreditable).
    expect(rb.diferencia.ivaAcreditable).toBe(rb.compras.totales.ivaAcreditable);
  });

  it('recibidos resumen (the same summary) is in colones too, one per issuer', async () => {
    const [sa, sb] = await issuerSummaries(env.ctx, accountId, mes);
    expect(sa!.emisor.identificacion).toBe(A);
    expect(sa!.totales.ivaAcreditable).toBe(m5(await acreditableColones(usdClave)));
    expect(sb!.emisor.identificacion).toBe(B);
    expect(sb!.totales.ivaAcreditable).toBe(m5(await acreditableColones(crcClave)));
    expect(await issuerSummaries(env.ctx, accountId, mes, { emisor: B })).toEqual([sb]);
    await expect(issuerSummaries(env.ctx, accountId, mes, { emisor: '999999999' })).rejects.toMatchObject({ details: [{ path: 'emisor' }] });
  });

  it('the API routes (issue 36): without emisor an array, one per issuer, each what the emisor gives; with it the object', async () => {
    const app = buildApiApp(env.ctx, { authenticate: async () => ({ base: 'contador2' }) });
    const post = async (url: string, payload: unknown) => {
      const res = await app.inject({ method: 'POST', url, headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
      return { code: res.statusCode, data: (res.json() as { data: unknown }).data, body: res.json() as unknown };
    };
    try {
      for (const url of ['/api/reportes/iva', '/api/recibidos/resumen']) {
        const all = await post(url, { mes });
        expect(all.code).toBe(200);
        expect(Array.isArray(all.data)).toBe(true);
        const list = all.data as { emisor: { identificacion: string }; compras?: unknown }[];
        expect(list.map((x) => x.emisor.identificacion)).toEqual([A, B]);
        for (const x of list) {
          const one = await post(url, { mes, emisor: x.emisor.identificacion });
          expect(one.code).toBe(200);
          expect(one.data).toEqual(x);
        }
        const unknown = await post(url, { mes, emisor: '999999999' });
        expect(unknown.code).toBe(400);
        expect(JSON.stringify(unknown.body)).toContain('emisor');
      }
      const ra = (await post('/api/recibidos/resumen', { mes, emisor: A })).data as { totales: { ivaAcreditable: string } };
      expect(ra.totales.ivaAcreditable).toBe(m5(await acreditableColones(usdClave)));
    } finally {
      await app.close();
    }
  });

  it('answered late: listed with its days (still counted: Hacienda accepted it); unanswered past the term flagged', async () => {
    const row = await env.ctx.store.db.selectFrom('recibidos').select(['id', 'decided_at']).where('clave', '=', usdClave).executeTakeFirstOrThrow();
    await env.ctx.store.db.updateTable('recibidos').set({ decided_at: Date.now() + 10 * DAY }).where('id', '=', row.id).execute();
    try {
      const in8 = await ivaReport(env.ctx, accountId, mes, A, { plazoDias: 8 });
      expect(in8.compras.fueraDePlazo.map((x) => [x.clave, x.dias, x.situacionIva])).toEqual([[usdClave, 10, 'acreditable']]);
      expect(in8.compras.documentos).toBe(1);
      expect((await ivaReport(env.ctx, accountId, mes, A, { plazoDias: 30 })).compras.fueraDePlazo).toEqual([]);
      expect((await ivaReport(env.ctx, accountId, mes, A)).compras.fueraDePlazo).toEqual([]);
      // The unanswered one: within the term today, past it 9 days from now.
      expect((await ivaReport(env.ctx, accountId, mes, A, { plazoDias: 8 })).compras.excluidos[0]!.plazoVencido).toBe(false);
      offsetMs = 9 * DAY;
      const later = await ivaReport(env.ctx, accountId, mes, A, { plazoDias: 8 });
      expect(later.compras.excluidos.map((x) => [x.clave, x.motivo, x.plazoVencido])).toEqual([[pendingClave, 'sin_respuesta', true]]);
    } finally {
      offsetMs = 0;
      await env.ctx.store.db.updateTable('recibidos').set({ decided_at: row.decided_at }).where('id', '=', row.id).execute();
    }
  });
});
