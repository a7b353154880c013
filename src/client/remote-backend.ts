/**
 * The Backend over a hosted fecr's client API (SERVICE-SPEC "Client API" plus the two additive endpoints of
 * src/server/api-extra.ts). HTTP answers map onto BackendError codes: 400/413 → invalid (with the body's
 * `details` as findings), 401 → auth ("session expired" past the token's own exp, else "session revoked"),
 * 404 → null where the interface allows it, else not_found; 429, 5xx and transport failures → unavailable, after
 * a few retries (see `retry`): of 502/503/504 and of a reset connection for the calls that are idempotent, and, when
 * asked (a batch), of a refused connection for any call.
 */
import { randomUUID } from 'node:crypto';
import { parseDetalleMensaje } from '../core/xml/detalle-mensaje.js';
import type { Finding } from '../core/model.js';
import {
  BackendError,
  type Backend,
  type CabysEntry,
  type DocumentQuery,
  type DocumentStatus,
  type ExoneracionSummary,
  type FileType,
  type IssuerDetails,
  type IssuerSummary,
  type MailStatus,
  type TaxpayerSummary,
  type TipoCambioInfo,
  type ArchiveRequest,
  type SubmitOptions,
  type SubmitOutcome,
} from './backend.js';
import { HttpClient, NetworkError, type HttpResponse } from './http-client.js';
import { RemoteRecibidos } from './recibidos.js';
import { RemoteReports } from './reports-backends.js';
import type { ArchiveExportResult } from '../service/archive.js';
import { RemoteContingency } from './contingency-backends.js';
import { FINAL_STATES, HELD_STATES } from '../core/lifecycle.js';

/** The one line shown for a token past its own expiry (`exp`) that the service no longer accepts. */
export const SESSION_EXPIRED = 'session expired: run fecr login';
/** The one line shown for a token the service refuses before its own expiry: revoked (logout, the operator's `fecr tokens revoke`, a disabled account). */
export const SESSION_REVOKED = 'session revoked: run fecr login';

/**
 * Whether a token is past its own `exp` claim at `nowMs`: true or false, or null when the token cannot be read
 * (not a JWT) and nothing can be said. A readable token without `exp` never expires.
 */
export function tokenExpiredAt(token: string, nowMs: number): boolean | null {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    if (!payload || typeof payload !== 'object') return null;
    return typeof payload.exp === 'number' ? payload.exp * 1000 <= nowMs : false;
  } catch {
    return null;
  }
}

export interface RemoteBackendOptions {
  /** The client API's URL (profile `baseUrl`). */
  baseUrl: string;
  /** The bearer token. */
  token: string;
  /**
   * Whether the token is past its own expiry now (the CLI passes its session's `exp` and clock). A 401/403 then
   * reads SESSION_EXPIRED, otherwise SESSION_REVOKED. Default: the token's `exp` claim against the clock `now`
   * (a token that is not a JWT: SESSION_EXPIRED).
   */
  tokenExpired?: () => boolean;
  /** A shared client; one is made (and closed by `close()`) when omitted. */
  http?: HttpClient;
  /** Clock (epoch ms) and sleep, injectable for tests of the polling. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Polling of waitForVerdict: first interval, growth factor, ceiling (default 250 ms × 1.5 up to 2 s). */
  poll?: { initialMs?: number; factor?: number; maxMs?: number };
  /**
   * Retries of a request the service could not serve for a passing reason, after Retry-After (at most `maxMs`) or a
   * growing pause (from `baseMs`, doubling, ±25 %, at most `maxMs`), `attempts` times at most. Default 5 retries from
   * 250 ms up to 4 s (≈ 8 s in all).
   *  - 502/503/504 (its database connection dropped, its disk is full, it is restarting, a proxy in front of it) and
   *    a connection reset mid-request: for the idempotent calls, every one but those of NOT_IDEMPOTENT. A submission
   *    is idempotent: each carries one Idempotency-Key, the same for its retries (issue 36: the same key and body answer
   *    the first result, a body without numeroReferencia included), and the service keeps one document per issuer,
   *    kind, sucursal, terminal and numeroReferencia (service/documents.ts; a concurrent duplicate meets the unique
   *    index and gets it too), so a POST repeated after a lost answer creates nothing.
   *  - `refused`: a refused connection too, for any call (nothing was sent). Off by default, so that a verb says at
   *    once that the service is down; a batch turns it on (client/select.ts BULK_RETRY) to ride out a restart.
   */
  retry?: { attempts?: number; baseMs?: number; maxMs?: number; refused?: boolean };
}

/** Transport failures after which the request may have reached the service: the connection dropped mid-request. */
const DROPPED = /ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED|other side closed/;
/** The connection was refused: the request never left (the service is down or restarting). */
const REFUSED = /ECONNREFUSED/;
/** Answers of a service that could not serve the request for a passing reason. */
const PASSING: ReadonlySet<number> = new Set([502, 503, 504]);

/**
 * Client-API calls that must not be repeated once they may have reached the service: a mail would go out twice; a
 * webhook secret made by the first call would be lost (the second answers none). Repeated only when nothing was
 * sent (a refused connection) or the service said so (503: nothing was done).
 */
const NOT_IDEMPOTENT: ReadonlySet<string> = new Set(['/api/enviar/correo', '/api/configurar/webhook', '/api/documentos/anular', '/api/documentos/sustituir', '/api/documentos/pago']);

/** Where a wait ends: decided, or held until the user acts (the issuer's credentials refused: credenciales_invalidas). */
const DECIDED: ReadonlySet<string> = new Set([...FINAL_STATES, ...HELD_STATES]);

/** A transport failure that outlasted the retries: its message says how many and for how long. */
export class RetriedNetworkError extends NetworkError {
  constructor(
    last: NetworkError,
    readonly retries: number,
    elapsedMs: number,
  ) {
    super(last.url, `${last.reason}; still after ${retries} ${retries === 1 ? 'retry' : 'retries'} over ${Math.round(elapsedMs / 1000)} s`, { cause: last });
    this.name = 'RetriedNetworkError';
  }
}

interface ErrorBody {
  error?: unknown;
  message?: unknown;
  details?: unknown;
}

function findingsOf(body: ErrorBody | undefined): Finding[] {
  if (!body || !Array.isArray(body.details)) return [];
  return body.details
    .filter((d): d is { path: unknown; message: unknown } => typeof d === 'object' && d !== null)
    .map((d) => ({ path: String(d.path ?? ''), message: String(d.message ?? '') }));
}

export class RemoteBackend implements Backend {
  readonly mode = 'remote' as const;
  private readonly base: string;
  private readonly http: HttpClient;
  private readonly ownsHttp: boolean;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly poll: Required<NonNullable<RemoteBackendOptions['poll']>>;

  constructor(private readonly opts: RemoteBackendOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.http = opts.http ?? new HttpClient();
    this.ownsHttp = !opts.http;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.poll = { initialMs: opts.poll?.initialMs ?? 250, factor: opts.poll?.factor ?? 1.5, maxMs: opts.poll?.maxMs ?? 2000 };
    this.retry = { attempts: opts.retry?.attempts ?? 5, baseMs: opts.retry?.baseMs ?? 250, maxMs: opts.retry?.maxMs ?? 4000, refused: opts.retry?.refused ?? false };
  }

  private readonly retry: Required<NonNullable<RemoteBackendOptions['retry']>>;

  /** For a refused token: past its own expiry (true), not (false: revoked), or unknown (null). */
  private tokenExpired(): boolean | null {
    return this.opts.tokenExpired ? this.opts.tokenExpired() : tokenExpiredAt(this.opts.token, this.now());
  }

  /**
   * POSTs, sending again while the answer is a passing failure (see `retry`); the last answer or error stands (a
   * transport error names the retries made: `RetriedNetworkError`).
   */
  private async postWithRetry(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpResponse> {
    const idempotent = !NOT_IDEMPOTENT.has(path);
    const started = this.now();
    for (let attempt = 0; ; attempt++) {
      let res: HttpResponse | undefined;
      try {
        res = await this.http.postJson(`${this.base}${path}`, body, { token: this.opts.token, ...(headers ? { headers } : {}) });
      } catch (e) {
        if (!(e instanceof NetworkError)) throw e;
        const again = (this.retry.refused && REFUSED.test(e.reason)) || (idempotent && DROPPED.test(e.reason));
        if (!again || attempt >= this.retry.attempts) throw attempt > 0 ? new RetriedNetworkError(e, attempt, this.now() - started) : e;
      }
      if (res && !(PASSING.has(res.status) && (idempotent || res.status === 503))) return res;
      if (res && attempt >= this.retry.attempts) return res;
      const after = Number(res?.headers['retry-after']);
      const pause = Number.isFinite(after) && after >= 0 ? after * 1000 : this.retry.baseMs * 2 ** attempt * (0.75 + Math.random() / 2);
      await this.sleep(Math.min(this.retry.maxMs, pause));
    }
  }

  /** POSTs to a client-API path; returns the success body, or null for a 404 when `nullOn404`. */
  private async call<T>(path: string, body: unknown, nullOn404: true): Promise<T | null>;
  private async call<T>(path: string, body: unknown, nullOn404?: false): Promise<T>;
  private async call<T>(path: string, body: unknown, nullOn404 = false): Promise<T | null> {
    return this.answer<T>(path, await this.post(path, body), nullOn404);
  }

  /** POSTs with the retries; a transport failure that outlasts them is `unavailable`. */
  private async post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpResponse> {
    try {
      return await this.postWithRetry(path, body, headers);
    } catch (e) {
      if (e instanceof NetworkError) throw new BackendError('unavailable', e.message);
      throw e;
    }
  }

  /** The success body of an answer, or null for a 404 when `nullOn404`; any other failure as a BackendError. */
  private answer<T>(path: string, res: HttpResponse, nullOn404: boolean): T | null {
    const json = res.json as (ErrorBody & Record<string, unknown>) | undefined;
    if (res.status >= 200 && res.status < 300) {
      if (!json || typeof json !== 'object') throw new BackendError('unavailable', `${path}: the service answered ${res.status} without a JSON body`);
      return json as T;
    }
    if (res.status === 404 && nullOn404) return null;
    return this.failure(path, res);
  }

  /** A client-API answer that is not a success, as the BackendError the CLI words. */
  private failure(path: string, res: HttpResponse): never {
    const json = res.json as (ErrorBody & Record<string, unknown>) | undefined;
    const message = typeof json?.message === 'string' ? json.message : `HTTP ${res.status}`;
    switch (res.status) {
      case 400:
      case 413:
      case 422:
        throw new BackendError('invalid', message, findingsOf(json));
      case 401:
      case 403:
        throw new BackendError('auth', this.tokenExpired() === false ? SESSION_REVOKED : SESSION_EXPIRED);
      case 404:
        throw new BackendError('not_found', message);
      case 409:
        // The Idempotency-Key used with another body (issue 36): the service's sentence names the key.
        throw new BackendError('invalid', message, findingsOf(json));
      case 429: {
        const after = res.headers['retry-after'];
        throw new BackendError('unavailable', `${message}${after ? ` (retry after ${String(after)} s)` : ''}`);
      }
      default:
        throw new BackendError(res.status >= 500 ? 'unavailable' : 'invalid', `${path}: the service answered ${res.status} (${message})`, findingsOf(json));
    }
  }

  /** The buyer's side over /api/recibidos… (src/server/api-recibidos.ts). */
  recibidos(): RemoteRecibidos {
    return new RemoteRecibidos(<T>(path: string, body: unknown, nullOn404?: boolean) => (nullOn404 ? this.call<T>(path, body, true) : this.call<T>(path, body)), this.sleep);
  }

  corrections = (): import('./corrections.js').CorrectionsApi => { const l = async () => new (await import('./corrections-backends.js')).RemoteCorrections(<T>(p: string, b: unknown, n?: boolean) => (n ? this.call<T>(p, b, true) : this.call<T>(p, b)) as Promise<T>); return { annul: async (c, o) => (await l()).annul(c, o), replace: async (c, b, o) => (await l()).replace(c, b, o), payment: async (c, p) => (await l()).payment(c, p), links: async (c) => (await l()).links(c) }; }; // issue 30: /api/documentos/… (server/api-documentos.ts)
  /** The accountant's reports over /api/reportes/… (src/server/api-reportes.ts). */
  reports(): RemoteReports {
    return new RemoteReports(<T>(path: string, body: unknown) => this.call<T>(path, body));
  }
  contingency = (): RemoteContingency => new RemoteContingency(<T>(path: string, body: unknown) => this.call<T>(path, body)); // /api/contingencia/… (issue 30)

  /** The archive of a period, streamed from POST /api/archivo/exportar (src/server/api-archivo.ts) into `out`. */
  async archive(out: NodeJS.WritableStream, opts: ArchiveRequest): Promise<ArchiveExportResult> {
    const path = '/api/archivo/exportar';
    let res;
    try {
      res = await this.http.postJsonStreaming(`${this.base}${path}`, { desde: opts.since, hasta: opts.until, ...(opts.emisor !== undefined ? { emisor: opts.emisor } : {}), pdf: opts.pdf }, { token: this.opts.token });
    } catch (e) {
      if (e instanceof NetworkError) throw new BackendError('unavailable', e.message);
      throw e;
    }
    if (res.status !== 200) return this.failure(path, await res.readAll());
    return (await import('./archive-receive.js')).receiveArchive(res.body, out, opts.endOutput ?? true);
  }

  async tipoCambio(fecha: string, moneda = 'USD'): Promise<TipoCambioInfo> {
    return (await this.call<{ data: TipoCambioInfo }>('/api/consultar/tipo-cambio', { fecha, moneda })).data;
  }

  async registerIssuer(record: unknown): Promise<void> {
    await this.call('/api/enviar/emisor', record);
  }

  async updateIssuer(record: unknown): Promise<void> {
    await this.call('/api/actualizar/emisor', record);
  }

  async getIssuer(identificacion: string): Promise<IssuerSummary | null> {
    const r = await this.call<{ data: IssuerSummary }>('/api/consultar/emisor', { identificacion }, true);
    return r?.data ?? null;
  }

  async listIssuers(identificacion?: string): Promise<IssuerDetails[]> {
    const r = await this.call<{ data: IssuerDetails[] }>('/api/consultar/emisores', identificacion === undefined ? {} : { identificacion });
    return r.data;
  }

  /**
   * POST /api/enviar/items with one Idempotency-Key (issue 36): the caller's (`fecr send`'s key of a body, a batch
   * row's submission key), else one made for this call; its retries send the same, so a lost answer issues nothing twice.
   * With a key the service numbers a body without numeroReferencia.
   */
  async submit(body: unknown, opts: SubmitOptions = {}): Promise<SubmitOutcome> {
    const key = opts.idempotencyKey ?? opts.submissionKey ?? `fecr-${randomUUID()}`;
    // --force: the service signs even what Hacienda is known to reject (`?forzar=1`, server/api-app.ts).
    const path = opts.force ? '/api/enviar/items?forzar=1' : '/api/enviar/items';
    const res = await this.post(path, body, { 'idempotency-key': key });
    const r = this.answer<{ clave: string }>(path, res, false)!;
    if (typeof r.clave !== 'string') throw new BackendError('unavailable', '/api/enviar/items: the answer has no clave');
    const unnumbered = typeof body === 'object' && body !== null && (body as { numeroReferencia?: unknown }).numeroReferencia === undefined;
    return {
      clave: r.clave,
      ...(String(res.headers['idempotent-replayed'] ?? '') === 'true' ? { alreadySent: true } : {}),
      // The consecutivo's last 10 digits (the clave's 32nd to 41st characters) are the number the service took.
      ...(unnumbered ? { assigned: Number(r.clave.slice(31, 41)) } : {}),
    };
  }

  async status(clave: string): Promise<DocumentStatus | null> {
    const r = await this.call<{ data: DocumentStatus }>('/api/consultar/estado', { claveHacienda: clave }, true);
    return r?.data ? withErrores(r.data) : null;
  }

  async waitForVerdict(clave: string, opts: { timeoutMs: number; onProgress?: (s: DocumentStatus) => void }): Promise<DocumentStatus> {
    const deadline = this.now() + opts.timeoutMs;
    let interval = this.poll.initialMs;
    for (;;) {
      const s = await this.status(clave);
      if (!s) throw new BackendError('not_found', `no document with clave ${clave}`);
      opts.onProgress?.(s);
      const left = deadline - this.now();
      if (DECIDED.has(s.estado) || left <= 0) return s;
      await this.sleep(Math.min(interval, left));
      interval = Math.min(interval * this.poll.factor, this.poll.maxMs);
    }
  }

  async file(clave: string, type: FileType): Promise<Buffer | null> {
    const r = await this.call<{ data: { encodedFile: string } }>('/api/consultar/archivo', { claveHacienda: clave, fileType: type }, true);
    return r ? Buffer.from(r.data.encodedFile, 'base64') : null;
  }

  async listDocuments(query: DocumentQuery): Promise<DocumentStatus[]> {
    const body: Record<string, unknown> = {};
    if (query.estado !== undefined) body.estado = query.estado;
    if (query.since !== undefined) body.desde = query.since;
    if (query.limit !== undefined) body.limite = query.limit;
    if (query.emisor !== undefined) body.emisor = query.emisor;
    const r = await this.call<{ data: DocumentStatus[] }>('/api/consultar/documentos', body);
    // A service from before `emisor` ignores it: the clave names the issuer (its 12 digits after country and date).
    const mine = (d: DocumentStatus) => query.emisor === undefined || d.clave.slice(9, 21) === query.emisor.padStart(12, '0');
    return r.data.filter(mine).map(withErrores);
  }

  async cabys(text: string, opts: { impuesto?: boolean } = {}): Promise<CabysEntry[]> {
    const r = await this.call<{ data: CabysEntry[] }>('/api/hacienda/cabys', { name: text, ...(opts.impuesto ? { impuesto: true } : {}) });
    return r.data;
  }

  async taxpayer(identificacion: string, opts: { actividades?: boolean; detalle?: boolean } = {}): Promise<TaxpayerSummary | null> {
    const r = await this.call<{ data: TaxpayerSummary }>(
      '/api/hacienda/identificacion',
      { identificacion, ...(opts.actividades ? { actividades: true } : {}), ...(opts.detalle ? { detalle: true } : {}) },
      true,
    );
    return r?.data ?? null;
  }

  async exoneracion(numero: string): Promise<ExoneracionSummary | null> {
    const r = await this.call<{ data: ExoneracionSummary }>('/api/hacienda/exoneracion', { exoneracion: numero }, true);
    return r?.data ?? null;
  }

  async emailDocument(clave: string, to?: string[]): Promise<MailStatus> {
    const r = await this.call<{ data: MailStatus }>('/api/enviar/correo', { claveHacienda: clave, ...(to && to.length > 0 ? { correos: to } : {}) }, true);
    if (!r) throw new BackendError('not_found', `no document with clave ${clave}`);
    return r.data;
  }

  async webhookUrl(): Promise<string | null> {
    const r = await this.call<{ data: { url: string | null } }>('/api/consultar/webhook', {});
    return r.data.url ?? null;
  }

  async setWebhookUrl(url: string | null): Promise<{ secret: string | null }> {
    const r = await this.call<{ data: { secret: string | null } }>('/api/configurar/webhook', { url });
    return { secret: r.data.secret ?? null };
  }

  async keepWorking(): Promise<void> {
    // The hosted service runs its own worker.
  }

  async deliverQueuedMail(): Promise<number> {
    // The hosted service mails.
    return 0;
  }

  async close(): Promise<void> {
    if (this.ownsHttp) await this.http.close();
  }
}

/** A service that predates `errores` (fecr's extension) sends detalleMensaje alone: its list read here, the same way. */
function withErrores(s: DocumentStatus): DocumentStatus {
  return Array.isArray(s.errores) ? s : { ...s, errores: parseDetalleMensaje(s.detalleMensaje, { aceptado: s.estado === 'aceptado' }) };
}
