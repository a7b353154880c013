/**
 * HTTP transport for the Hacienda client: undici 7 with an `Agent` (one keep-alive `Pool` per origin),
 * explicit connect / headers / body timeouts. TLS verification is never disabled; a custom CA can be added.
 */
import { Agent, request, type Dispatcher } from 'undici';

export interface HttpClientOptions {
  /** TCP+TLS connect timeout (default 10 s). */
  connectTimeoutMs?: number;
  /** Time to wait for the response headers (default 30 s). */
  headersTimeoutMs?: number;
  /** Max idle time between body chunks (default 30 s). */
  bodyTimeoutMs?: number;
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
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overrides the client's headers timeout for this request. */
  headersTimeoutMs?: number;
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
  constructor(method: string, url: string, cause: unknown) {
    const code = errorCode(cause);
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

  constructor(opts: HttpClientOptions = {}) {
    this.headersTimeoutMs = opts.headersTimeoutMs ?? 30_000;
    this.bodyTimeoutMs = opts.bodyTimeoutMs ?? 30_000;
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

  /** Sends one request; throws NetworkError on transport failure, returns any HTTP status. */
  async send(url: string, req: HttpRequest): Promise<HttpResponse> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        dispatcher: this.dispatcher,
        headersTimeout: req.headersTimeoutMs ?? this.headersTimeoutMs,
        bodyTimeout: this.bodyTimeoutMs,
      });
    } catch (err) {
      throw new NetworkError(req.method, url, err);
    }
    let body: Buffer;
    try {
      body = Buffer.from(await res.body.arrayBuffer());
    } catch (err) {
      throw new NetworkError(req.method, url, err);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined) continue;
      headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
    }
    return { status: res.statusCode, headers, body };
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
