/**
 * Client of Hacienda's reception API (NOTES §4.3-4.5): POST /recepcion, GET /recepcion/{clave},
 * GET /comprobantes[/{clave}].
 *
 * Exactly-once rule: after any failure that may have reached Hacienda (connection reset, timeout waiting
 * for the answer, 5xx), the client GETs /recepcion/{clave} before POSTing again; if the document exists it
 * never POSTs it again. A 400 saying the clave "ya fue recibido" is not a failure: the result is
 * `already-received` and the caller polls. Hacienda's queries lag its reception (a GET right after the 202 can
 * answer 404 for a while, NOTES §4.4): with `indexDelayToleranceMs`, a 404 within that long of a POST that may
 * have been processed is asked again (GET, backoff) rather than trusted, so an index delay does not make the
 * client POST a second time. 401 renews the token once and retries; 429/5xx/transport errors
 * back off with jitter, honouring Retry-After / X-Ratelimit-Reset, for a bounded number of attempts.
 * Verdicts (aceptado/rechazado) are data, never exceptions.
 */
import {
  AmbiguousSubmissionError,
  BadResponseError,
  ForbiddenError,
  HaciendaHttpError,
  RateLimitedError,
  ReceptionValidationError,
  ServiceUnavailableError,
  UnauthorizedError,
} from './errors.js';
import { HttpClient, NetworkError, jsonBody, type HttpRequest, type HttpResponse } from './http.js';
import { parseMensajeHaciendaSummary } from './mensaje.js';
import {
  isAlreadyReceivedCause,
  receptionBody,
  type ComprobanteItem,
  type Estado,
  type ListComprobantesParams,
  type ListComprobantesResult,
  type ReceptionClientOptions,
  type ReceptionStatus,
  type SubmitRequest,
  type SubmitResult,
  type WaitOptions,
} from './reception-api.js';
import { backoffDelay, retryPolicy, serverWaitMs, timing, type RetryPolicy, type Timing } from './retry.js';
import { TokenManager, type HaciendaCredentials } from './token-manager.js';

const FINAL: ReadonlySet<string> = new Set(['aceptado', 'rechazado', 'error']);
const ESTADOS: ReadonlySet<string> = new Set(['recibido', 'procesando', 'aceptado', 'rechazado', 'error']);

type Outcome = { kind: 'response'; res: HttpResponse } | { kind: 'network'; err: NetworkError };

export class ReceptionClient {
  readonly endpoints: ReceptionClientOptions['endpoints'];
  readonly tokens: TokenManager;
  private readonly credentials: HaciendaCredentials;
  private readonly http: HttpClient;
  private readonly ownsHttp: boolean;
  private readonly ownsTokens: boolean;
  private readonly t: Timing;
  private readonly retry: RetryPolicy;
  private readonly statusRetry: RetryPolicy;
  private readonly indexDelayToleranceMs: number;

  constructor(opts: ReceptionClientOptions) {
    this.ownsTokens = !opts.tokens;
    this.endpoints = opts.endpoints;
    this.credentials = opts.credentials;
    this.ownsHttp = !opts.http;
    this.http = opts.http ?? new HttpClient();
    this.t = timing(opts);
    this.tokens =
      opts.tokens ??
      new TokenManager({ endpoints: opts.endpoints, http: this.http, now: this.t.now, sleep: this.t.sleep, random: this.t.random });
    this.retry = retryPolicy(opts.retry);
    this.statusRetry = retryPolicy(opts.statusRetry, { maxAttempts: 6, baseDelayMs: 300, maxDelayMs: 10_000, maxServerWaitMs: 120_000 });
    this.indexDelayToleranceMs = Math.max(0, opts.indexDelayToleranceMs ?? 0);
  }

  private url(path: string): string {
    return this.endpoints.receptionBaseUrl + path;
  }

  /** Sends with a bearer token; on 401 renews the token once and resends. Throws on 401-again and 403. */
  private async sendAuthed(url: string, req: Omit<HttpRequest, 'kind'>): Promise<HttpResponse> {
    let token = await this.tokens.getAccessToken(this.credentials);
    for (let renewed = false; ; renewed = true) {
      const res = await this.http.send(url, {
        ...req,
        kind: 'reception',
        headers: { ...req.headers, authorization: `bearer ${token}`, accept: 'application/json' },
      });
      if (res.status === 401) {
        if (renewed) throw new UnauthorizedError(url, res.headers['x-error-cause'] ?? res.headers['www-authenticate']);
        token = await this.tokens.renewAccessToken(this.credentials, token);
        continue;
      }
      if (res.status === 403) throw new ForbiddenError(url, res.headers['x-error-cause']);
      return res;
    }
  }

  private async attempt(url: string, req: Omit<HttpRequest, 'kind'>): Promise<Outcome> {
    try {
      return { kind: 'response', res: await this.sendAuthed(url, req) };
    } catch (err) {
      if (err instanceof NetworkError) return { kind: 'network', err };
      throw err;
    }
  }

  /** POST /recepcion, exactly once as far as Hacienda is concerned. */
  async submit(req: SubmitRequest): Promise<SubmitResult> {
    const body = JSON.stringify(receptionBody(req));
    const statusKey = req.consecutivoReceptor ? `${req.clave}-${req.consecutivoReceptor}` : req.clave;
    const url = this.url('/recepcion');
    let posts = 0;
    let mustCheck = false; // a previous POST may have been processed
    let indexedBy: number | undefined; // until then, a 404 may be Hacienda's index delay after that POST
    let lastProblem = '';
    let lastStatus: number | undefined;
    let lastErr: NetworkError | undefined;
    let rateLimitedUntil: number | undefined;
    const exhausted = () =>
      lastStatus === 429
        ? new RateLimitedError(url, rateLimitedUntil)
        : new ServiceUnavailableError(url, `${lastProblem} after ${posts} attempts; the comprobante was not received`, { status: lastStatus, cause: lastErr });

    for (;;) {
      if (mustCheck) {
        const found = await this.statusAfterAmbiguity(req.clave, statusKey, lastProblem, indexedBy);
        if (found.estado !== 'unknown') return { status: 'received', clave: req.clave, statusKey, confirmedByStatus: found, posts };
        mustCheck = false;
      }
      if (posts >= this.retry.maxAttempts) throw exhausted();
      posts++;
      const out = await this.attempt(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body,
      });
      let wait: number;
      if (out.kind === 'network') {
        lastProblem = out.err.code;
        lastStatus = undefined;
        lastErr = out.err;
        mustCheck = out.err.maybeProcessed;
        indexedBy = mustCheck ? this.indexDeadline() : undefined;
        wait = backoffDelay(posts, this.retry, this.t.random);
      } else {
        const res = out.res;
        if (res.status === 201 || res.status === 202 || res.status === 200) {
          const r: SubmitResult = { status: 'received', clave: req.clave, statusKey, httpStatus: res.status, posts };
          if (res.headers['location']) r.location = res.headers['location'];
          return r;
        }
        if (res.status === 400) {
          const cause = decodeCause(res.headers['x-error-cause']) ?? bodyText(res);
          if (isAlreadyReceivedCause(cause)) {
            return { status: 'already-received', clave: req.clave, statusKey, httpStatus: 400, cause, posts };
          }
          throw new ReceptionValidationError(req.clave, cause, /true/i.test(res.headers['validation-exception'] ?? ''));
        }
        lastStatus = res.status;
        lastErr = undefined;
        lastProblem = `HTTP ${res.status}`;
        const server = serverWaitMs(res.status, res.headers, this.t.now());
        if (res.status === 429) {
          // Throttled before processing: no need to check, just wait as told.
          wait = server ?? backoffDelay(posts, this.retry, this.t.random);
          rateLimitedUntil = this.t.now() + wait;
          if (wait > this.retry.maxServerWaitMs) throw new RateLimitedError(url, rateLimitedUntil);
        } else if (res.status >= 500) {
          mustCheck = true;
          // 503: not handled (no index delay to wait for); 500/502/504: maybe handled behind the gateway.
          indexedBy = res.status === 503 ? undefined : this.indexDeadline();
          wait = Math.max(server ?? 0, backoffDelay(posts, this.retry, this.t.random));
          if (wait > this.retry.maxServerWaitMs) wait = this.retry.maxServerWaitMs;
        } else {
          throw new HaciendaHttpError('POST', url, res.status, decodeCause(res.headers['x-error-cause']) ?? bodyText(res));
        }
      }
      // Out of attempts: stop now, unless the last failure was ambiguous (then the status decides).
      if (posts >= this.retry.maxAttempts && !mustCheck) throw exhausted();
      await this.t.sleep(wait);
    }
  }

  private indexDeadline(): number | undefined {
    return this.indexDelayToleranceMs > 0 ? this.t.now() + this.indexDelayToleranceMs : undefined;
  }

  /**
   * GET the status after an ambiguous POST failure; unknown → safe to POST; unreachable → AmbiguousSubmissionError.
   * Until `indexedBy` (epoch ms), a 404 may be Hacienda's index delay: asked again, 250 ms doubling to 4 s.
   */
  private async statusAfterAmbiguity(clave: string, statusKey: string, problem: string, indexedBy?: number): Promise<ReceptionStatus> {
    try {
      let interval = 250;
      for (;;) {
        const st = await this.getStatus(statusKey);
        const left = indexedBy === undefined ? 0 : indexedBy - this.t.now();
        if (st.estado !== 'unknown' || left <= 0) return st;
        await this.t.sleep(Math.min(interval, left));
        interval = Math.min(4_000, interval * 2);
      }
    } catch (err) {
      // Whatever stops the status query (outage, IdP down, auth), the POST's fate stays unknown.
      throw new AmbiguousSubmissionError(
        clave,
        `the POST failed with ${problem} and the status query failed too: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  }

  /**
   * GET /recepcion/{clave} (or clave-consecutivoReceptor). 404 → `{estado: 'unknown'}`.
   * Retries transport errors, 5xx and 429 (GET is idempotent).
   */
  async getStatus(clave: string): Promise<ReceptionStatus> {
    const url = this.url(`/recepcion/${encodeURIComponent(clave)}`);
    const res = await this.getWithRetry(url);
    if (res.status === 404) return { clave, estado: 'unknown' };
    if (res.status !== 200) throw new HaciendaHttpError('GET', url, res.status, decodeCause(res.headers['x-error-cause']) ?? bodyText(res));
    const b = jsonBody(res) as Record<string, unknown> | undefined;
    if (!b || typeof b !== 'object') throw new BadResponseError(url, 'body is not JSON');
    const ind = str(b['ind-estado']) ?? str(b['indEstado']);
    if (!ind) throw new BadResponseError(url, 'no ind-estado');
    const lower = ind.toLowerCase();
    const status: ReceptionStatus = {
      clave: str(b['clave']) ?? clave,
      estado: ESTADOS.has(lower) ? (lower as Estado) : 'error',
      indEstado: ind,
    };
    const fecha = str(b['fecha']);
    if (fecha) status.fecha = fecha;
    const cb = str(b['callbackUrl']);
    if (cb) status.callbackUrl = cb;
    const rx = str(b['respuesta-xml']) ?? str(b['respuestaXml']);
    if (rx) {
      status.respuestaXml = Buffer.from(rx, 'base64');
      const m = parseMensajeHaciendaSummary(status.respuestaXml);
      if (m) status.mensaje = m;
    }
    return status;
  }

  /** Polls getStatus until aceptado/rechazado/error or the timeout; returns the last status seen. */
  async waitForVerdict(clave: string, opts: WaitOptions = {}): Promise<ReceptionStatus> {
    const deadline = this.t.now() + (opts.timeoutMs ?? 120_000);
    let interval = opts.intervalMs ?? 1_000;
    const cap = opts.maxIntervalMs ?? 10_000;
    for (;;) {
      const st = await this.getStatus(clave);
      if (FINAL.has(st.estado)) return st;
      const left = deadline - this.t.now();
      if (left <= 0) return st;
      await this.t.sleep(Math.min(interval, left));
      interval = Math.min(cap, interval * 2);
    }
  }

  /** GET /comprobantes (documents sent by this user), newest first. */
  async listComprobantes(params: ListComprobantesParams = {}): Promise<ListComprobantesResult> {
    const q = new URLSearchParams();
    if (params.offset !== undefined) q.set('offset', String(params.offset));
    if (params.limit !== undefined) q.set('limit', String(params.limit));
    if (params.emisor) q.set('emisor', params.emisor);
    if (params.receptor) q.set('receptor', params.receptor);
    const qs = q.toString();
    const url = this.url('/comprobantes' + (qs ? `?${qs}` : ''));
    const res = await this.getWithRetry(url);
    if (res.status !== 200 && res.status !== 206) {
      throw new HaciendaHttpError('GET', url, res.status, decodeCause(res.headers['x-error-cause']) ?? bodyText(res));
    }
    const b = jsonBody(res);
    if (!Array.isArray(b)) throw new BadResponseError(url, 'body is not a JSON array');
    const out: ListComprobantesResult = { items: b as ComprobanteItem[] };
    const cr = res.headers['content-range'];
    if (cr) {
      out.contentRange = cr;
      const m = /\/(\d+)\s*$/.exec(cr);
      if (m) out.total = Number(m[1]);
    }
    return out;
  }

  /** GET /comprobantes/{clave}; null when Hacienda does not have it. */
  async getComprobante(clave: string): Promise<ComprobanteItem | null> {
    const url = this.url(`/comprobantes/${encodeURIComponent(clave)}`);
    const res = await this.getWithRetry(url);
    if (res.status === 404) return null;
    if (res.status !== 200) throw new HaciendaHttpError('GET', url, res.status, decodeCause(res.headers['x-error-cause']) ?? bodyText(res));
    const b = jsonBody(res);
    if (!b || typeof b !== 'object') throw new BadResponseError(url, 'body is not JSON');
    return b as ComprobanteItem;
  }

  private async getWithRetry(url: string): Promise<HttpResponse> {
    let problem = '';
    let lastStatus: number | undefined;
    let lastErr: unknown;
    for (let attempt = 1; ; attempt++) {
      const out = await this.attempt(url, { method: 'GET' });
      let wait: number;
      if (out.kind === 'network') {
        problem = out.err.code;
        lastErr = out.err;
        lastStatus = undefined;
        wait = backoffDelay(attempt, this.statusRetry, this.t.random);
      } else if (out.res.status === 429 || out.res.status >= 500) {
        problem = `HTTP ${out.res.status}`;
        lastStatus = out.res.status;
        const server = serverWaitMs(out.res.status, out.res.headers, this.t.now());
        wait = Math.max(server ?? 0, backoffDelay(attempt, this.statusRetry, this.t.random));
        if (out.res.status === 429 && server !== undefined && server > this.statusRetry.maxServerWaitMs) {
          throw new RateLimitedError(url, this.t.now() + server);
        }
        wait = Math.min(wait, this.statusRetry.maxServerWaitMs);
      } else {
        return out.res;
      }
      if (attempt >= this.statusRetry.maxAttempts) {
        if (lastStatus === 429) throw new RateLimitedError(url);
        throw new ServiceUnavailableError(url, `${problem} after ${attempt} attempts`, { status: lastStatus, cause: lastErr });
      }
      await this.t.sleep(wait);
    }
  }

  /**
   * Ends this user's IdP session (only when the client created its own TokenManager; a shared one is
   * logged out by its owner) and releases the HTTP pool the client created.
   */
  async close(): Promise<void> {
    if (this.ownsTokens) await this.tokens.logout(this.credentials.username);
    if (this.ownsHttp) await this.http.close();
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** X-Error-Cause may arrive as latin1-decoded UTF-8; repair it when that is what happened. */
function decodeCause(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (/[\u00c2-\u00f4][\u0080-\u00bf]/.test(v)) {
    const repaired = Buffer.from(v, 'latin1').toString('utf8');
    if (!repaired.includes('\ufffd')) return repaired;
  }
  return v;
}

function bodyText(res: HttpResponse): string {
  return res.body.toString('utf8').slice(0, 500);
}
