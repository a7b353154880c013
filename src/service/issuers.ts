/**
 * Issuers (emisores) of an account: registration and update with the certificate check, the public
 * lookup (the spec's six fields) and loading an issuer with its signing credentials for submissions.
 * Secrets (claveHacienda, pinCertificado, certificadoHacienda) are sealed with the SecretBox; they never
 * leave this module except inside `loadIssuerForSigning`'s result.
 */
import { parseIssuer } from '../core/document.js';
import type { IssuerRecord } from '../core/input/schema.js';
import { certificateInfo } from '../core/sign/cert.js';
import { credentialsFromKeyPair, describeP12, exportKeyPair, loadP12, SigningError, validityAt, type SigningCredentials, type SigningKeyPair } from '../core/sign/p12.js';
import type { IssuerDetails, IssuerSummary } from '../api/contract.js';
import type { Issuer } from '../store/schema.js';
import { releaseIssuer } from '../store/issuer-credentials.js';
import type { ServiceContext } from './context.js';
import { ServiceError } from './service-error.js';

/** The issuer record as stored in `record_json`: the registration shape without its secrets. */
export type StoredIssuerRecord = Omit<IssuerRecord, 'claveHacienda' | 'pinCertificado' | 'certificadoHacienda'>;

/** What `secrets_enc` holds (sealed). `claveHacienda` is kept exactly as sent (base64 per the spec). */
export interface IssuerSecrets {
  claveHacienda: string;
  pinCertificado: string;
  certificadoHacienda: string;
  /**
   * The key and certificates the .p12 holds, decoded once at registration (PKCS#8 and X.509 DER). Opening a
   * .p12 is PKCS#12 key derivation in JavaScript (~60 ms, and garbage); every later signing process uses this.
   * Sealed with the .p12 and its PIN, which give the same key. Absent in issuers saved before it existed.
   */
  signingKey?: SigningKeyPair;
}

export interface IssuerForSigning {
  /** issuers.id */
  id: number;
  /** The full record, secrets included (for the document builder and the Hacienda credentials). */
  record: IssuerRecord;
  creds: SigningCredentials;
  updatedAt: number;
}

export interface SaveIssuerResult {
  identificacion: string;
  /** False when an existing issuer was replaced (update). */
  created: boolean;
  /**
   * Update of an issuer whose Hacienda credentials the IdP had refused: the ids of its documents that were held
   * (`credenciales_invalidas`) and are `pendiente` again, their jobs due now (delivery/credentials.ts).
   */
  released?: number[];
}

/** The AAD context the secrets of an issuer are sealed with. */
export function issuerSecretsContext(accountId: number, identificacion: string): string {
  return `issuer:${accountId}:${identificacion}`;
}

/** Registers a new issuer. 400 when the body is invalid, the certificate does not pass, or it exists already. */
export async function registerIssuer(ctx: ServiceContext, accountId: number, body: unknown): Promise<SaveIssuerResult> {
  const issuer = validIssuer(body);
  if (await findIssuer(ctx, accountId, issuer.identificacion)) {
    throw alreadyRegistered(issuer.identificacion);
  }
  const creds = checkCertificate(issuer, new Date(ctx.now()));
  // After the certificate: only who holds the taxpayer's .p12 and PIN learns that another account has the cédula.
  await refuseHeldElsewhere(ctx, accountId, issuer.identificacion);
  const now = ctx.now();
  try {
    await ctx.store.db
      .insertInto('issuers')
      .values({ account_id: accountId, identificacion: issuer.identificacion, ...sealed(ctx, accountId, issuer, creds), created_at: now, updated_at: now })
      .execute();
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    // This account's row, or (a concurrent registration) another account's: the unique index of migration 0020.
    if (await findIssuer(ctx, accountId, issuer.identificacion)) throw alreadyRegistered(issuer.identificacion);
    throw heldElsewhere(issuer.identificacion);
  }
  ctx.logger.info({ accountId, identificacion: issuer.identificacion }, 'issuer registered');
  return { identificacion: issuer.identificacion, created: true };
}

/**
 * Replaces an issuer's record and secrets (same body and required fields as registration). The spec shows
 * no 404 for an update, so an unknown issuer is created (upsert).
 */
export async function updateIssuer(ctx: ServiceContext, accountId: number, body: unknown): Promise<SaveIssuerResult> {
  const issuer = validIssuer(body);
  const creds = checkCertificate(issuer, new Date(ctx.now()));
  for (let attempt = 0; ; attempt++) {
    const existing = await findIssuer(ctx, accountId, issuer.identificacion);
    const now = ctx.now();
    if (existing) {
      // updated_at is part of the credentials cache key: it must change on every update.
      const updatedAt = Math.max(now, existing.updated_at + 1);
      const released = await ctx.store.db.transaction().execute(async (trx) => {
        // New credentials: a refusal of the old ones no longer holds the issuer's documents. The issuer row is
        // locked first, as the worker's refusal does (store/issuer-credentials.ts).
        const refused = await trx
          .updateTable('issuers')
          .set({ hacienda_refused_at: null, hacienda_refused_detail: null })
          .where('id', '=', existing.id)
          .where('hacienda_refused_at', 'is not', null)
          .executeTakeFirst();
        await trx
          .updateTable('issuers')
          .set({ ...sealed(ctx, accountId, issuer, creds), updated_at: updatedAt })
          .where('id', '=', existing.id)
          .execute();
        return Number(refused.numUpdatedRows) === 1 ? releaseIssuer(trx, existing.id, now) : [];
      });
      ctx.logger.info({ accountId, identificacion: issuer.identificacion, ...(released.length > 0 ? { released: released.length } : {}) }, 'issuer updated');
      return { identificacion: issuer.identificacion, created: false, ...(released.length > 0 ? { released } : {}) };
    }
    await refuseHeldElsewhere(ctx, accountId, issuer.identificacion);
    try {
      await ctx.store.db
        .insertInto('issuers')
        .values({ account_id: accountId, identificacion: issuer.identificacion, ...sealed(ctx, accountId, issuer, creds), created_at: now, updated_at: now })
        .execute();
      ctx.logger.info({ accountId, identificacion: issuer.identificacion }, 'issuer registered (update of an unknown issuer)');
      return { identificacion: issuer.identificacion, created: true };
    } catch (e) {
      // A concurrent registration won: update it instead (another account's: refused above on the next attempt).
      if (!isUniqueViolation(e) || attempt > 0) throw e;
    }
  }
}

/** The issuer row of an account (no secrets opened), or undefined. */
export async function findIssuer(ctx: ServiceContext, accountId: number, identificacion: string | number): Promise<Issuer | undefined> {
  return ctx.store.db
    .selectFrom('issuers')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('identificacion', '=', normalizeId(identificacion))
    .executeTakeFirst();
}

/** The spec's issuer lookup (six fields) or null when the account has no such issuer. */
export async function getIssuerPublic(ctx: ServiceContext, accountId: number, identificacion: string | number): Promise<IssuerSummary | null> {
  const row = await ctx.store.db
    .selectFrom('issuers')
    .select(['record_json'])
    .where('account_id', '=', accountId)
    .where('identificacion', '=', normalizeId(identificacion))
    .executeTakeFirst();
  if (!row) return null;
  const r = JSON.parse(row.record_json) as StoredIssuerRecord;
  return {
    identificacion: Number(r.identificacion),
    tipoIdentificacion: Number(r.tipoIdentificacion),
    nombreComercial: r.nombreComercial,
    correoElectronico: r.correoElectronico,
    telefono: r.telefono,
    ambiente: Number(r.ambiente),
  };
}

/** An issuer as listed: its record without secrets, when it was saved, and when its certificate ends (epoch ms). */
export type ListedIssuer = StoredIssuerRecord & { createdAt: number; updatedAt: number; certificateUntil?: number };

/** Every issuer of an account without secrets (CLI listings), with its certificate's end. */
export async function listIssuers(ctx: ServiceContext, accountId: number): Promise<ListedIssuer[]> {
  const rows = await ctx.store.db.selectFrom('issuers').selectAll().where('account_id', '=', accountId).orderBy('identificacion').execute();
  return rows.map((r) => {
    const until = certificateUntil(ctx, r);
    return { ...(JSON.parse(r.record_json) as StoredIssuerRecord), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at), ...(until !== undefined ? { certificateUntil: until } : {}) };
  });
}

const untilCache = new WeakMap<ServiceContext, Map<number, { updatedAt: number; until: number | undefined }>>();

/**
 * When the issuer's certificate ends (its notAfter, epoch ms), from the certificate sealed with its key at
 * registration or update (or, for issuers saved before that, from its .p12); undefined when it cannot be read.
 * Cached per issuer id and updated_at (the service's daily check reads every issuer).
 */
export function certificateUntil(ctx: ServiceContext, row: Issuer): number | undefined {
  let cache = untilCache.get(ctx);
  if (!cache) untilCache.set(ctx, (cache = new Map()));
  const updatedAt = Number(row.updated_at);
  const hit = cache.get(row.id);
  if (hit && hit.updatedAt === updatedAt) return hit.until;
  let until: number | undefined;
  try {
    const secrets = ctx.secrets.openJson<IssuerSecrets>(row.secrets_enc, issuerSecretsContext(row.account_id, row.identificacion));
    until = secrets.signingKey
      ? certificateInfo(Buffer.from(secrets.signingKey.certificate, 'base64')).notAfter.getTime()
      : describeP12(p12Bytes(secrets.certificadoHacienda), secrets.pinCertificado, new Date(ctx.now())).certificate.notAfter.getTime();
  } catch {
    until = undefined;
  }
  cache.set(row.id, { updatedAt, until });
  return until;
}

/** The secret-free view of a stored record: a whitelist, so a secret can never ride along (CLI and API listings). */
export function issuerDetails(r: ListedIssuer): IssuerDetails {
  const u = r.ubicacion;
  return {
    identificacion: String(r.identificacion),
    tipoIdentificacion: String(r.tipoIdentificacion),
    ...(r.nombre !== undefined ? { nombre: r.nombre } : {}),
    nombreComercial: r.nombreComercial,
    codigoActividad: String(r.codigoActividad),
    sucursal: Number(r.sucursal),
    telefono: r.telefono,
    correoElectronico: r.correoElectronico,
    ubicacion: {
      provincia: u.provincia,
      canton: u.canton,
      distrito: u.distrito,
      ...(u.barrio !== undefined ? { barrio: u.barrio } : {}),
      direccion: u.direccion,
    },
    ambiente: Number(r.ambiente),
    usuarioHacienda: r.usuarioHacienda,
    ...(r.proveedorSistemas !== undefined ? { proveedorSistemas: r.proveedorSistemas } : {}),
    registeredAt: new Date(r.createdAt).toISOString(),
    updatedAt: new Date(r.updatedAt).toISOString(),
    ...(r.certificateUntil !== undefined ? { certificateUntil: new Date(r.certificateUntil).toISOString() } : {}),
  };
}

/** The account's issuers as IssuerDetails (one when `identificacion` is given), by identificación. */
export async function listIssuerDetails(ctx: ServiceContext, accountId: number, identificacion?: string): Promise<IssuerDetails[]> {
  const all = await listIssuers(ctx, accountId);
  const id = identificacion === undefined ? undefined : normalizeId(identificacion);
  return all.filter((r) => id === undefined || String(r.identificacion) === id).map(issuerDetails);
}

interface CacheEntry {
  updatedAt: number;
  value: IssuerForSigning;
}
const CACHE_LIMIT = 1_000;
const signingCache = new WeakMap<ServiceContext, Map<number, CacheEntry>>();

/**
 * The issuer with its secrets and signing credentials, or null when the account has no such issuer. The
 * credentials come from the key sealed at registration (or, for issuers saved before that, from opening the
 * .p12: ~60 ms), and are cached in process per issuer id and updated_at. Throws ServiceError 400
 * when the stored certificate no longer opens or is not valid now (e.g. it expired after registration).
 */
export async function loadIssuerForSigning(
  ctx: ServiceContext,
  accountId: number,
  identificacion: string | number,
): Promise<IssuerForSigning | null> {
  const row = await findIssuer(ctx, accountId, identificacion);
  return row ? issuerForSigning(ctx, row) : null;
}

/** Same as loadIssuerForSigning for a row already read (e.g. by the worker, by issuer id). */
export function issuerForSigning(ctx: ServiceContext, row: Issuer): IssuerForSigning {
  let cache = signingCache.get(ctx);
  if (!cache) signingCache.set(ctx, (cache = new Map()));
  const now = new Date(ctx.now());
  const updatedAt = Number(row.updated_at);
  const hit = cache.get(row.id);
  if (hit && hit.updatedAt === updatedAt) {
    const validity = validityAt(hit.value.creds.certificate, now);
    if (validity !== 'valid') throw certificateProblem(new SigningError(validity === 'expired' ? 'CERT_EXPIRED' : 'CERT_NOT_YET_VALID', validity), hit.value.creds, true);
    return hit.value;
  }
  const { signingKey, ...secrets } = ctx.secrets.openJson<IssuerSecrets>(row.secrets_enc, issuerSecretsContext(row.account_id, row.identificacion));
  const record: IssuerRecord = { ...(JSON.parse(row.record_json) as StoredIssuerRecord), ...secrets };
  let creds: SigningCredentials;
  try {
    creds = signingKey ? credentialsFromKeyPair(signingKey, now) : loadP12(p12Bytes(secrets.certificadoHacienda), secrets.pinCertificado, now);
  } catch (e) {
    throw certificateProblem(e, undefined, true);
  }
  const value: IssuerForSigning = { id: row.id, record, creds, updatedAt };
  cache.delete(row.id);
  cache.set(row.id, { updatedAt, value });
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  return value;
}

/** The issuer's full record, its secrets opened (`fecr doctor` checks them as Hacienda would); no certificate check. */
export function openIssuerRecord(ctx: ServiceContext, row: Issuer): IssuerRecord {
  const { signingKey: _key, ...secrets } = ctx.secrets.openJson<IssuerSecrets>(row.secrets_enc, issuerSecretsContext(row.account_id, row.identificacion));
  return { ...(JSON.parse(row.record_json) as StoredIssuerRecord), ...secrets };
}

// --- internals -----------------------------------------------------------------------------------

function validIssuer(body: unknown): IssuerRecord {
  const r = parseIssuer(body);
  if (!r.ok) throw ServiceError.validation(r.findings);
  return r.issuer;
}

function alreadyRegistered(identificacion: string): ServiceError {
  return ServiceError.badRequest(`El emisor ${identificacion} ya está registrado; use /api/actualizar/emisor para modificarlo`, [
    { path: 'identificacion', message: 'ya está registrado' },
  ]);
}

/**
 * One numbering per cédula per service (issue 36): Hacienda numbers a taxpayer's comprobantes once, whichever account
 * of this service sends them, so two accounts issuing for one cédula, each numbering from 1, would have the second's
 * first document rejected -99 (a consecutivo already used, quoting the other's clave). A cédula another account holds
 * is refused (400; the message names the cédula, never the other account). Sharing the numbering instead would make
 * one account's series depend on another's documents and let it read their numbers, across the accounts' isolation.
 * Data from before (two accounts that already hold one cédula) stays as it is: migration 0020's unique index covers
 * only the rows after them, and this check the rest.
 */
async function refuseHeldElsewhere(ctx: ServiceContext, accountId: number, identificacion: string): Promise<void> {
  const other = await ctx.store.db.selectFrom('issuers').select('id').where('identificacion', '=', identificacion).where('account_id', '<>', accountId).executeTakeFirst();
  if (other) throw heldElsewhere(identificacion);
}

function heldElsewhere(identificacion: string): ServiceError {
  return ServiceError.badRequest(
    `El emisor ${identificacion} ya está registrado en otra cuenta de este servicio; una identificación numera sus comprobantes en una sola cuenta`,
    [{ path: 'identificacion', message: 'ya es emisor de otra cuenta de este servicio' }],
  );
}

function normalizeId(identificacion: string | number): string {
  return String(identificacion).trim();
}

function sealed(ctx: ServiceContext, accountId: number, issuer: IssuerRecord, creds: SigningCredentials): { record_json: string; secrets_enc: string } {
  const { claveHacienda, pinCertificado, certificadoHacienda, ...record } = issuer;
  const secrets: IssuerSecrets = { claveHacienda, pinCertificado, certificadoHacienda, signingKey: exportKeyPair(creds) };
  return {
    record_json: JSON.stringify(record satisfies StoredIssuerRecord),
    secrets_enc: ctx.secrets.sealJson(secrets, issuerSecretsContext(accountId, issuer.identificacion)),
  };
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function p12Bytes(certificadoHacienda: string): Buffer {
  const text = certificadoHacienda.replace(/\s+/g, '');
  if (!BASE64.test(text) || text.length % 4 === 1) {
    throw new SigningError('BAD_P12', 'not base64');
  }
  return Buffer.from(text, 'base64');
}

/** The certificate must open with the PIN, hold a key, be valid now and belong to `identificacion`. */
function checkCertificate(issuer: IssuerRecord, now: Date): SigningCredentials {
  let creds: SigningCredentials;
  try {
    creds = loadP12(p12Bytes(issuer.certificadoHacienda), issuer.pinCertificado, now);
  } catch (e) {
    throw certificateProblem(e);
  }
  const owner = creds.certificate.identificacion;
  if (owner === undefined) {
    throw ServiceError.badRequest(
      `El certificado no indica a qué identificación pertenece (su sujeto no tiene serialNumber); no pertenece a la identificación ${issuer.identificacion}`,
      [{ path: 'certificadoHacienda', message: 'el certificado no tiene la identificación del titular' }],
    );
  }
  if (owner !== issuer.identificacion) {
    throw ServiceError.badRequest(`El certificado no pertenece a la identificación ${issuer.identificacion} (pertenece a ${owner})`, [
      { path: 'certificadoHacienda', message: `el certificado es de la identificación ${owner}` },
    ]);
  }
  return creds;
}

function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** A SigningError (or anything loadP12 threw) as a 400 with a clear Spanish message. */
function certificateProblem(e: unknown, creds?: SigningCredentials, stored = false): ServiceError {
  if (!(e instanceof SigningError)) {
    return ServiceError.badRequest('certificadoHacienda no es un certificado .p12 válido codificado en base64', [
      { path: 'certificadoHacienda', message: 'no es un archivo .p12 legible' },
    ]);
  }
  const of = stored ? 'El certificado del emisor' : 'El certificado';
  const cert = creds?.certificate;
  let message: string;
  let path = 'certificadoHacienda';
  switch (e.code) {
    case 'WRONG_PIN':
      message = 'El PIN del certificado es incorrecto';
      path = 'pinCertificado';
      break;
    case 'NO_PRIVATE_KEY':
      message = `${of} no contiene la llave privada; exporte el .p12 con su llave`;
      break;
    case 'NO_CERTIFICATE':
      message = `${of} (.p12) no contiene un certificado para su llave privada`;
      break;
    case 'CERT_EXPIRED': {
      const when = cert ? isoDate(cert.notAfter) : /expired on (\S+?)[;.]?\s/.exec(e.message)?.[1]?.slice(0, 10);
      message = `${of} está vencido${when ? ` (venció el ${when})` : ''}`;
      break;
    }
    case 'CERT_NOT_YET_VALID': {
      const when = cert ? isoDate(cert.notBefore) : /valid until (\S+?)\.?$/.exec(e.message)?.[1]?.slice(0, 10);
      message = `${of} aún no es válido${when ? ` (rige a partir del ${when})` : ''}`;
      break;
    }
    default:
      message = 'certificadoHacienda no es un certificado .p12 válido codificado en base64';
  }
  return ServiceError.badRequest(message, [{ path, message }]);
}

/** A unique-constraint violation in SQLite (better-sqlite3) or PostgreSQL (pg). */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
