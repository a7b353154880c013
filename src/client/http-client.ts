/**
 * The CLI's HTTP client for a hosted fecr (undici 7): one keep-alive connection pool per client, connect and
 * response timeouts, JSON in and out. Transport failures (refused, reset, DNS, timeout) are a NetworkError with a
 * one-line reason; every HTTP answer, whatever its status, is returned for the caller to map.
 */
import { Agent, request } from 'undici';

export interface HttpClientOptions {
  /** TCP/TLS connect timeout (default 10 s). */
  connectTimeoutMs?: number;
  /** Time to the response headers and between body chunks (default 60 s). */
  timeoutMs?: number;
  /** How long an idle connection is kept for reuse (default 10 s, under the server's keep-alive). */
  keepAliveTimeoutMs?: number;
  /** At most this many connections per origin (default 16). */
  connections?: number;
  userAgent?: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
  text: string;
}

export class NetworkError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot reach ${originOf(url)} (${reason})`, options);
    this.name = 'NetworkError';
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** One-line reason of a transport error: its code, with the timeout kinds spelled out. */
function reasonOf(e: unknown, opts: Required<Pick<HttpClientOptions, 'connectTimeoutMs' | 'timeoutMs'>>): string {
  const err = e as { code?: string; message?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `no connection within ${opts.connectTimeoutMs / 1000} s`;
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return `no answer within ${opts.timeoutMs / 1000} s`;
    case undefined:
      return err.message ?? String(e);
    default:
      return code;
  }
}

export class HttpClient {
  private readonly agent: Agent;
  private readonly opts: Required<Pick<HttpClientOptions, 'connectTimeoutMs' | 'timeoutMs'>> & { userAgent: string };

  constructor(opts: HttpClientOptions = {}) {
    this.opts = { connectTimeoutMs: opts.connectTimeoutMs ?? 10_000, timeoutMs: opts.timeoutMs ?? 60_000, userAgent: opts.userAgent ?? 'fecr-cli' };
    this.agent = new Agent({
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? 10_000,
      keepAliveMaxTimeout: opts.keepAliveTimeoutMs ?? 10_000,
      connections: opts.connections ?? 16,
      connect: { timeout: this.opts.connectTimeoutMs },
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
    });
  }

  /** POSTs a JSON body (with a bearer token when given) and reads the whole answer. */
  async postJson(url: string, body: unknown, opts: { token?: string; signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<HttpResponse> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': this.opts.userAgent,
    };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    Object.assign(headers, opts.headers);
    return this.send(url, { method: 'POST', headers, body: JSON.stringify(body ?? {}), signal: opts.signal });
  }

  /**
   * POSTs a JSON body and hands back the answer's body as a stream (for a large file: an archive), not read. The caller
   * consumes or destroys it; `readAll` turns a non-file answer (an error body) into an HttpResponse.
   */
  async postJsonStreaming(url: string, body: unknown, opts: { token?: string; signal?: AbortSignal } = {}): Promise<{ status: number; headers: HttpResponse['headers']; body: NodeJS.ReadableStream; readAll: () => Promise<HttpResponse> }> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': this.opts.userAgent };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let res;
    try {
      res = await request(url, { dispatcher: this.agent, method: 'POST', headers, body: JSON.stringify(body ?? {}), signal: opts.signal });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw new NetworkError(url, reasonOf(e, this.opts), { cause: e });
    }
    const r = res;
    const readAll = async (): Promise<HttpResponse> => answerOf(r.statusCode, r.headers, await r.body.text());
    return { status: r.statusCode, headers: r.headers, body: r.body, readAll };
  }

  async get(url: string, opts: { signal?: AbortSignal } = {}): Promise<HttpResponse> {
    return this.send(url, { method: 'GET', headers: { accept: 'application/json', 'user-agent': this.opts.userAgent }, signal: opts.signal });
  }

  private async send(
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; signal?: AbortSignal },
  ): Promise<HttpResponse> {
    let res;
    let text: string;
    try {
      res = await request(url, { dispatcher: this.agent, method: init.method, headers: init.headers, body: init.body, signal: init.signal });
      text = await res.body.text();
    } catch (e) {
      if (init.signal?.aborted) throw e;
      throw new NetworkError(url, reasonOf(e, this.opts), { cause: e });
    }
    return answerOf(res.statusCode, res.headers, text);
  }

  /** Closes the pooled connections (idle ones at once; in-flight requests finish first). */
  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** An answer read whole: its JSON when it is JSON (by its content type or its first character), and its text. */
function answerOf(status: number, headers: HttpResponse['headers'], text: string): HttpResponse {
  let json: unknown;
  const type = String(headers['content-type'] ?? '');
  if (type.includes('json') || /^\s*[[{]/.test(text)) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status, headers, json, text };
}
