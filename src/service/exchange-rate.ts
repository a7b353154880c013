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
 */
import { HaciendaError } from '../hacienda/index.js';
import { crDateTimeOr } from '../core/input/to-model.js';
import { cachedRate, storeRate, type ExchangeRate } from '../store/exchange-rates.js';
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

/** Why a rate could not be had (no network, Hacienda down, unknown day, unsupported currency). */
export class RateUnavailableError extends Error {}

/** The selling rate of `moneda` for a Costa Rica day `YYYY-MM-DD`: from the cache, else from Hacienda (then cached). */
export async function tipoCambioFor(ctx: ServiceContext, moneda: string, fecha: string): Promise<ResolvedRate> {
  if (!(AUTO_CURRENCIES as readonly string[]).includes(moneda)) throw new RateUnavailableError(`fecr takes rates for ${AUTO_CURRENCIES.join(', ')} only`);
  const hit = await cachedRate(ctx.store.db, moneda, fecha);
  if (hit) return { moneda, fecha, venta: hit.venta, fuente: hit.fuente, cached: true };
  let got;
  try {
    got = moneda === 'EUR' ? await queryClientFor(ctx).getTipoCambioEuro(fecha) : await queryClientFor(ctx).getTipoCambio(fecha);
  } catch (e) {
    if (e instanceof HaciendaError) throw new RateUnavailableError(`Hacienda's indicator API did not answer (${e.message})`);
    throw e;
  }
  if (!got) throw new RateUnavailableError(moneda === 'EUR' ? `Hacienda's indicator API gives the euro for today only, in business hours (no rate for ${fecha})` : `Hacienda's indicator API has no rate for ${fecha}`);
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
