/** Hacienda client: environments, IdP tokens, reception API and public queries. */
export * from './endpoints.js';
export * from './errors.js';
export { ANSWER_LIMITS, ANSWER_TOO_LARGE, DEADLINE_EXCEEDED, DEFAULT_DEADLINE_MS, HttpClient, NetworkError, type AnswerKind, type HttpClientOptions, type HttpRequest, type HttpResponse } from './http.js';
export { DEFAULT_RETRY, backoffDelay, serverWaitMs, type RetryPolicy } from './retry.js';
export { TokenManager, type HaciendaCredentials, type TokenManagerOptions, type TokenManagerStats, type TokenResponse } from './token-manager.js';
export { ReceptionClient } from './reception.js';
export * from './reception-api.js';
export {
  PublicQueryClient,
  DEFAULT_QUERY_TTLS,
  type ActividadEconomica,
  type CabysItem,
  type CabysSearchResult,
  type Contribuyente,
  type ExoneracionDocumento,
  type PublicQueryClientOptions,
  type QueryTtls,
  type TipoCambioIndicador,
} from './queries.js';
export { parseMensajeHaciendaSummary, parseDetalleMensaje, formatDetalleErrors, type ErrorHacienda, type MensajeHaciendaError, type MensajeHaciendaSummary } from './mensaje.js';
export { TtlCache } from './ttl-cache.js';
export { describeFailure, describeNetworkCode, httpStatusText, probe, type ProbeResult } from './describe.js';
