/**
 * Public query API (https://api.hacienda.go.cr, no auth; NOTES §5): taxpayers (/fe/ae), CABYS (/fe/cabys),
 * exoneration documents (/fe/ex). Typed, validated, cached in memory (CABYS 24 h, taxpayers and
 * exoneraciones 1 h) on an injectable clock. A 404 (or an empty CABYS array) is `null`, a 400 is
 * InvalidQueryError.
 */
import { z } from 'zod';
import { actividadFromInput } from '../../core/catalog/actividades.js';
import { BadResponseError, HaciendaHttpError, InvalidQueryError, RateLimitedError, ServiceUnavailableError } from './errors.js';
import { HttpClient, NetworkError, jsonBody, type HttpResponse } from './http.js';
import { backoffDelay, retryPolicy, serverWaitMs, timing, type RetryPolicy, type Timing } from './retry.js';
import { TtlCache } from './ttl-cache.js';
import { QUERY_BASE_URL } from './endpoints.js';

const codeString = z.union([z.string(), z.number()]).transform((v) => String(v));

/** An activity code as Hacienda writes it; a number (the integers of before TRIBU-CR) is read as core reads one. */
const actividadCode = z.union([z.string(), z.number()]).transform((v) => actividadFromInput(v));
const ciiu3Item = z.looseObject({ codigo: actividadCode, descripcion: z.string().default('') });

const actividadSchema = z.looseObject({
  estado: z.string(),
  tipo: z.string(),
  codigo: actividadCode,
  descripcion: z.string(),
  /** The old code(s) of the activity (since TRIBU-CR a list; read leniently: absent, one object or a list). */
  ciiu3: z
    .union([z.array(ciiu3Item), ciiu3Item, z.null()])
    .optional()
    .transform((v) => (v == null ? undefined : Array.isArray(v) ? v : [v])),
});

const contribuyenteSchema = z.looseObject({
  nombre: z.string(),
  tipoIdentificacion: z.string(),
  regimen: z.looseObject({ codigo: z.coerce.number(), descripcion: z.string().default('') }),
  situacion: z.looseObject({
    moroso: z.string(),
    omiso: z.string(),
    estado: z.string(),
    administracionTributaria: z.string().default(''),
    mensaje: z.string().optional(),
  }),
  actividades: z.array(actividadSchema).default([]),
});

const cabysItemSchema = z.looseObject({
  codigo: codeString,
  descripcion: z.string(),
  categorias: z.array(z.string()).default([]),
  impuesto: z.coerce.number(),
  uri: z.string().optional(),
  estado: z.string().optional(),
});

const cabysSearchSchema = z.looseObject({
  total: z.coerce.number(),
  cantidad: z.coerce.number(),
  cabys: z.array(cabysItemSchema),
});

const exoneracionSchema = z.looseObject({
  numeroDocumento: z.string(),
  identificacion: codeString,
  codigoProyectoCFIA: z.union([z.string(), z.number()]).nullable().optional(),
  porcentajeExoneracion: z.coerce.number(),
  autorizacion: z.union([z.string(), z.number()]).nullable().optional(),
  fechaEmision: z.string(),
  fechaVencimiento: z.string(),
  ano: z.union([z.string(), z.number()]).nullable().optional(),
  cabys: z.array(codeString).default([]),
  tipoAutorizacion: z.string().optional(),
  tipoDocumento: z.looseObject({ codigo: z.string(), descripcion: z.string() }),
  CodigoInstitucion: z.string().optional(),
  nombreInstitucion: z.string().optional(),
  poseeCabys: z.boolean().optional(),
});

const rateNumber = z.union([z.number(), z.string()]).transform((v) => String(v).trim()).pipe(z.string().regex(/^\d+(\.\d+)?$/));
const tcHoySchema = z.looseObject({
  venta: z.looseObject({ fecha: z.string(), valor: rateNumber }),
  compra: z.looseObject({ fecha: z.string(), valor: rateNumber }).optional(),
});
// /indicadores/tc/euro: `{fecha: "YYYY-MM-DD", dolares, colones}`, today only; `colones` is absent after business
// hours (shape from public clients of the route: dsanchezcr/ColonesExchangeRate's README and its EuroExchangeRate type,
// a Ruby provider's test fixture {"fecha":"2026-03-13","dolares":1.1485,"colones":543.1}; several peers read `colones`).
const tcEuroSchema = z.looseObject({ fecha: z.string(), dolares: rateNumber.optional(), colones: rateNumber.nullable().optional() });
const tcHistoricoSchema = z.array(z.looseObject({ fecha: z.string(), venta: rateNumber, compra: rateNumber.optional() }));

/** A BCCR reference selling rate (colones per unit) of one Costa Rica day, and the URL it came from. */
export interface TipoCambioIndicador {
  fecha: string;
  venta: string;
  url: string;
}

/** /fe/ae answer. `actividades[].codigo` is a string (post TRIBU-CR, CIIU-4 style "6492.0"), `ciiu3` its old code(s). */
export type Contribuyente = z.infer<typeof contribuyenteSchema>;
export type ActividadEconomica = z.infer<typeof actividadSchema>;
/** One CABYS code; `impuesto` is an integer percent (13, 4, 2, 1, 0). */
export type CabysItem = z.infer<typeof cabysItemSchema>;
export type CabysSearchResult = z.infer<typeof cabysSearchSchema>;
/** /fe/ex answer (exoneration authorization). */
export type ExoneracionDocumento = z.infer<typeof exoneracionSchema>;

export interface QueryTtls {
  taxpayerMs: number;
  cabysMs: number;
  exoneracionMs: number;
}

export const DEFAULT_QUERY_TTLS: QueryTtls = { taxpayerMs: 3_600_000, cabysMs: 86_400_000, exoneracionMs: 3_600_000 };

/** `now`, `sleep` and `random` (Timing) may be injected; default the clock, setTimeout and Math.random. */
export interface PublicQueryClientOptions extends Partial<Timing> {
  /** Default https://api.hacienda.go.cr (the emulator's URL in local mode). */
  baseUrl?: string;
  http?: HttpClient;
  ttl?: Partial<QueryTtls>;
  /** Default 3 attempts on transport errors / 5xx / 429. */
  retry?: Partial<RetryPolicy>;
}

export class PublicQueryClient {
  readonly baseUrl: string;
  private readonly http: HttpClient;
  private readonly ownsHttp: boolean;
  private readonly t: Timing;
  private readonly ttl: QueryTtls;
  private readonly retry: RetryPolicy;
  private readonly cache: TtlCache<unknown>;

  constructor(opts: PublicQueryClientOptions = {}) {
    this.baseUrl = (opts.baseUrl ?? QUERY_BASE_URL).replace(/\/+$/, '');
    this.ownsHttp = !opts.http;
    this.http = opts.http ?? new HttpClient();
    this.t = timing(opts);
    this.ttl = { ...DEFAULT_QUERY_TTLS, ...opts.ttl };
    this.retry = retryPolicy(opts.retry, { maxAttempts: 3, baseDelayMs: 300, maxDelayMs: 5_000, maxServerWaitMs: 30_000 });
    this.cache = new TtlCache<unknown>(this.t.now);
  }

  /** Taxpayer by identification (digits, no dashes; físicas without the leading 0). Null when not registered. */
  async getTaxpayer(identificacion: string): Promise<Contribuyente | null> {
    const id = identificacion.replace(/[\s-]/g, '');
    return this.cached(`ae:${id}`, this.ttl.taxpayerMs, async () => {
      const url = `${this.baseUrl}/fe/ae?identificacion=${encodeURIComponent(id)}`;
      const res = await this.get(url);
      if (res.status === 404) return null;
      return parse(url, contribuyenteSchema, res);
    });
  }

  /** CABYS search by words (`top` = max results). */
  async searchCabys(q: string, opts: { top?: number } = {}): Promise<CabysSearchResult> {
    const key = `cabys-q:${q.trim().toLowerCase()}:${opts.top ?? ''}`;
    return this.cached(key, this.ttl.cabysMs, async () => {
      let url = `${this.baseUrl}/fe/cabys?q=${encodeURIComponent(q.trim())}`;
      if (opts.top !== undefined) url += `&top=${opts.top}`;
      const res = await this.get(url);
      if (res.status === 404) return { total: 0, cantidad: 0, cabys: [] };
      return parse(url, cabysSearchSchema, res);
    });
  }

  /** CABYS by its 13-digit code; null when unknown (the API answers an empty array). */
  async getCabys(codigo: string): Promise<CabysItem | null> {
    return this.cached(`cabys-c:${codigo}`, this.ttl.cabysMs, async () => {
      const url = `${this.baseUrl}/fe/cabys?codigo=${encodeURIComponent(codigo)}`;
      const res = await this.get(url);
      if (res.status === 404) return null;
      const arr = parse(url, z.array(cabysItemSchema), res);
      return arr.find((c) => c.codigo === codigo) ?? arr[0] ?? null;
    });
  }

  /** Exoneration document by authorization number (e.g. `AL-00020402-24`); null when unknown. */
  async getExoneracion(autorizacion: string): Promise<ExoneracionDocumento | null> {
    const a = autorizacion.trim();
    return this.cached(`ex:${a.toUpperCase()}`, this.ttl.exoneracionMs, async () => {
      const url = `${this.baseUrl}/fe/ex?autorizacion=${encodeURIComponent(a)}`;
      const res = await this.get(url);
      if (res.status === 404) return null;
      return parse(url, exoneracionSchema, res);
    });
  }

  /**
   * The selling rate of the dollar for a Costa Rica day `YYYY-MM-DD`: `/indicadores/tc/dolar` when it answers for
   * that day (today's rate), else `/indicadores/tc/dolar/historico?d=DAY&h=DAY`. Null when neither has the day.
   * One attempt per URL (a sender waiting on a dead network gets its finding at once); not cached here: the store
   * caches rates per day (service/exchange-rate.ts).
   */
  async getTipoCambio(day: string): Promise<TipoCambioIndicador | null> {
    const once = { ...this.retry, maxAttempts: 1 };
    const hoyUrl = `${this.baseUrl}/indicadores/tc/dolar`;
    const hoy = await this.get(hoyUrl, once);
    if (hoy.status === 200) {
      const h = parse(hoyUrl, tcHoySchema, hoy);
      if (h.venta.fecha.slice(0, 10) === day) return { fecha: day, venta: h.venta.valor, url: hoyUrl };
    }
    const url = `${this.baseUrl}/indicadores/tc/dolar/historico?d=${day}&h=${day}`;
    const res = await this.get(url, once);
    if (res.status === 404) return null;
    const hit = parse(url, tcHistoricoSchema, res).find((r) => r.fecha.slice(0, 10) === day);
    return hit ? { fecha: day, venta: hit.venta, url } : null;
  }

  /**
   * The euro's rate in colones for a Costa Rica day: `/indicadores/tc/euro` gives today's only (no history is
   * published), so null for any other day, and when the route leaves `colones` out (after business hours).
   */
  async getTipoCambioEuro(day: string): Promise<TipoCambioIndicador | null> {
    const url = `${this.baseUrl}/indicadores/tc/euro`;
    const res = await this.get(url, { ...this.retry, maxAttempts: 1 });
    if (res.status !== 200) return null;
    const e = parse(url, tcEuroSchema, res);
    return e.fecha.slice(0, 10) === day && e.colones ? { fecha: day, venta: e.colones, url } : null;
  }

  clearCache(): void {
    this.cache.clear();
  }

  async close(): Promise<void> {
    if (this.ownsHttp) await this.http.close();
  }

  private cached<V>(key: string, ttlMs: number, load: () => Promise<V>): Promise<V> {
    return this.cache.getOrLoad(key, ttlMs, load) as Promise<V>;
  }

  /** GET with retries; returns 200/404 answers, throws on 400 and on persistent failures. */
  private async get(url: string, retry: RetryPolicy = this.retry): Promise<HttpResponse> {
    let problem = '';
    let lastStatus: number | undefined;
    let lastErr: NetworkError | undefined;
    for (let attempt = 1; ; attempt++) {
      let wait: number;
      try {
        const res = await this.http.send(url, { method: 'GET', kind: 'query', headers: { accept: 'application/json' } });
        lastErr = undefined;
        if (res.status === 200 || res.status === 404) return res;
        if (res.status === 400) throw new InvalidQueryError(url, errorDetail(res));
        if (res.status !== 429 && res.status < 500) throw new HaciendaHttpError('GET', url, res.status, errorDetail(res));
        problem = `HTTP ${res.status}`;
        lastStatus = res.status;
        const server = serverWaitMs(res.status, res.headers, this.t.now());
        if (server !== undefined && server > this.retry.maxServerWaitMs) throw new RateLimitedError(url, this.t.now() + server);
        wait = Math.max(server ?? 0, backoffDelay(attempt, this.retry, this.t.random));
      } catch (err) {
        if (!(err instanceof NetworkError)) throw err;
        problem = err.code;
        lastStatus = undefined;
        lastErr = err;
        wait = backoffDelay(attempt, this.retry, this.t.random);
      }
      if (attempt >= retry.maxAttempts) {
        if (lastStatus === 429) throw new RateLimitedError(url);
        throw new ServiceUnavailableError(url, `${problem} after ${attempt} attempts`, { status: lastStatus, cause: lastErr });
      }
      await this.t.sleep(wait);
    }
  }
}

function parse<T>(url: string, schema: z.ZodType<T>, res: HttpResponse): T {
  const body = jsonBody(res);
  if (body === undefined) throw new BadResponseError(url, 'body is not JSON');
  const r = schema.safeParse(body);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new BadResponseError(url, first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'unexpected shape');
  }
  return r.data;
}

function errorDetail(res: HttpResponse): string | undefined {
  const b = jsonBody(res) as Record<string, unknown> | undefined;
  if (b && typeof b === 'object') {
    for (const k of ['detail', 'message', 'mensaje', 'title', 'error']) if (typeof b[k] === 'string') return b[k] as string;
  }
  const t = res.body.toString('utf8').trim();
  return t ? t.slice(0, 200) : undefined;
}
