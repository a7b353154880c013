/**
 * Hacienda's callback (NOTES §4.6): when processing ends, POST the GET /recepcion/{clave} body as JSON to
 * the callbackUrl the issuer sent. An answer other than 2xx (or no answer) is retried 3 times, then the
 * emulator gives up (the issuer must poll), like Hacienda.
 */
import { request, type Dispatcher } from 'undici';

export interface CallbackOptions {
  retries: number;
  retryDelayMs: number;
  timeoutMs: number;
  dispatcher?: Dispatcher;
}

export interface CallbackOutcome {
  attempts: number;
  delivered: boolean;
  lastStatus?: number;
  lastError?: string;
}

export async function deliverCallback(
  url: string,
  body: Record<string, unknown>,
  opts: CallbackOptions,
  sleep: (ms: number) => Promise<void>,
  isClosed: () => boolean,
): Promise<CallbackOutcome> {
  const out: CallbackOutcome = { attempts: 0, delivered: false };
  const payload = JSON.stringify(body);
  for (let i = 0; i <= opts.retries; i++) {
    if (isClosed()) break;
    if (i > 0) await sleep(opts.retryDelayMs * 2 ** (i - 1));
    if (isClosed()) break;
    out.attempts++;
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: payload,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
        ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
      });
      await res.body.dump();
      out.lastStatus = res.statusCode;
      delete out.lastError;
      if (res.statusCode >= 200 && res.statusCode < 300) {
        out.delivered = true;
        break;
      }
    } catch (e) {
      out.lastError = e instanceof Error ? e.message : String(e);
      delete out.lastStatus;
    }
  }
  return out;
}
