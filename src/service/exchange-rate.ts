/**
 * `tipoCambio: "auto"` (issue 29). A foreign-currency body that leaves `tipoCambio` out or sets it to `"auto"` gets
 * the BCCR reference selling rate of its Costa Rica day (the day of fechaEmision) from Hacienda's public indicator
 * API (NOTES §5, `/indicadores/tc/dolar`; the emulator in env local). Resolved here, on the raw body, before it is
 * parsed: the rate is then an ordinary `tipoCambio` for the schema, the totals and the XML. Both the local mode and
 * the hosted API do it (a fecr extension of the spec's body). Rates are cached per day in the store
 * (`exchange_rates`, with the URL each came from), so one request a day at most.
 *
 * USD and EUR. The euro's route (`/indicadores/tc/euro`, shape in hacienda/client/queries.ts) gives today's rate
 * only, with no history: a EUR body dated another day (or after business hours, when the route leaves `colones` out)
 * still needs its tipoCambio, and the finding says why. Any other currency needs its tipoCambio. When the rate cannot be had (no
 * network, Hacienda down, a day it does not know), the body is left as it is and the schema's finding stays:
 * "is required for USD (the BCCR reference selling rate)", with one line saying why.
 *
 * A rate outside PLAUSIBLE_RATES (issue 37, point 9: 0, 10^38 or a million digits were cached for the day for good,
 * and that day's documents refused) is refused as one that cannot be had, and never cached; a cached one outside
 * the range (stored before this check) is dropped and asked again.
 */
import { HaciendaError } from '../hacienda/index.js';
import { crDateTimeOr } from '../core/input/to-model.js';
import { cachedRate, forgetRate, storeRate, type ExchangeRate } from '../store/exchange-rates.js';
import type { ServiceContext } from './context.js';
import { queryClientFor } from './lookups.js';
import { ServiceError } from './service-error.js';

/** Currencies fecr can take a rate for. */
export const AUTO_CURRENCIES = ['USD', 'EUR'] as const;

export interface ResolvedRate {
  moneda: string;
  /** YYYY-MM-DD (Costa Rica). */
  fecha: string;
  venta: string;
  /** The indicator URL the rate came from. */
  fuente: string;
  /** True when it came from the store's cache (no request). */
  cached: boolean;
}

/**
 * Colones per unit accepted from the indicator API, by currency. Not a rule of Hacienda's but a sanity bound on what
 * the API answers, wide around the BCCR's history of its reference selling rate:
 * - USD: the highest since the series began on 1983-01-01 was ¢646.90 (2022-02-01, "maximum peak during the last 40
 *   years", qcostarica.com/dollar-exchange-hits-record-sell-at-more-than-¢646, from BCCR data), ~¢700 within the first
 *   half of 2022 (qcostarica.com, Colegio de Ciencias Económicas, 2022-12-27); the lowest of the last 20 years ¢487.69
 *   (2026-02-13, teletica.com "precio regresa a valores de hace 20 años", from the BCCR). 250–2 000: about half the
 *   low and three times the high.
 * - EUR: the USD bounds times the euro's extremes in dollars since 1999 (ECB reference rates: 0.8252 on 2000-10-26,
 *   1.5990 on 2008-07-15): 200–3 200 (seen: ¢683.42 in 2022-08, ¢545.30 in 2024-11, infobae.com from the BCCR).
 * A real rate beyond them is not taken "auto": the body then needs its tipoCambio, as when Hacienda is down.
 */
export const PLAUSIBLE_RATES: Record<(typeof AUTO_CURRENCIES)[number], { min: number; max: number }> = {
  USD: { min: 250, max: 2_000 },
  EUR: { min: 200, max: 3_200 },
};

/** Why `venta` is not a plausible rate of `moneda` (PLAUSIBLE_RATES), or undefined when it is. */
export function implausibleRate(moneda: string, venta: string): string | undefined {
  const range = PLAUSIBLE_RATES[moneda as keyof typeof PLAUSIBLE_RATES];
  if (!range) return undefined;
  const shown = venta.length > 24 ? `${venta.slice(0, 24)}… (${venta.length} characters)` : venta;
  // Read only when short: a million digits are refused by their length, never parsed.
  const value = /^\d{1,7}(\.\d{1,12})?$/.test(venta) ? Number(venta) : NaN;
  if (Number.isFinite(value) && value >= range.min && value <= range.max) return undefined;
  return `Hacienda's indicator API gave ${shown} colones per ${moneda}, outside ${range.min}–${range.max} (not used)`;
}

/** Why a rate could not be had (no network, Hacienda down, unknown day, unsupported currency). */
export class RateUnavailableError extends Error {}

/** The selling rate of `moneda` for a Costa Rica day `YYYY-MM-DD`: from the cache, else from Hacienda (then cached). */
export async function tipoCambioFor(ctx: ServiceContext, moneda: string, fecha: string): Promise<ResolvedRate> {
  if (!(AUTO_CURRENCIES as readonly string[]).includes(moneda)) throw new RateUnavailableError(`fecr takes rates for ${AUTO_CURRENCIES.join(', ')} only`);
  const hit = await cachedRate(ctx.store.db, moneda, fecha);
  if (hit && !implausibleRate(moneda, hit.venta)) return { moneda, fecha, venta: hit.venta, fuente: hit.fuente, cached: true };
  if (hit) await forgetRate(ctx.store.db, moneda, fecha); // cached before the range was checked
  let got;
  try {
    got = moneda === 'EUR' ? await queryClientFor(ctx).getTipoCambioEuro(fecha) : await queryClientFor(ctx).getTipoCambio(fecha);
  } catch (e) {
    if (e instanceof HaciendaError) throw new RateUnavailableError(`Hacienda's indicator API did not answer (${e.message})`);
    throw e;
  }
  if (!got) throw new RateUnavailableError(moneda === 'EUR' ? `Hacienda's indicator API gives the euro for today only, in business hours (no rate for ${fecha})` : `Hacienda's indicator API has no rate for ${fecha}`);
  const implausible = implausibleRate(moneda, got.venta);
  if (implausible) throw new RateUnavailableError(implausible);
  const row: ExchangeRate = { moneda, fecha, venta: got.venta, fuente: got.url, fetched_at: ctx.now() };
  await storeRate(ctx.store.db, row);
  const kept = (await cachedRate(ctx.store.db, moneda, fecha)) ?? row;
  return { moneda, fecha, venta: kept.venta, fuente: kept.fuente, cached: false };
}

/** tipoCambioFor for a verb (`fecr tipo-cambio`): a rate that cannot be had is a 503 with why. */
export async function tipoCambioOrError(ctx: ServiceContext, moneda: string, fecha: string): Promise<ResolvedRate> {
  try {
    return await tipoCambioFor(ctx, moneda, fecha);
  } catch (e) {
    if (e instanceof RateUnavailableError) throw new ServiceError(503, 'service_unavailable', `no exchange rate for ${fecha}: ${e.message}`);
    throw e;
  }
}

/**
 * The body with its `"auto"` or missing foreign-currency tipoCambio filled in, and the rate used; the body as it is
 * when there is nothing to fill or the rate cannot be had (then `unavailable` says why, and the schema's finding
 * will name the field).
 */
export async function withAutoTipoCambio(ctx: ServiceContext, body: unknown): Promise<{ body: unknown; rate?: ResolvedRate; unavailable?: string }> {
  const moneda = pathOf(body, ['resumenFactura', 'codigoTipoMoneda']);
  if (!isRecord(moneda) || typeof moneda.codigoMoneda !== 'string') return { body };
  const codigo = moneda.codigoMoneda.trim();
  const tc = moneda.tipoCambio;
  const wantsAuto = tc === undefined || (typeof tc === 'string' && tc.trim().toLowerCase() === 'auto');
  if (!wantsAuto || codigo === 'CRC' || !/^[A-Z]{3}$/.test(codigo)) return { body };
  const fechaEmision = isRecord(body) && typeof body.fechaEmision === 'string' ? body.fechaEmision : undefined;
  const crText = fechaEmision === undefined ? crDateTimeOr(new Date(ctx.now()).toISOString()) : crDateTimeOr(fechaEmision);
  const fecha = crText.slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(fecha)) return { body };
  try {
    const rate = await tipoCambioFor(ctx, codigo, fecha);
    const b = body as Record<string, unknown>;
    const resumen = b.resumenFactura as Record<string, unknown>;
    return { body: { ...b, resumenFactura: { ...resumen, codigoTipoMoneda: { ...moneda, tipoCambio: rate.venta } } }, rate };
  } catch (e) {
    if (e instanceof RateUnavailableError) return { body, unavailable: e.message };
    throw e;
  }
}

function pathOf(v: unknown, path: string[]): unknown {
  let cur = v;
  for (const k of path) {
    if (!isRecord(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
