/**
 * THE one-line cause of a failure to reach Hacienda, in words a person can act on: `DNS: no such host
 * api.example.invalid`, `TLS: certificate not trusted (api.comprobanteselectronicos.go.cr)`, `connection refused by
 * 127.0.0.1:9`, `HTTP 503 Service Unavailable from api.comprobanteselectronicos.go.cr`. Used by `fecr doctor`'s
 * reachability and credential checks and by the send job, which stores it as the reason a document is not sent yet
 * (what `fecr send` prints without --debug). The client's errors keep their transport failure as `cause`.
 */
import { STATUS_CODES } from 'node:http';
import { BadCredentialsError, HaciendaError, IdpClientError } from './errors.js';
import { ANSWER_TOO_LARGE, DEADLINE_EXCEEDED, HttpClient, NetworkError } from './http.js';

const DNS_MISSING = new Set(['ENOTFOUND', 'EAI_NONAME', 'EAI_NODATA']);
const DNS_TEMPORARY = new Set(['EAI_AGAIN', 'EAI_FAIL']);
const TLS_UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/** `HTTP 503 Service Unavailable`. */
export function httpStatusText(status: number): string {
  const words = STATUS_CODES[status];
  return `HTTP ${status}${words ? ` ${words}` : ''}`;
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

function hostnameOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** A transport failure's code (ECONNREFUSED, ENOTFOUND, a TLS code…) as one line naming the host. */
export function describeNetworkCode(code: string, url?: string): string {
  const host = hostOf(url);
  const at = host ? ` (${host})` : '';
  if (DNS_MISSING.has(code)) return `DNS: no such host${hostnameOf(url) ? ` ${hostnameOf(url)}` : ''}`;
  if (DNS_TEMPORARY.has(code)) return `DNS: ${hostnameOf(url) ?? 'the host'} could not be resolved now (the name server did not answer)`;
  if (code === 'ECONNREFUSED') return `connection refused by ${host ?? 'the host'} (nothing listens there)`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return `no answer from ${host ?? 'the host'} (connection timed out)`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ENETDOWN') return `network: ${host ?? 'the host'} is unreachable from here`;
  if (TLS_UNTRUSTED.has(code)) return `TLS: certificate not trusted${at}`;
  if (code === 'CERT_HAS_EXPIRED') return `TLS: the server's certificate has expired${at}`;
  if (code === 'CERT_NOT_YET_VALID') return `TLS: the server's certificate is not valid yet${at}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `TLS: the server's certificate is not for ${hostnameOf(url) ?? 'this host'}`;
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO' || code.startsWith('ERR_TLS_')) return `TLS: handshake failed${at} (${code})`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return `connection to ${host ?? 'the host'} closed before an answer`;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `${host ?? 'the host'} did not answer in time`;
  if (code === DEADLINE_EXCEEDED) return `${host ?? 'the host'} did not finish its answer in time`;
  if (code === ANSWER_TOO_LARGE) return `${host ?? 'the host'} sent an answer larger than fecr accepts`;
  return `network error ${code}${at}`;
}

/** The first NetworkError in an error's cause chain. */
function networkCause(e: unknown): NetworkError | undefined {
  for (let c: unknown = e, depth = 0; c && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    if (c instanceof NetworkError) return c;
  }
  return undefined;
}

/** The URL a Hacienda error names in its message (`… at https://…: …`). */
function urlIn(message: string): string | undefined {
  return /\bhttps?:\/\/[^\s:]+(?::\d+)?[^\s:]*/.exec(message)?.[0];
}

/** Why Hacienda could not be reached or refused, as one line (no stack, no internals). */
export function describeFailure(e: unknown): string {
  const net = networkCause(e);
  if (net) return describeNetworkCode(net.code, net.url);
  if (e instanceof BadCredentialsError) return `Hacienda's IdP refused the credentials of "${e.username}"${e.detail ? ` (${e.detail})` : ''}`;
  if (e instanceof IdpClientError) return e.message;
  if (e instanceof HaciendaError) {
    const url = urlIn(e.message);
    const from = hostOf(url) ? ` from ${hostOf(url)}` : '';
    if (e.status !== undefined && e.status >= 429) return `${httpStatusText(e.status)}${from}`;
    // Out of attempts on a transport failure whose error was not kept: its code leads the detail.
    const code = /^([A-Z][A-Z0-9_]+) after \d+ attempts/.exec(e.detail ?? '')?.[1];
    if (code) return describeNetworkCode(code, url);
    if (e.status !== undefined) return `${httpStatusText(e.status)}${from}${e.detail ? `: ${e.detail}` : ''}`;
    return e.message;
  }
  if (e instanceof Error) return e.message;
  return String(e);
}

/** What one GET of a URL showed: an HTTP answer (its status), or the transport failure in words. */
export type ProbeResult = { ok: true; status: number } | { ok: false; status?: number; cause: string };

/**
 * One GET of `url` (no retries, short timeouts): reachable when any HTTP answer below 500 comes back (an API
 * answers 401 or 404 without a token, and that proves DNS, TCP and TLS). A 5xx is said in words.
 */
export async function probe(url: string, opts: { headers?: Record<string, string>; http?: HttpClient; timeoutMs?: number } = {}): Promise<ProbeResult> {
  const timeout = opts.timeoutMs ?? 10_000;
  const http = opts.http ?? new HttpClient({ connectTimeoutMs: timeout, headersTimeoutMs: timeout, bodyTimeoutMs: timeout, connections: 1 });
  try {
    const res = await http.send(url, { method: 'GET', kind: 'probe', headers: { accept: 'application/json', ...opts.headers } });
    if (res.status >= 500) return { ok: false, status: res.status, cause: `${httpStatusText(res.status)} from ${hostOf(url) ?? url}` };
    return { ok: true, status: res.status };
  } catch (e) {
    return { ok: false, cause: describeFailure(e) };
  } finally {
    if (!opts.http) await http.close();
  }
}
