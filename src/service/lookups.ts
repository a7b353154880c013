/**
 * Hacienda's public queries mapped to the spec's shapes: exoneration document, CABYS search, taxpayer.
 * One PublicQueryClient per service context (its TTL cache is shared by every request), pointed at
 * `ctx.hacienda.endpoints.queryBaseUrl` (the emulator in env local).
 */
import { HaciendaError, InvalidQueryError, PublicQueryClient } from '../hacienda/index.js';
import type { CabysEntry, ExoneracionSummary, TaxpayerSummary } from '../api/contract.js';
import type { ServiceContext } from './context.js';
import { ServiceError } from './service-error.js';

const clients = new WeakMap<ServiceContext, PublicQueryClient>();

/** The context's query client (created on first use). */
export function queryClientFor(ctx: ServiceContext): PublicQueryClient {
  let c = clients.get(ctx);
  if (!c) {
    c = new PublicQueryClient({ baseUrl: ctx.hacienda.endpoints.queryBaseUrl, now: ctx.now });
    clients.set(ctx, c);
  }
  return c;
}

/** Closes the context's query client, if one was created (on shutdown). */
export async function closeLookups(ctx: ServiceContext): Promise<void> {
  const c = clients.get(ctx);
  clients.delete(ctx);
  await c?.close();
}

/** Exoneration document by number (e.g. `AL-00020402-24`); null when Hacienda does not know it. */
export async function lookupExoneracion(ctx: ServiceContext, numeroDocumento: string): Promise<ExoneracionSummary | null> {
  const numero = numeroDocumento.trim();
  if (numero === '') return null;
  const e = await query(ctx, (c) => c.getExoneracion(numero));
  if (!e) return null;
  const vence = parseHaciendaDate(e.fechaVencimiento);
  return {
    numeroDocumento: e.numeroDocumento,
    estado: vence !== null && ctx.now() > vence ? 'vencido' : 'vigente',
    porcentajeExoneracion: e.porcentajeExoneracion,
    fechaVencimiento: e.fechaVencimiento,
  };
}

/**
 * CABYS codes whose description matches a search term (Hacienda's ranking, at most `top`, default 10); with
 * `impuesto`, each with its IVA rate.
 */
export async function searchCabys(ctx: ServiceContext, name: string, opts: { top?: number; impuesto?: boolean } = {}): Promise<CabysEntry[]> {
  const q = name.trim();
  if (q === '') return [];
  const r = await query(ctx, (c) => c.searchCabys(q, opts.top !== undefined ? { top: opts.top } : {}));
  return (r?.cabys ?? []).map((c) => (opts.impuesto ? { codigo: c.codigo, descripcion: c.descripcion, impuesto: c.impuesto } : { codigo: c.codigo, descripcion: c.descripcion }));
}

/**
 * Taxpayer by identification; null when not registered. Dashes, spaces and leading zeros are ignored. With
 * `actividades`, also its active economic activities (what `fecr emisor register` offers as codigoActividad); with
 * `detalle` (`fecr contribuyente`), those and its régimen and situación.
 */
export async function lookupTaxpayer(
  ctx: ServiceContext,
  identificacion: string | number,
  opts: { actividades?: boolean; detalle?: boolean } = {},
): Promise<TaxpayerSummary | null> {
  const id = String(identificacion).replace(/[\s-]/g, '').replace(/^0+(?=\d)/, '');
  if (!/^\d+$/.test(id)) return null;
  const t = await query(ctx, (c) => c.getTaxpayer(id));
  if (!t) return null;
  const found: TaxpayerSummary = { nombre: t.nombre, tipoIdentificacion: t.tipoIdentificacion, identificacion: id };
  if (opts.detalle) {
    found.regimen = { codigo: t.regimen.codigo, descripcion: t.regimen.descripcion };
    const s = t.situacion;
    found.situacion = { estado: s.estado, moroso: s.moroso, omiso: s.omiso, administracionTributaria: s.administracionTributaria };
  }
  if (opts.actividades || opts.detalle) found.actividades = t.actividades
      .filter((a) => a.estado === 'A')
      .map((a) => ({ codigo: a.codigo, descripcion: a.descripcion, ...(a.ciiu3?.length ? { ciiu3: a.ciiu3.map((o) => o.codigo) } : {}) }));
  return found;
}

/**
 * Runs a query: a 400 from Hacienda (malformed number) is "not found"; an unavailable or misbehaving
 * Hacienda is a 503 the client may retry.
 */
async function query<T>(ctx: ServiceContext, run: (c: PublicQueryClient) => Promise<T>): Promise<T | null> {
  try {
    return await run(queryClientFor(ctx));
  } catch (e) {
    if (e instanceof InvalidQueryError) return null;
    if (e instanceof HaciendaError) {
      ctx.logger.warn({ err: { code: e.code, message: e.message } }, 'Hacienda query failed');
      throw new ServiceError(503, 'service_unavailable', 'Hacienda no respondió a la consulta; intente de nuevo más tarde');
    }
    throw e;
  }
}

/** Hacienda's date-times, usually without offset ("2029-03-01T00:00:00"): Costa Rica time (-06:00). */
export function parseHaciendaDate(text: string): number | null {
  const t = text.trim();
  let iso = t;
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) iso = `${t}T23:59:59.999-06:00`;
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(t)) iso = `${t}-06:00`;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}
