/**
 * HTTP transport for the Hacienda client: undici 7 with an `Agent` (one keep-alive `Pool` per origin),
 * explicit connect / headers / body timeouts. TLS verification is never disabled; a custom CA can be added.
 *
 * Every call to Hacienda (reception, IdP, public queries and indicators, the doctor's probes) goes through `send`,
 * which bounds each answer (issue 37, point 9): at most ANSWER_LIMITS[kind] bytes (a declared Content-Length over it
 * is refused before the body is read; a body that grows past it is cut there), and an overall deadline for the
 * headers and the whole body together (the per-phase timeouts alone let a server that drips a byte every few
 * seconds hold a request for ever). Either is a NetworkError (ANSWER_TOO_LARGE, DEADLINE_EXCEEDED) that may have
 * been processed: the callers' retry and status-check rules apply as to any cut connection.
 */
import { Agent, request, type Dispatcher } from 'undici';

const MIB = 1024 * 1024;

/**
 * The largest answer accepted per kind of call, bytes. Each is the largest legitimate answer with headroom:
 * - reception (POST/GET /recepcion; NOTES §4.4): the JSON carries `respuesta-xml`, a base64 MensajeHacienda (§6.1):
 *   the signed envelope (~6 KB with its certificate) and DetalleMensaje, one line per error (§6.3; the longest text
 *   seen, -400's, is ~330 characters). A comprobante has at most 1 000 lines (v4.4 LineaDetalle maxOccurs 1000):
 *   1 000 lines × 3 errors × ~400 bytes ≈ 1.2 MB of XML, 1.6 MB in base64. 8 MiB is five times that.
 * - idp (POST token / logout; NOTES §4.2, samples/idp-token-response.stag.redacted.json): a JSON of two JWTs and a
 *   few fields, ~3 KB in practice. 256 KiB leaves room for any error page a proxy puts in front.
 * - query (/fe/ae, /fe/cabys, /fe/ex, /indicadores; NOTES §5): the largest is a CABYS search; the whole catalogue
 *   (20 501 codes, ~600 bytes each in fe-cabys-q.hacienda-doc-example.json) is ~12 MB. 16 MiB holds it whole.
 * - probe (`fecr doctor`'s reachability GET): only the status is read. 64 KiB.
 */
export const ANSWER_LIMITS = {
  reception: 8 * MIB,
  idp: 256 * 1024,
  query: 16 * MIB,
  probe: 64 * 1024,
} as const;

export type AnswerKind = keyof typeof ANSWER_LIMITS;

/**
 * Default overall deadline of one request (headers and body), ms: the sum of the default headers timeout (30 s) and
 * body idle timeout (30 s), so an honest answer slow in both phases still fits, while a drip-fed one is cut.
 */
export const DEFAULT_DEADLINE_MS = 60_000;

/** NetworkError codes of this module's own bounds. */
export const ANSWER_TOO_LARGE = 'ANSWER_TOO_LARGE';
export const DEADLINE_EXCEEDED = 'DEADLINE_EXCEEDED';

export interface HttpClientOptions {
  /** TCP+TLS connect timeout (default 10 s). */
  connectTimeoutMs?: number;
  /** Time to wait for the response headers (default 30 s). */
  headersTimeoutMs?: number;
  /** Max idle time between body chunks (default 30 s). */
  bodyTimeoutMs?: number;
  /** Overall deadline of one request, headers and body together (default DEFAULT_DEADLINE_MS). */
  deadlineMs?: number;
  /** How long idle keep-alive sockets are kept (default 10 s). */
  keepAliveTimeoutMs?: number;
  /** Max connections per origin (default 16). */
  connections?: number;
  /** Extra trusted CA certificates (PEM), added to Node's defaults. Verification stays on. */
  ca?: string | string[];
  /** Use this dispatcher instead of creating an Agent (the client will not close it). */
  dispatcher?: Dispatcher;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** What is asked: sets the answer's size cap (ANSWER_LIMITS). */
  kind: AnswerKind;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overrides the client's headers timeout for this request. */
  headersTimeoutMs?: number;
  /** Overrides the client's overall deadline for this request. */
  deadlineMs?: number;
}

export interface HttpResponse {
  status: number;
  /** Lower-case header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

/** Codes of errors that happen before any byte of the request can have been processed by the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
]);

/** A transport failure (no HTTP answer). */
export class NetworkError extends Error {
  readonly code: string;
  /**
   * False when the request certainly never reached the server (connection refused, DNS, connect timeout, TLS);
   * true when it may have been processed (reset, timeout waiting for the answer, ...).
   */
  readonly maybeProcessed: boolean;
  /** The URL asked (its host is what a one-line cause names: describe.ts). */
  readonly url: string;
  constructor(method: string, url: string, cause: unknown, ownCode?: string) {
    const code = ownCode ?? errorCode(cause);
    super(`${method} ${url} failed: ${code}${cause instanceof Error && cause.message ? ` (${cause.message})` : ''}`, { cause });
    this.name = 'NetworkError';
    this.code = code;
    this.url = url;
    this.maybeProcessed = !NOT_SENT_CODES.has(code);
  }
}

function errorCode(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; cause?: unknown };
    if (typeof e.code === 'string') {
      // undici wraps some socket errors; prefer the underlying errno when it is more precise.
      if (e.code === 'UND_ERR_SOCKET' || e.code === 'UND_ERR_CONNECT') {
        const inner = e.cause as { code?: unknown } | undefined;
        if (inner && typeof inner.code === 'string' && NOT_SENT_CODES.has(inner.code)) return inner.code;
      }
      return e.code;
    }
    if (e.cause) return errorCode(e.cause);
  }
  return 'UNKNOWN';
}

export class HttpClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly headersTimeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly deadlineMs: number;

  constructor(opts: HttpClientOptions = {}) {
    this.headersTimeoutMs = opts.headersTimeoutMs ?? 30_000;
    this.bodyTimeoutMs = opts.bodyTimeoutMs ?? 30_000;
    this.deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    if (opts.dispatcher) {
      this.dispatcher = opts.dispatcher;
      this.ownsDispatcher = false;
    } else {
      this.dispatcher = new Agent({
        connect: { timeout: opts.connectTimeoutMs ?? 10_000, ...(opts.ca ? { ca: opts.ca } : {}) },
        headersTimeout: this.headersTimeoutMs,
        bodyTimeout: this.bodyTimeoutMs,
        keepAliveTimeout: opts.keepAliveTimeoutMs ?? 10_000,
        connections: opts.connections ?? 16,
      });
      this.ownsDispatcher = true;
    }
  }

  /**
   * Sends one request; throws NetworkError on transport failure, on an answer over ANSWER_LIMITS[req.kind] and past
   * the deadline (headers and body together); returns any HTTP status.
   */
  async send(url: string, req: HttpRequest): Promise<HttpResponse> {
    const limit = ANSWER_LIMITS[req.kind];
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error(`no whole answer within ${req.deadlineMs ?? this.deadlineMs} ms`)), req.deadlineMs ?? this.deadlineMs);
    const fail = (err: unknown, code?: string) => new NetworkError(req.method, url, err, code ?? (deadline.signal.aborted ? DEADLINE_EXCEEDED : undefined));
    try {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          dispatcher: this.dispatcher,
          headersTimeout: req.headersTimeoutMs ?? this.headersTimeoutMs,
          bodyTimeout: this.bodyTimeoutMs,
          signal: deadline.signal,
        });
      } catch (err) {
        throw fail(err);
      }
      const tooLarge = () => {
        res.body.destroy();
        return fail(new Error(`the answer is over ${limit} bytes`), ANSWER_TOO_LARGE);
      };
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limit) throw tooLarge();
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > limit) throw tooLarge();
          chunks.push(chunk);
        }
      } catch (err) {
        if (err instanceof NetworkError) throw err;
        throw fail(err);
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v === undefined) continue;
        headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
      }
      return { status: res.statusCode, headers, body: Buffer.concat(chunks, size) };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** Parses a JSON body, or returns undefined. */
export function jsonBody(res: HttpResponse): unknown {
  if (res.body.length === 0) return undefined;
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    return undefined;
  }
}
