/**
 * What Hacienda says of a supplier's comprobante, asked with the buyer's credentials (GET recepción/{clave}): at import
 * (import.ts), and again before answering a document Hacienda had not accepted then (decide.ts). A MensajeReceptor
 * about a comprobante Hacienda has no record of is rejected (the emulator's -…, COMPROBANTE_DESCONOCIDO; NOTES §4.3),
 * so an answer is refused until Hacienda has it, unless the caller forces it (issue 26).
 */
import { ReceptionClient, type ReceptionStatus } from '../../hacienda/index.js';
import type { Issuer } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import { decodeClaveHacienda } from '../../core/clave-hacienda.js';
import { issuerSecretsContext, type IssuerSecrets, type StoredIssuerRecord } from '../issuers.js';

/** A reception client with the buyer's (one of the account's issuers) credentials; the caller closes it. */
export function buyerReceptionClient(ctx: ServiceContext, issuer: Issuer): ReceptionClient {
  const record = JSON.parse(issuer.record_json) as StoredIssuerRecord;
  const secrets = ctx.secrets.openJson<IssuerSecrets>(issuer.secrets_enc, issuerSecretsContext(issuer.account_id, issuer.identificacion));
  return new ReceptionClient({
    endpoints: ctx.hacienda.endpoints,
    credentials: { username: record.usuarioHacienda, password: decodeClaveHacienda(secrets.claveHacienda) },
    now: ctx.now,
    statusRetry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 2_000, maxServerWaitMs: 5_000 },
  });
}

/** Hacienda has no record of the clave (yet). */
export const NO_RECORD = 'Hacienda has no record of this comprobante';

/**
 * Why a document in this state at Hacienda should not be answered yet (one English line), or null when Hacienda
 * accepted it. `when`: "(yet)" at import, "(asked now)" before an answer.
 */
export function notAnswerableYet(st: Pick<ReceptionStatus, 'estado' | 'indEstado'>, when: string): string | null {
  if (st.estado === 'aceptado') return null;
  if (st.estado === 'unknown') return `${NO_RECORD} ${when}: a MensajeReceptor about it would be rejected`;
  if (st.estado === 'rechazado') return 'Hacienda rejected this comprobante: a MensajeReceptor about it would be rejected';
  return `Hacienda has not decided on this comprobante ${when} (ind-estado ${st.indEstado ?? st.estado}): a MensajeReceptor about it could be rejected`;
}
