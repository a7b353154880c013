// Issue 29 (must show 2): a USD body with `tipoCambio: "auto"` → the emulator's rate of its Costa Rica day in the signed
// XML's TipoCambio; a second document of the same day takes it from the store's cache (the emulator counts one request
// to its indicator routes, not two); a body of another day makes one more. With no Hacienda to ask, the finding of
// before stays, with one line saying why.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { emulatorTipoCambio } from '../src/emulator/routes-public.js';
import { createAccount } from '../src/service/accounts.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { ServiceError } from '../src/service/service-error.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { fixture } from './helpers/worker-docs.js';

let emu: RunningEmulator;
let t: TestContext;
let accountId: number;

async function indicatorCalls(): Promise<number> {
  const res = await fetch(`${emu.url}/_emulator/stats`);
  return ((await res.json()) as { public: { indicadores: number } }).public.indicadores;
}

function usdBody(numero: number, fechaEmision: string, tipoCambio?: string): Record<string, any> {
  const b = fixture('08-fe-usd.json');
  b.numeroReferencia = numero;
  b.fechaEmision = fechaEmision;
  if (tipoCambio === undefined) delete b.resumenFactura.codigoTipoMoneda.tipoCambio;
  else b.resumenFactura.codigoTipoMoneda.tipoCambio = tipoCambio;
  return b;
}

function tipoCambioOf(xml: string): string {
  return /<TipoCambio>([^<]+)<\/TipoCambio>/.exec(xml)?.[1] ?? '';
}

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 5 });
  t = await makeServiceContext({ haciendaUrl: emu.url });
  const { account } = await createAccount(t.ctx, { base: 'empresa-tc', password: 'contrasena-tc-123' });
  accountId = account.id;
  await registerIssuer(t.ctx, accountId, { ...makeTestIssuer().issuer });
}, 30_000);

afterAll(async () => {
  await t?.close();
  await emu?.close();
});

describe('tipoCambio "auto"', () => {
  it("puts the emulator's rate of the document's day in the XML, and takes it from the cache the second time", async () => {
    const rate = emulatorTipoCambio('2026-11-20').venta;
    expect(await indicatorCalls()).toBe(0);

    const first = await submitDocument(t.ctx, accountId, usdBody(801, '2026-11-20T09:15:00-06:00', 'auto'));
    const xml1 = (await getDocument(t.ctx, accountId, first.clave))!.xml;
    expect(tipoCambioOf(xml1)).toBe(`${rate}000`);
    const afterFirst = await indicatorCalls();
    expect(afterFirst).toBeGreaterThanOrEqual(1);

    // Same Costa Rica day (23:30 there is already the 21st in UTC), tipoCambio left out: the cache, no request.
    const second = await submitDocument(t.ctx, accountId, usdBody(802, '2026-11-20T23:30:00-06:00'));
    const xml2 = (await getDocument(t.ctx, accountId, second.clave))!.xml;
    expect(tipoCambioOf(xml2)).toBe(`${rate}000`);
    expect(await indicatorCalls()).toBe(afterFirst);

    // The row records where the rate came from.
    const row = await t.ctx.store.db.selectFrom('exchange_rates').selectAll().where('fecha', '=', '2026-11-20').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ moneda: 'USD', venta: rate });
    expect(row.fuente).toContain('/indicadores/tc/dolar');

    // Another day: its own rate, asked once more.
    const other = emulatorTipoCambio('2026-11-19').venta;
    expect(other).not.toBe(rate);
    const third = await submitDocument(t.ctx, accountId, usdBody(803, '2026-11-19T12:00:00-06:00', 'AUTO'));
    expect(tipoCambioOf((await getDocument(t.ctx, accountId, third.clave))!.xml)).toBe(`${other}000`);
    expect(await indicatorCalls()).toBeGreaterThan(afterFirst);
  });

  it('a rate given in the body is used as it is, with no request', async () => {
    const before = await indicatorCalls();
    const r = await submitDocument(t.ctx, accountId, usdBody(804, '2026-11-18T12:00:00-06:00', '507.85'));
    expect(tipoCambioOf((await getDocument(t.ctx, accountId, r.clave))!.xml)).toBe('507.85000');
    expect(await indicatorCalls()).toBe(before);
  });

  it('no Hacienda to ask: the finding of before, with why', async () => {
    const offline = await makeServiceContext({ haciendaUrl: 'http://127.0.0.1:9' });
    try {
      const { account } = await createAccount(offline.ctx, { base: 'empresa-off', password: 'contrasena-off-123' });
      await registerIssuer(offline.ctx, account.id, { ...makeTestIssuer().issuer });
      const err = await submitDocument(offline.ctx, account.id, usdBody(805, '2026-11-20T09:15:00-06:00', 'auto')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceError);
      const findings = (err as ServiceError).details ?? [];
      const f = findings.filter((x) => x.path === 'resumenFactura.codigoTipoMoneda.tipoCambio');
      expect(f).toHaveLength(1);
      expect(f[0]!.message).toMatch(/is required for USD \(the BCCR reference selling rate\); "auto" could not take it: Hacienda's indicator API did not answer/);
    } finally {
      await offline.close();
    }
  });
});

describe('fecr tipo-cambio', () => {
  it("prints the emulator's rate of a date and its source; the second time from the data dir's cache", async () => {
    const home = tempDir('fecr-tc-');
    const env = { HOME: home, FECR_DATA_DIR: join(home, 'data') };
    try {
      const first = await runCli(['tipo-cambio', '2026-11-20'], { cwd: home, env });
      expect(first.stderr).not.toMatch(/error/);
      expect(first.code).toBe(0);
      expect(first.stdout).toContain(`2026-11-20  USD  ${emulatorTipoCambio('2026-11-20').venta} colones`);
      expect(first.stdout).toMatch(/source: http:\/\/127\.0\.0\.1:\d+\/indicadores\/tc\/dolar/);
      const json = await runCli(['tipo-cambio', '2026-11-20', '--json'], { cwd: home, env });
      expect(JSON.parse(json.stdout)).toMatchObject({ moneda: 'USD', fecha: '2026-11-20', venta: emulatorTipoCambio('2026-11-20').venta, cached: true });
      const bad = await runCli(['tipo-cambio', '2026-02-30'], { cwd: home, env });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/^error: DATE must be a date YYYY-MM-DD/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('fecr validate, offline', () => {
  it('judges a USD body with tipoCambio "auto" with a placeholder rate and a warning; a missing one stays a finding', async () => {
    const home = tempDir('fecr-tc-v-');
    const env = { HOME: home };
    try {
      writeFileSync(join(home, 'auto.json'), JSON.stringify(usdBody(901, '2026-11-20T09:15:00-06:00', 'auto')));
      writeFileSync(join(home, 'missing.json'), JSON.stringify(usdBody(902, '2026-11-20T09:15:00-06:00')));
      const auto = await runCli(['validate', 'auto.json'], { cwd: home, env, now: () => new Date('2026-11-20T18:00:00Z') });
      expect(auto.stderr).toContain('warning: resumenFactura.codigoTipoMoneda.tipoCambio: "auto": judged here with a placeholder rate of 1');
      expect(auto.code).toBe(0);
      const missing = await runCli(['validate', 'missing.json'], { cwd: home, env, now: () => new Date('2026-11-20T18:00:00Z') });
      expect(missing.code).toBe(1);
      expect(missing.stdout).toContain('resumenFactura.codigoTipoMoneda.tipoCambio: is required for USD (the BCCR reference selling rate)');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 30_000);
});
