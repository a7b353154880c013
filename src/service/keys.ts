/**
 * The auth server's token-signing keys: RSA-2048 (RS256), generated on first start, the private key stored as a
 * sealed PKCS#8 PEM in `signing_keys`. `kid` = RFC 7638 thumbprint of the public JWK. Rotation adds a new active
 * key and retires the previous one; a retired key stays in the JWKS until its last token has expired.
 * The keys live in the store (shared by every process); each process caches them briefly.
 */
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8, type CryptoKey } from 'jose';
import type { Store } from '../store/index.js';
import type { ServiceContext } from './context.js';

/** Token lifetime (s): exp - iat. */
export const TOKEN_LIFETIME_SECONDS = 28800;
/** How long a process trusts its cached view of the keys (ms). */
export const KEY_CACHE_TTL_MS = 10_000;
/**
 * A retired key stays published until retired_at + token lifetime + this grace (ms): a process whose cache
 * still had the old key as current may sign with it for up to KEY_CACHE_TTL_MS after the rotation.
 */
export const RETIRED_KEY_GRACE_MS = KEY_CACHE_TTL_MS;

export interface PublicJwk {
  kty: 'RSA';
  n: string;
  e: string;
  kid: string;
  alg: 'RS256';
  use: 'sig';
}

export interface Jwks {
  keys: PublicJwk[];
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

export interface KeyInfo {
  kid: string;
  /** Epoch ms. */
  createdAt: number;
  retiredAt: number | null;
  /** Whether the key is in the JWKS now. */
  published: boolean;
  /** Whether new tokens are signed with it. */
  current: boolean;
}

interface KeyRecord {
  kid: string;
  privateKeyEnc: string;
  jwk: PublicJwk;
  createdAt: number;
  retiredAt: number | null;
}

interface CacheEntry {
  loadedAt: number;
  records: KeyRecord[];
  jwks: Jwks;
  current?: Promise<SigningKey>;
}

const cache = new WeakMap<Store, CacheEntry>();

const privateKeyAad = (kid: string): string => `fecr.signing-key:${kid}`;

/** Drops this process's cached keys of a store (rotation in this process does it itself). */
export function clearKeyCache(store: Store): void {
  cache.delete(store);
}

function isPublished(r: KeyRecord, now: number): boolean {
  return r.retiredAt === null || now < r.retiredAt + TOKEN_LIFETIME_SECONDS * 1000 + RETIRED_KEY_GRACE_MS;
}

/** Newest active key first. */
function byNewest(a: KeyRecord, b: KeyRecord): number {
  return b.createdAt - a.createdAt || (a.kid < b.kid ? 1 : a.kid > b.kid ? -1 : 0);
}

async function load(ctx: ServiceContext): Promise<CacheEntry> {
  const now = ctx.now();
  const hit = cache.get(ctx.store);
  if (hit && now >= hit.loadedAt && now - hit.loadedAt < KEY_CACHE_TTL_MS) return hit;
  const rows = await ctx.store.db.selectFrom('signing_keys').selectAll().execute();
  const records: KeyRecord[] = rows
    .map((r) => ({
      kid: r.kid,
      privateKeyEnc: r.private_key_enc,
      jwk: JSON.parse(r.public_jwk) as PublicJwk,
      createdAt: Number(r.created_at),
      retiredAt: r.retired_at === null ? null : Number(r.retired_at),
    }))
    .sort(byNewest);
  const jwks: Jwks = {
    keys: records.filter((r) => isPublished(r, now)).map((r) => ({ kty: 'RSA', n: r.jwk.n, e: r.jwk.e, kid: r.kid, alg: 'RS256', use: 'sig' })),
  };
  const entry: CacheEntry = { loadedAt: now, records, jwks };
  // Keep the imported private key across reloads while the current kid does not change.
  const active = records.find((r) => r.retiredAt === null);
  if (hit?.current && active) {
    const prev = await hit.current.catch(() => undefined);
    if (prev?.kid === active.kid) entry.current = Promise.resolve(prev);
  }
  cache.set(ctx.store, entry);
  return entry;
}

async function newKeyRow(ctx: ServiceContext, now: number): Promise<{ kid: string; row: { kid: string; private_key_enc: string; public_jwk: string; created_at: number; retired_at: null } }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const pub = await exportJWK(publicKey);
  if (pub.kty !== 'RSA' || !pub.n || !pub.e) throw new Error('unexpected public key');
  const kid = await calculateJwkThumbprint({ kty: 'RSA', n: pub.n, e: pub.e }, 'sha256');
  const jwk: PublicJwk = { kty: 'RSA', n: pub.n, e: pub.e, kid, alg: 'RS256', use: 'sig' };
  const pem = await exportPKCS8(privateKey);
  return {
    kid,
    row: { kid, private_key_enc: ctx.secrets.seal(pem, privateKeyAad(kid)), public_jwk: JSON.stringify(jwk), created_at: now, retired_at: null },
  };
}

/** Creates the first signing key when there is no active one (first start). Idempotent. */
export async function ensureSigningKey(ctx: ServiceContext): Promise<{ kid: string; created: boolean }> {
  const active = await ctx.store.db
    .selectFrom('signing_keys')
    .select(['kid', 'created_at'])
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .executeTakeFirst();
  if (active) return { kid: active.kid, created: false };
  const { kid, row } = await newKeyRow(ctx, ctx.now());
  await ctx.store.db.insertInto('signing_keys').values(row).execute();
  clearKeyCache(ctx.store);
  return { kid, created: true };
}

/** Adds a new active key and retires every previous active key (they stay published until their tokens expire). */
export async function rotateKey(ctx: ServiceContext): Promise<{ kid: string; retired: string[] }> {
  const now = ctx.now();
  const { kid, row } = await newKeyRow(ctx, now);
  const retired = await ctx.store.db.transaction().execute(async (trx) => {
    const previous = await trx.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).execute();
    await trx.updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null).execute();
    await trx.insertInto('signing_keys').values(row).execute();
    return previous.map((p) => p.kid);
  });
  clearKeyCache(ctx.store);
  return { kid, retired };
}

/** The key new tokens are signed with (the newest active key). Throws when there is none (call ensureSigningKey). */
export async function currentKey(ctx: ServiceContext): Promise<SigningKey> {
  const entry = await load(ctx);
  if (!entry.current) {
    const active = entry.records.find((r) => r.retiredAt === null);
    if (!active) throw new Error('no active signing key: run ensureSigningKey first');
    entry.current = importPKCS8(ctx.secrets.open(active.privateKeyEnc, privateKeyAad(active.kid)), 'RS256').then((privateKey) => ({
      kid: active.kid,
      privateKey,
    }));
    entry.current.catch(() => {
      if (cache.get(ctx.store) === entry) cache.delete(ctx.store);
    });
  }
  return entry.current;
}

/** The public JWKS: every active key plus retired keys whose tokens may still be unexpired. Public members only. */
export async function publicJwks(ctx: ServiceContext): Promise<Jwks> {
  return (await load(ctx)).jwks;
}

/** Every key with its state (for `fecr keys list`). */
export async function listKeys(ctx: ServiceContext): Promise<KeyInfo[]> {
  const rows = await ctx.store.db.selectFrom('signing_keys').select(['kid', 'created_at', 'retired_at']).execute();
  const now = ctx.now();
  const records = rows.map((r) => ({
    kid: r.kid,
    createdAt: Number(r.created_at),
    retiredAt: r.retired_at === null ? null : Number(r.retired_at),
  }));
  const current = records
    .filter((r) => r.retiredAt === null)
    .sort((a, b) => b.createdAt - a.createdAt || (a.kid < b.kid ? 1 : -1))[0]?.kid;
  return records
    .sort((a, b) => a.createdAt - b.createdAt)
    .map((r) => ({
      ...r,
      published: r.retiredAt === null || now < r.retiredAt + TOKEN_LIFETIME_SECONDS * 1000 + RETIRED_KEY_GRACE_MS,
      current: r.kid === current,
    }));
}
