/**
 * The shapes of Hacienda's reception API (NOTES §4.3-4.5) as the client speaks them: the submission and its
 * result, the status of a clave, the /comprobantes listing, the client's options, and the JSON body of
 * POST /recepcion.
 */
import type { HaciendaEndpoints } from './endpoints.js';
import type { HttpClient } from './http.js';
import type { MensajeHaciendaSummary } from './mensaje.js';
import type { RetryPolicy, Timing } from './retry.js';
import type { HaciendaCredentials, TokenManager } from './token-manager.js';

export interface IdentificacionApi {
  /** 01 física, 02 jurídica, 03 DIMEX, 04 NITE, ... */
  tipoIdentificacion: string;
  numeroIdentificacion: string;
}

export interface SubmitRequest {
  clave: string;
  /** RFC 3339 date-time of the document (FechaEmision). */
  fecha: string;
  emisor: IdentificacionApi;
  receptor?: IdentificacionApi;
  callbackUrl?: string;
  /** Only for MensajeReceptor: its 20-digit consecutivo (type 05/06/07). */
  consecutivoReceptor?: string;
  /** The signed XML: its bytes, or its text (encoded as UTF-8). Sent base64-encoded. */
  comprobanteXml: Buffer | string;
}

export interface SubmitResult {
  /** `received`: Hacienda took this POST (or a status query found it after an ambiguous failure). `already-received`: Hacienda said the clave was received before. Either way, poll getStatus. */
  status: 'received' | 'already-received';
  clave: string;
  /** The resource to poll: clave, or clave-consecutivoReceptor for a MensajeReceptor. */
  statusKey: string;
  /** HTTP status of the deciding POST (201/202, or 400 for already-received); absent when confirmed by GET. */
  httpStatus?: number;
  /** `Location` header of the 201/202. */
  location?: string;
  /** X-Error-Cause of the already-received answer. */
  cause?: string;
  /** Set when the document was found with GET /recepcion after an ambiguous failure. */
  confirmedByStatus?: ReceptionStatus;
  /** POST requests sent. */
  posts: number;
}

export type Estado = 'recibido' | 'procesando' | 'aceptado' | 'rechazado' | 'error';

export interface ReceptionStatus {
  clave: string;
  fecha?: string;
  /** `unknown`: Hacienda has no document with this clave (HTTP 404). */
  estado: Estado | 'unknown';
  /** `ind-estado` exactly as received. */
  indEstado?: string;
  callbackUrl?: string;
  /** The decoded MensajeHacienda bytes, once processed. */
  respuestaXml?: Buffer;
  /** The MensajeHacienda read from respuestaXml. */
  mensaje?: MensajeHaciendaSummary;
}

export interface ComprobanteParty {
  tipoIdentificacion: string;
  numeroIdentificacion: string;
  nombre?: string;
}

export interface ComprobanteItem {
  clave: string;
  fecha: string;
  emisor: ComprobanteParty;
  receptor?: ComprobanteParty;
  notasCredito?: { clave: string; fecha: string }[];
  notasDebito?: { clave: string; fecha: string }[];
}

export interface ListComprobantesParams {
  offset?: number;
  limit?: number;
  /** Tipo + número, e.g. `02003101123456`. */
  emisor?: string;
  receptor?: string;
}

export interface ListComprobantesResult {
  items: ComprobanteItem[];
  /** Content-Range of a 206 answer, e.g. `0-10/100`. */
  contentRange?: string;
  /** Total count when Content-Range gives it. */
  total?: number;
}

/** `now`, `sleep` and `random` (Timing) may be injected; default the clock, setTimeout and Math.random. */
export interface ReceptionClientOptions extends Partial<Timing> {
  endpoints: Pick<HaciendaEndpoints, 'environment' | 'receptionBaseUrl' | 'tokenUrl' | 'logoutUrl' | 'clientId'>;
  credentials: HaciendaCredentials;
  /** Share one TokenManager between clients of the same environment (one login per issuer). */
  tokens?: TokenManager;
  http?: HttpClient;
  /** POST attempts and backoff (default 6 attempts, 500 ms base, 15 s cap, server waits up to 120 s). */
  retry?: Partial<RetryPolicy>;
  /** GET attempts and backoff (default 6 attempts, 300 ms base, 10 s cap). */
  statusRetry?: Partial<RetryPolicy>;
  /**
   * Hacienda's index delay, tolerated after a POST whose fate is unknown (its answer lost or timed out, a 500,
   * 502 or 504): a 404 from the status query within this long of that failure is taken for a document not yet
   * indexed and asked again (GET every 250 ms doubling to 4 s) before the POST is sent again. Default 0: the
   * 404 is trusted at once. The service's worker uses 30 s. A 503 is not such a failure: its POST was not
   * handled (a 404 after it is trusted); a re-POST after the tolerance is still safe, since Hacienda answers
   * "ya fue recibido" (already-received) when the first POST did arrive.
   */
  indexDelayToleranceMs?: number;
}

export interface WaitOptions {
  /** Give up after this long and return the last status (default 120 s). */
  timeoutMs?: number;
  /** First poll interval (default 1 s), doubling up to maxIntervalMs (default 10 s). */
  intervalMs?: number;
  maxIntervalMs?: number;
}

/** True when an X-Error-Cause says the clave was already received. */
export function isAlreadyReceivedCause(cause: string): boolean {
  return /ya\s+fue\s+recibid|recibid[oa]\s+anteriormente|ya\s+existe/i.test(cause);
}

/** The JSON body of POST /recepcion (comprobanteXml base64 of the UTF-8 bytes). */
export function receptionBody(req: SubmitRequest): Record<string, unknown> {
  let bytes: Buffer;
  if (Buffer.isBuffer(req.comprobanteXml)) bytes = req.comprobanteXml;
  else {
    if (!/^\uFEFF?\s*</.test(req.comprobanteXml)) throw new TypeError('comprobanteXml must be the XML text or its bytes (not base64)');
    bytes = Buffer.from(req.comprobanteXml, 'utf8');
  }
  const body: Record<string, unknown> = {
    clave: req.clave,
    fecha: req.fecha,
    emisor: { tipoIdentificacion: req.emisor.tipoIdentificacion, numeroIdentificacion: req.emisor.numeroIdentificacion },
  };
  if (req.receptor) {
    body['receptor'] = { tipoIdentificacion: req.receptor.tipoIdentificacion, numeroIdentificacion: req.receptor.numeroIdentificacion };
  }
  if (req.callbackUrl) body['callbackUrl'] = req.callbackUrl;
  if (req.consecutivoReceptor) body['consecutivoReceptor'] = req.consecutivoReceptor;
  body['comprobanteXml'] = bytes.toString('base64');
  return body;
}
