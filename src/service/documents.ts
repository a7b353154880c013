/**
 * Document submission: validate (core) → clave → build and sign with the issuer's .p12 → store the document
 * and its 'send' job in one transaction. Idempotent per issuer + kind + sucursal + terminal + numeroReferencia:
 * the same body returns the stored clave and stores nothing; a different body under a used number is a 400.
 *
 * Local mode (SubmitOptions.assignNumber): a body without numeroReferencia takes the next free number of its
 * series (store/numbering.ts). The number is taken by the document's INSERT itself, in the one transaction that
 * stores the document and its send job: the unique index on issuer + kind + sucursal + terminal + number decides
 * between two concurrent submissions (two processes on one SQLite file, or two on one PostgreSQL), and the one that
 * lost signs again under the next free number. No number is taken by a body that fails, so the series has no gaps.
 *
 * SubmitOptions.idempotencyKey (issue 36, service/idempotency.ts): the same key with the same body within 24 h answers
 * the document it made; with another body, a 409. The key is stored in the document's transaction.
 */
import { createHash } from 'node:crypto';
import { parseConsecutivo, securityCodeFrom } from '../core/clave.js';
import { issueComprobante } from '../core/comprobante.js';
import { parseReportingUnknownKeys } from '../core/input/findings.js';
import { bodySchemaFor, parseDocument } from '../core/document.js';
import type { IssuerRecord } from '../core/input/schema.js';
import type { Finding } from '../core/model.js';
import { placeholderIssuer } from '../core/placeholder-issuer.js';
import { partiesOf } from '../core/parties.js';
import { money } from '../core/money.js';
import type { Insertable } from 'kysely';
import type { DocumentRow, DocumentsTable, DocumentState } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { findIssuer, issuerForSigning, isUniqueViolation } from './issuers.js';
import { enqueueJob, pgAddNewDocumentSendJob } from '../store/jobs.js';
import { ServiceError } from './service-error.js';
import { KIND_OF_TIPO_DOC } from '../core/lifecycle.js';
import { codeTable } from '../core/code-table.js';
import { nextFree } from '../store/numbering.js';
import { withAutoTipoCambio } from './exchange-rate.js';
import { insertReferences, type ReferenceRow } from '../store/document-references.js';
import { referenceRowsOf } from './document-references.js';
import { earlierUnderKey, keyRow, rememberKeyFor, type Idempotency, type IdempotentAnswer } from './idempotency.js';
import { insertKey, type NewKey } from '../store/idempotency.js';
import { rejectedByHacienda } from './pre-sign-checks.js';
import { orderFindings } from '../core/input/projection.js';
import { guardPayment, paymentOf } from './payment-balance.js';
import { refuseAdditionalNotAllowed } from './delivery/email-additional.js';

export interface SubmitResult {
  clave: string;
  /** False when an identical earlier submission was found (nothing stored). */
  created: boolean;
  /** documents.id */
  documentId: number;
  /** An earlier submission under the idempotency key: what the client API answered then (replayed as it was). */
  answer?: IdempotentAnswer;
}

export interface SubmitOptions {
  /**
   * Local mode: a body without numeroReferencia takes the next free number of its series, and counts as the body
   * with that number (its hash, for a later resubmission of it). The hosted API sets it only for a request with an
   * Idempotency-Key (issue 36: a retry cannot take a second number); without one the spec requires numeroReferencia.
   */
  assignNumber?: boolean;
  /**
   * With assignNumber, a batch row's key (written to its journal before the submission): a document stored under
   * it is that row's, returned as an identical resubmission (created false), so a resumed batch takes no new number.
   */
  submissionKey?: string;
  /**
   * The clave's situación for a body that gives none (issue 30: `contingencia: auto` signs in 3, sin internet, when
   * Hacienda cannot be reached). Not part of the body's identity: the same body sent again finds this document.
   */
  situacion?: '1' | '2' | '3';
  /**
   * An intent's key (issue 36: the client API's Idempotency-Key, or `fecr send`'s key of an unnumbered body): the same
   * key and body within 24 h → the document it made (created false); the same key with another body → 409 conflict.
   */
  idempotencyKey?: string;
  /** With idempotencyKey: the answer to keep with the key, replayed to a repeated request (the client API's). */
  idempotentAnswer?: Idempotency['answer'];
  /**
   * Sign and send even what Hacienda is known to reject (pre-sign-checks.ts: a CABYS code not in the catalogue, …);
   * without it such a body is a 400 with those findings, before a number is spent (issue 36; `--force`, `?forzar=1`).
   */
  force?: boolean;
}

/** A different body under a number already used (400): the clave that holds it and the series' next free number. */
export class NumberTakenError extends ServiceError {
  constructor(
    readonly numero: number,
    readonly kind: string,
    readonly sucursal: number,
    readonly terminal: number,
    readonly clave: string,
    readonly next: number,
  ) {
    super(
      400,
      'bad_request',
      `El numeroReferencia ${numero} (${KIND_NAMES[kind] ?? kind}, sucursal ${sucursal}, terminal ${terminal}) ` +
        `ya fue usado por otro documento con un contenido distinto (clave ${clave}); el siguiente número libre es ${next}`,
      [{ path: 'numeroReferencia', message: `ya fue usado por el documento ${clave}` }],
    );
    this.name = 'NumberTakenError';
  }
}

/** How many times a numbered submission signs again under the next number after a concurrent one took its number. */
const NUMBER_RACES = 50;

const KIND_NAMES: Record<string, string> = codeTable({
  FE: 'factura electrónica', ND: 'nota de débito', NC: 'nota de crédito', TE: 'tiquete electrónico',
  FEC: 'factura electrónica de compra', FEE: 'factura electrónica de exportación', REP: 'recibo electrónico de pago',
});

/** The findings of a body that fails the schema, judged for the account's issuer it names (else a stand-in). */
async function everyFinding(ctx: ServiceContext, accountId: number, body: unknown, schemaFindings: Finding[], force?: boolean): Promise<Finding[]> {
  const emisor = body !== null && typeof body === 'object' ? (body as { emisor?: unknown }).emisor : undefined;
  const id = typeof emisor === 'string' || typeof emisor === 'number' ? String(emisor).trim() : undefined;
  const row = id ? await findIssuer(ctx, accountId, id) : undefined;
  const issuer: IssuerRecord = row ? { ...placeholderIssuer(body), ...(JSON.parse(row.record_json) as Partial<IssuerRecord>) } : placeholderIssuer(body);
  const r = parseDocument(body, issuer);
  if (r.ok) return schemaFindings;
  return r.doc && !force ? orderFindings([...r.findings, ...rejectedByHacienda(new Date(ctx.now()))(r.doc, r.held)]) : r.findings;
}

/** Submits a document body (spec "Electronic document") for an issuer of the account. */
export async function submitDocument(ctx: ServiceContext, accountId: number, submitted: unknown, opts: SubmitOptions = {}): Promise<SubmitResult> {
  // An idempotency key used before (issue 36): its document, or a 409 for another body; checked before anything else.
  const idem: Idempotency | undefined =
    opts.idempotencyKey !== undefined ? { key: opts.idempotencyKey, bodyHash: hashBody(submitted), ...(opts.idempotentAnswer ? { answer: opts.idempotentAnswer } : {}) } : undefined;
  const underKey = async () => {
    const e = idem && (await earlierUnderKey(ctx, accountId, idem));
    return e ? { clave: e.clave, created: false, documentId: e.documentId, ...(e.answer ? { answer: e.answer } : {}) } : undefined;
  };
  const replayed = await underKey();
  if (replayed) return replayed;
  /** A document that already held the body's number (the same body): the key names it from now on. */
  const keyed = async (r: SubmitResult) => (idem && (await rememberKeyFor(ctx, accountId, idem, r.documentId, r.clave)), r);
  // Local mode: a missing numeroReferencia is filled here, before the body is parsed: with 1 while it is judged, then
  // with the series' next free number (below) before anything is issued.
  // A foreign-currency body without tipoCambio (or "auto"): Hacienda's rate of its day (service/exchange-rate.ts).
  const rated = await withAutoTipoCambio(ctx, submitted);
  submitted = rated.body;
  const auto = opts.assignNumber === true && isRecord(submitted) && submitted.numeroReferencia === undefined;
  let body: unknown = auto ? { ...(submitted as Record<string, unknown>), numeroReferencia: 1 } : submitted;
  // Unknown keys alone do not stop here: the body's issuer and numbering are read without them (an identical
  // resubmission of a body stored before unknown keys were refused still gets its clave), and issueComprobante
  // reports them with every other finding.
  const parsed = parseReportingUnknownKeys(bodySchemaFor(body), body);
  // A body that fails the schema gets every finding in one 400: the schema's, and the rules' and figures' of the
  // parts that parsed, judged for the issuer it names (core/document.ts).
  if (!parsed.success) throw ServiceError.validation(rateNoted(await everyFinding(ctx, accountId, body, parsed.findings, opts.force), rated.unavailable));
  const b = parsed.data;

  const issuerRow = await findIssuer(ctx, accountId, b.emisor);
  if (!issuerRow) {
    throw ServiceError.badRequest(`El emisor ${b.emisor} no está registrado en esta cuenta; regístrelo con /api/enviar/emisor`, [
      { path: 'emisor', message: 'no es un emisor registrado de la cuenta' },
    ]);
  }
  const kind = KIND_OF_TIPO_DOC[b.tipoDoc];
  // correosAdicionales beyond the account's allow-list, where the operator set one (delivery/email-additional.ts).
  const own = kind === 'FEC' ? b.proveedor?.correoElectronico : b.receptor === '' ? undefined : b.receptor.correoElectronico;
  await refuseAdditionalNotAllowed(ctx, accountId, own, b.correosAdicionales);
  const issuerSucursal = Number((JSON.parse(issuerRow.record_json) as { sucursal: number }).sucursal);
  const numbering = kind && { kind, sucursal: b.sucursal ?? issuerSucursal, terminal: b.terminal ?? 1, numero: b.numeroReferencia };
  const submissionKey = auto && opts.submissionKey ? opts.submissionKey : null;
  /** The body under the series' next free number (a body fecr numbers). */
  const numbered = async (n: Numbering) => {
    n.numero = await nextFree(ctx.store.db, { issuerId: issuerRow.id, ...n });
    body = { ...(submitted as Record<string, unknown>), numeroReferencia: n.numero };
  };

  if (auto && numbering) {
    // A batch row submitted before (a resumed batch): its document.
    const earlier = submissionKey ? await findBySubmissionKey(ctx, accountId, submissionKey) : undefined;
    if (earlier) return { clave: earlier.clave, created: false, documentId: Number(earlier.id) };
    await numbered(numbering);
  } else if (numbering) {
    // An earlier submission under the same number: same body → its clave; another body → 400.
    const earlier = await findByNumbering(ctx, issuerRow.id, numbering);
    if (earlier) return keyed(await resolveDuplicate(ctx, issuerRow.id, earlier, hashBody(body), numbering));
  }
  let bodyHash = hashBody(body);
  let races = 0;

  const issuer = issuerForSigning(ctx, issuerRow);
  for (let attempt = 1; ; attempt++) {
    const now = ctx.now();
    const issued = issueComprobante(withSituacion(body, opts.situacion), issuer.record, issuer.creds, {
      securityCode: securityCodeFrom(ctx.randomBytes),
      signingTime: new Date(now),
      newId: () => ctx.randomBytes(8).toString('hex'),
      // What Hacienda rejects is refused here, before signing (unless forced).
      ...(opts.force ? {} : { check: rejectedByHacienda(new Date(now)) }),
    });
    if (!issued.ok) throw ServiceError.validation(rateNoted(issued.findings, rated.unavailable));
    const { doc, totals, xml } = issued;
    const parties = partiesOf(doc);
    const parts = parseConsecutivo(doc.numeroConsecutivo);
    if (!parts) throw new Error(`unexpected consecutivo ${doc.numeroConsecutivo}`);
    const key = { kind: doc.kind, sucursal: parts.sucursal, terminal: parts.terminal, numero: parts.numero };
    try {
      const row: Insertable<DocumentsTable> = {
        account_id: accountId,
        issuer_id: issuerRow.id,
        clave: doc.clave,
        kind: doc.kind,
        sucursal: key.sucursal,
        terminal: key.terminal,
        numero_referencia: key.numero,
        body_hash: bodyHash,
        state: 'pendiente',
        xml,
        response_xml: null,
        mensaje: null,
        detalle_mensaje: null,
        fecha_emision: doc.fechaEmision,
        total_comprobante: money(totals.resumen.totalComprobante),
        moneda: doc.moneda.codigoMoneda,
        // The other party (an FEC's seller, its Emisor); the POST's emisor is who issues it (core/parties.ts).
        receptor_nombre: (doc.kind === 'FEC' ? doc.emisor.nombre : doc.receptor?.nombre) ?? null,
        emisor_tipo: parties.issuer?.tipo ?? doc.emisor.identificacion.tipo,
        emisor_numero: parties.issuer?.numero ?? doc.emisor.identificacion.numero,
        receptor_tipo: parties.counterpart?.tipo ?? null,
        receptor_numero: parties.counterpart?.numero ?? null,
        // The counterpart gets the mail: the receptor, or for a factura de compra the seller (its Emisor).
        correos: JSON.stringify(mailRecipients(doc.kind === 'FEC' ? b.proveedor?.correoElectronico : b.receptor === '' ? undefined : b.receptor.correoElectronico, b.correosAdicionales)),
        submission_key: submissionKey,
        created_at: now,
        updated_at: now,
        decided_at: null,
      };
      const refs = referenceRowsOf(accountId, doc, totals);
      const idemRow = idem && ((id: number) => keyRow(accountId, idem, id, doc.clave, now));
      // A REP: the balance of the sales it pays, checked under their lock in the REP's own transaction (issue 37).
      const payment = paymentOf(doc, totals, refs);
      const guard = payment && ((trx: typeof ctx.store.db) => guardPayment(ctx, trx, accountId, payment));
      const documentId =
        ctx.store.dialect === 'postgres' ? await insertWithSendJobPg(ctx, row, now, refs, idemRow, guard) : await insertWithSendJob(ctx, row, now, refs, idemRow, guard);
      ctx.logger.info({ accountId, clave: doc.clave, kind: doc.kind }, 'document queued');
      return { clave: doc.clave, created: true, documentId: Number(documentId) };
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      // A concurrent submission under the same idempotency key won: its document (or a 409 for another body).
      const won = await underKey();
      if (won) return won;
      if (auto && numbering) {
        // The same batch row submitted concurrently (its key is unique): that document.
        const same = submissionKey ? await findBySubmissionKey(ctx, accountId, submissionKey) : undefined;
        if (same) return { clave: same.clave, created: false, documentId: Number(same.id) };
        // A concurrent submission took the number fecr chose: sign again under the next free one.
        if ((await findByNumbering(ctx, issuerRow.id, key)) && ++races <= NUMBER_RACES) {
          await numbered(numbering);
          ctx.logger.info({ accountId, kind: key.kind, taken: key.numero, next: numbering.numero }, 'numeroReferencia taken by a concurrent submission; signing again');
          bodyHash = hashBody(body);
          attempt = 0;
          continue;
        }
      } else {
        // A concurrent submission took the number: apply the idempotency rule to it.
        const earlier = await findByNumbering(ctx, issuerRow.id, key);
        if (earlier) return keyed(await resolveDuplicate(ctx, issuerRow.id, earlier, bodyHash, key));
      }
      // Otherwise the random part of the clave collided with another document's: draw again.
      if (attempt >= 3) throw e;
    }
  }
}

/** Who the accepted comprobante is mailed to: the receptor's address, then the additional ones; each address once (case-insensitive). */
export function mailRecipients(receptor: string | undefined, adicionales: readonly string[] = []): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const a of [receptor, ...adicionales]) {
    const t = a?.trim();
    if (!t || seen.has(t.toLowerCase())) continue;
    seen.add(t.toLowerCase());
    out.push(t);
  }
  return out;
}

/** What runs first in a document's transaction, before its INSERT (a REP's balance: payment-balance.ts). */
type Guard = (trx: ServiceContext['store']['db']) => Promise<void>;

/** The document row and its 'send' job in one transaction (SQLite; the queue is the jobs table). */
async function insertWithSendJob(ctx: ServiceContext, row: Insertable<DocumentsTable>, now: number, refs: ReferenceRow[], key?: (id: number) => NewKey, guard?: Guard): Promise<number> {
  return ctx.store.db.transaction().execute(async (trx) => {
    if (guard) await guard(trx);
    const inserted = await trx.insertInto('documents').values(row).returning('id').executeTakeFirstOrThrow();
    await insertReferences(trx, inserted.id, refs);
    if (key) await insertKey(trx, key(inserted.id));
    await enqueueJob(trx, { type: 'send', document_id: inserted.id, run_at: now }, now);
    return inserted.id;
  });
}

/**
 * PostgreSQL: the document row and its 'send' job (graphile_worker.add_job) in a single statement, which is
 * its own transaction: both or neither, as with insertWithSendJob, in one round trip instead of four
 * (BEGIN, INSERT, add_job, COMMIT). A unique violation fails the whole statement (nothing enqueued).
 */
async function insertWithSendJobPg(ctx: ServiceContext, row: Insertable<DocumentsTable>, now: number, refs: ReferenceRow[], key?: (id: number) => NewKey, guard?: Guard): Promise<number> {
  const insert = async (db: typeof ctx.store.db) =>
    db
      .with('doc', (d) => d.insertInto('documents').values(row).returning('id'))
      .selectFrom('doc')
      .select((eb) => ['doc.id', pgAddNewDocumentSendJob(eb.ref('doc.id'), now).as('job_id')])
      .executeTakeFirstOrThrow();
  if (refs.length === 0 && !key && !guard) return Number((await insert(ctx.store.db)).id);
  // A document that references others (issue 30), or made under an idempotency key: those rows in the same transaction.
  return ctx.store.db.transaction().execute(async (trx) => {
    if (guard) await guard(trx);
    const id = Number((await insert(trx)).id);
    await insertReferences(trx, id, refs);
    if (key) await insertKey(trx, key(id));
    return id;
  });
}

interface Numbering {
  kind: string;
  sucursal: number;
  terminal: number;
  numero: number;
}

async function findByNumbering(ctx: ServiceContext, issuerId: number, n: Numbering) {
  return ctx.store.db
    .selectFrom('documents')
    .select(['id', 'clave', 'body_hash'])
    .where('issuer_id', '=', issuerId)
    .where('kind', '=', n.kind)
    .where('sucursal', '=', n.sucursal)
    .where('terminal', '=', n.terminal)
    .where('numero_referencia', '=', n.numero)
    .executeTakeFirst();
}

async function findBySubmissionKey(ctx: ServiceContext, accountId: number, key: string) {
  return ctx.store.db.selectFrom('documents').select(['id', 'clave']).where('account_id', '=', accountId).where('submission_key', '=', key).executeTakeFirst();
}

/**
 * A number already used: the same body (the same hashBody) → the stored clave, nothing new; another body → 400
 * naming the clave that holds the number and the series' next free number (NumberTakenError).
 */
async function resolveDuplicate(ctx: ServiceContext, issuerId: number, earlier: { id: number; clave: string; body_hash: string }, bodyHash: string, n: Numbering): Promise<SubmitResult> {
  if (earlier.body_hash === bodyHash) return { clave: earlier.clave, created: false, documentId: Number(earlier.id) };
  const next = await nextFree(ctx.store.db, { issuerId, kind: n.kind, sucursal: n.sucursal, terminal: n.terminal });
  throw new NumberTakenError(n.numero, n.kind, n.sucursal, n.terminal, earlier.clave, next);
}

/** The tipoCambio finding with why fecr could not take the rate itself (no network, say). */
function rateNoted(findings: Finding[], unavailable: string | undefined): Finding[] {
  if (!unavailable) return findings;
  return findings.map((f) => (f.path === TIPO_CAMBIO_PATH ? { ...f, message: `${f.message}; "auto" could not take it: ${unavailable}` } : f));
}
const TIPO_CAMBIO_PATH = 'resumenFactura.codigoTipoMoneda.tipoCambio';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * sha256 (hex) of the canonical JSON of a body: object keys sorted at every level, keys whose value is undefined left
 * out, nothing else changed (whitespace and key order do not count; every value, fechaEmision included, does). It is
 * what "the same body" means for a resubmission under a used number. A body fecr numbered is hashed with the number
 * it took, so sending it again with that numeroReferencia written in is the same body.
 */
export function hashBody(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/** A document of the account by clave (another account's clave is null, like an unknown one). */
export async function getDocument(ctx: ServiceContext, accountId: number, clave: string): Promise<DocumentRow | null> {
  const row = await ctx.store.db
    .selectFrom('documents')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('clave', '=', clave)
    .executeTakeFirst();
  return row ?? null;
}

/** A document row without its XML payloads (nor the parties' identifications, which only the worker reads). */
export type DocumentSummary = Omit<DocumentRow, 'xml' | 'response_xml' | 'emisor_tipo' | 'emisor_numero' | 'receptor_tipo' | 'receptor_numero' | 'correos' | 'submission_key'>;

export interface ListDocumentsOptions {
  state?: DocumentState;
  /** Only documents created at or after this instant (epoch ms). */
  since?: number;
  /** Default 100, at most 1000. */
  limit?: number;
  /** Only the documents of the account's issuer with this identificación. */
  issuer?: string;
}

/** The account's documents, newest first. */
export async function listDocuments(ctx: ServiceContext, accountId: number, opts: ListDocumentsOptions = {}): Promise<DocumentSummary[]> {
  const limit = Math.min(Math.max(1, Math.trunc(opts.limit ?? 100)), 1000);
  let q = ctx.store.db
    .selectFrom('documents')
    .select([
      'id',
      'account_id',
      'issuer_id',
      'clave',
      'kind',
      'sucursal',
      'terminal',
      'numero_referencia',
      'body_hash',
      'state',
      'mensaje',
      'detalle_mensaje',
      'fecha_emision',
      'total_comprobante',
      'moneda',
      'receptor_nombre',
      'created_at',
      'updated_at',
      'decided_at',
    ])
    .where('account_id', '=', accountId)
    // The account's answers to its suppliers (MensajeReceptor, kinds MR05/06/07) are listed by fecr recibidos.
    .where('kind', 'not like', 'MR%');
  if (opts.state !== undefined) q = q.where('state', '=', opts.state);
  if (opts.since !== undefined) q = q.where('created_at', '>=', opts.since);
  if (opts.issuer !== undefined) {
    q = q.where('issuer_id', 'in', ctx.store.db.selectFrom('issuers').select('id').where('account_id', '=', accountId).where('identificacion', '=', opts.issuer));
  }
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** The body with the situación SubmitOptions gives when it has none of its own. */
function withSituacion(body: unknown, situacion: SubmitOptions['situacion']): unknown {
  return situacion && isRecord(body) && body.situacion === undefined ? { ...body, situacion } : body;
}
