// Accounts, signing keys and tokens as use cases, on a real SQLite file in a temp dir.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveEndpoints } from '../src/hacienda/index.js';
import {
  AccountError,
  createAccount,
  disableAccount,
  enableAccount,
  findAccount,
  getWebhook,
  listAccounts,
  setPassword,
  setWebhook,
  verifyCredentials,
} from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import {
  clearKeyCache,
  currentKey,
  ensureSigningKey,
  listKeys,
  publicJwks,
  rotateKey,
  RETIRED_KEY_GRACE_MS,
  TOKEN_LIFETIME_SECONDS,
} from '../src/service/keys.js';
import { SecretBox } from '../src/service/secrets.js';
import { createTokenVerifier, issueToken, pruneRevokedTokens, revokeToken } from '../src/service/tokens.js';
import type { Store } from '../src/store/index.js';
import { openTestStore } from './helpers/stores.js';

let dir: string;
let store: Store;
let clock = Date.now();
let ctx: ServiceContext;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fecr-accounts-'));
  store = await openTestStore({ file: path.join(dir, 'fecr.db') });
  ctx = {
    store,
    secrets: new SecretBox(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    now: () => clock,
    randomBytes,
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: 'http://127.0.0.1:1' }) },
  };
});

afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function accountError(p: Promise<unknown>): Promise<AccountError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(AccountError);
    return e as AccountError;
  }
  throw new Error('expected an AccountError');
}

describe('accounts', () => {
  it('creates an account with an argon2id hash and finds it', async () => {
    const { account, webhookSecret } = await createAccount(ctx, { base: 'acme.cr_1-a', password: 'correcto-1' });
    expect(account).toMatchObject({ base: 'acme.cr_1-a', disabled: false, webhookUrl: null });
    expect(webhookSecret).toBeNull();
    const row = await store.db.selectFrom('accounts').selectAll().where('base', '=', 'acme.cr_1-a').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row.password_hash).not.toContain('correcto-1');
    expect(await findAccount(ctx, 'acme.cr_1-a')).toEqual(account);
    expect(await findAccount(ctx, 'nadie')).toBeNull();
  });

  it('rejects bad names, short passwords, bad webhook URLs and duplicates with typed errors', async () => {
    for (const base of ['', 'a'.repeat(65), 'con espacio', 'ñandú', 'a/b', 'x;drop']) {
      expect((await accountError(createAccount(ctx, { base, password: 'suficiente' }))).code).toBe('invalid_base');
    }
    expect((await accountError(createAccount(ctx, { base: 'corta', password: '1234567' }))).code).toBe('invalid_password');
    expect((await accountError(createAccount(ctx, { base: 'w1', password: 'suficiente', webhookUrl: 'ftp://x' }))).code).toBe('invalid_webhook_url');
    expect((await accountError(createAccount(ctx, { base: 'w2', password: 'suficiente', webhookUrl: 'no es url' }))).code).toBe('invalid_webhook_url');
    expect(await findAccount(ctx, 'w1')).toBeNull();
    await createAccount(ctx, { base: 'dup', password: 'suficiente' });
    const e = await accountError(createAccount(ctx, { base: 'dup', password: 'otra-clave' }));
    expect(e.code).toBe('account_exists');
    expect(e.message).toContain('dup');
    expect((await accountError(disableAccount(ctx, 'nadie'))).code).toBe('account_not_found');
    expect((await accountError(setPassword(ctx, 'nadie', 'suficiente'))).code).toBe('account_not_found');
    expect((await accountError(setWebhook(ctx, 'nadie', 'https://x.test/hook'))).code).toBe('account_not_found');
    expect((await accountError(setPassword(ctx, 'dup', 'corta'))).code).toBe('invalid_password');
  });

  it('lists accounts by name', async () => {
    const names = (await listAccounts(ctx)).map((a) => a.base);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['acme.cr_1-a', 'dup']));
  });

  it('verifies credentials; wrong password, unknown and disabled accounts give null', async () => {
    await createAccount(ctx, { base: 'verif', password: 'la-clave-buena' });
    expect((await verifyCredentials(ctx, 'verif', 'la-clave-buena'))?.base).toBe('verif');
    expect(await verifyCredentials(ctx, 'verif', 'la-clave-mala')).toBeNull();
    expect(await verifyCredentials(ctx, 'no-existe', 'la-clave-buena')).toBeNull();
    expect(await verifyCredentials(ctx, 'bad name!', 'la-clave-buena')).toBeNull();
    const disabled = await disableAccount(ctx, 'verif');
    expect(disabled.disabled).toBe(true);
    expect(await verifyCredentials(ctx, 'verif', 'la-clave-buena')).toBeNull();
    expect((await enableAccount(ctx, 'verif')).disabled).toBe(false);
    expect((await verifyCredentials(ctx, 'verif', 'la-clave-buena'))?.base).toBe('verif');
    await setPassword(ctx, 'verif', 'una-clave-nueva');
    expect(await verifyCredentials(ctx, 'verif', 'la-clave-buena')).toBeNull();
    expect((await verifyCredentials(ctx, 'verif', 'una-clave-nueva'))?.base).toBe('verif');
  });

  it('takes similar time for unknown, disabled and wrong-password checks (one argon2 verify each)', async () => {
    await createAccount(ctx, { base: 'timing', password: 'la-clave-buena' });
    await createAccount(ctx, { base: 'timing-off', password: 'la-clave-buena' });
    await disableAccount(ctx, 'timing-off');
    // The three cases are timed in turns (one of each per round), so a change of load on a shared machine falls
    // on all three alike; the medians of 15 rounds are compared.
    const bases = ['timing', 'no-existe-esta', 'timing-off'];
    const times: number[][] = bases.map(() => []);
    for (let round = -2; round < 15; round++) {
      for (const [i, base] of bases.entries()) {
        const t0 = performance.now();
        expect(await verifyCredentials(ctx, base, 'no-es-la-clave')).toBeNull();
        if (round >= 0) times[i]!.push(performance.now() - t0); // rounds -2 and -1 warm up
      }
    }
    const [wrong, unknown, disabled] = times.map((t) => t.sort((a, b) => a - b)[7] as number) as [number, number, number];
    // An argon2 verify with these parameters costs milliseconds; a skipped one would be ~100x faster.
    expect(wrong).toBeGreaterThan(2);
    for (const t of [unknown, disabled]) {
      expect(t / wrong).toBeGreaterThan(1 / 3);
      expect(t / wrong).toBeLessThan(3);
    }
  });

  it('sets a webhook: whsec_ secret of 24 random bytes, returned once, sealed at rest', async () => {
    const { account, webhookSecret } = await createAccount(ctx, { base: 'hooked', password: 'suficiente', webhookUrl: 'http://127.0.0.1:9/hook' });
    expect(webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(webhookSecret!.slice(6), 'base64')).toHaveLength(24);
    expect(await getWebhook(ctx, account.id)).toEqual({ url: 'http://127.0.0.1:9/hook', secret: webhookSecret });

    const { secret } = await setWebhook(ctx, 'hooked', 'https://example.test/fecr');
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(webhookSecret);
    expect(await getWebhook(ctx, account.id)).toEqual({ url: 'https://example.test/fecr', secret });
    const row = await store.db.selectFrom('accounts').selectAll().where('id', '=', account.id).executeTakeFirstOrThrow();
    expect(row.webhook_secret_enc).not.toContain(secret.slice(6));
    expect(row.webhook_secret_enc).toMatch(/^v1\./);

    // Another master key cannot open it.
    const other: ServiceContext = { ...ctx, secrets: new SecretBox(randomBytes(32)) };
    await expect(getWebhook(other, account.id)).rejects.toThrow();
    const plain = await createAccount(ctx, { base: 'no-hook', password: 'suficiente' });
    expect(await getWebhook(ctx, plain.account.id)).toBeNull();
    expect(await getWebhook(ctx, 999_999)).toBeNull();
  });
});

describe('signing keys', () => {
  it('creates the first key once, sealed, with an RFC 7638 kid', async () => {
    const first = await ensureSigningKey(ctx);
    expect(first.created).toBe(true);
    expect(first.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await ensureSigningKey(ctx)).toEqual({ kid: first.kid, created: false });
    const row = await store.db.selectFrom('signing_keys').selectAll().executeTakeFirstOrThrow();
    expect(row.private_key_enc).toMatch(/^v1\./);
    expect(row.private_key_enc).not.toContain('PRIVATE KEY');
    const jwks = await publicJwks(ctx);
    expect(jwks.keys).toHaveLength(1);
    expect(Object.keys(jwks.keys[0]!).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', kid: first.kid, alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(Buffer.from(jwks.keys[0]!.n, 'base64url')).toHaveLength(256); // 2048 bits
    expect((await currentKey(ctx)).kid).toBe(first.kid);
  });

  it('rotates: new tokens carry the new kid, the old key stays published until its last token expires', async () => {
    const base = 'rotator';
    await createAccount(ctx, { base, password: 'suficiente' });
    const issuer = 'http://auth.test';
    const verify = createTokenVerifier(ctx, { issuer, jwks: 'local' });
    const before = await issueToken(ctx, { base }, { issuer });
    const oldKid = decodeProtectedHeader(before.token).kid!;
    const t0 = clock;
    const { kid: newKid, retired } = await rotateKey(ctx);
    expect(retired).toEqual([oldKid]);
    expect(newKid).not.toBe(oldKid);
    const after = await issueToken(ctx, { base }, { issuer });
    expect(decodeProtectedHeader(after.token).kid).toBe(newKid);
    expect((await publicJwks(ctx)).keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    expect((await verify(`Bearer ${before.token}`))?.base).toBe(base);
    expect((await verify(`Bearer ${after.token}`))?.base).toBe(base);
    const keys = await listKeys(ctx);
    expect(keys.find((k) => k.kid === oldKid)).toMatchObject({ current: false, published: true, retiredAt: t0 });
    expect(keys.find((k) => k.kid === newKid)).toMatchObject({ current: true, published: true, retiredAt: null });

    try {
      // Just before the last old token expires: still published.
      clock = t0 + TOKEN_LIFETIME_SECONDS * 1000 - 1000;
      clearKeyCache(store);
      expect((await publicJwks(ctx)).keys.map((k) => k.kid)).toContain(oldKid);
      // After it (and the cache grace): gone.
      clock = t0 + TOKEN_LIFETIME_SECONDS * 1000 + RETIRED_KEY_GRACE_MS + 1000;
      clearKeyCache(store);
      expect((await publicJwks(ctx)).keys.map((k) => k.kid)).toEqual([newKid]);
      expect((await listKeys(ctx)).find((k) => k.kid === oldKid)?.published).toBe(false);
    } finally {
      clock = Date.now();
      clearKeyCache(store);
    }
  });

  it('issues the exact claims and revokes by jti', async () => {
    const issuer = 'http://auth.test';
    const issued = await issueToken(ctx, { base: 'rotator' }, { issuer });
    expect(issued.expires_in).toBe(28800);
    expect(issued.token_type).toBe('Bearer');
    const claims = decodeJwt(issued.token);
    expect(Object.keys(claims).sort()).toEqual(['aud', 'base', 'exp', 'iat', 'iss', 'jti', 'sub']);
    expect(claims.exp! - claims.iat!).toBe(28800);
    expect(Buffer.from(claims.jti!, 'base64url')).toHaveLength(16);

    const verify = createTokenVerifier(ctx, { issuer, jwks: 'local' });
    const ok = await verify(`Bearer ${issued.token}`);
    expect(ok).toEqual({ base: 'rotator', jti: claims.jti, exp: claims.exp });
    // Revoked in this process: the verifier sees it at once, though it had cached the token as good.
    await revokeToken(ctx, claims.jti!, claims.exp!);
    expect(await verify(`Bearer ${issued.token}`)).toBeNull();
    const row = await store.db.selectFrom('revoked_tokens').selectAll().where('jti', '=', claims.jti!).executeTakeFirstOrThrow();
    expect(row.expires_at).toBe(claims.exp! * 1000);

    // Pruned once expired.
    clock = claims.exp! * 1000 + 1;
    try {
      expect(await pruneRevokedTokens(ctx)).toBeGreaterThanOrEqual(1);
    } finally {
      clock = Date.now();
    }
    expect(await store.db.selectFrom('revoked_tokens').selectAll().where('jti', '=', claims.jti!).executeTakeFirst()).toBeUndefined();
  });

  it('sees a revocation written by another process (no in-process notice) within the state cache TTL', async () => {
    const issuer = 'http://auth.test';
    const issued = await issueToken(ctx, { base: 'rotator' }, { issuer });
    const { jti, exp } = decodeJwt(issued.token);
    const verify = createTokenVerifier(ctx, { issuer, jwks: 'local', stateCacheMs: 1000 });
    expect(await verify(`Bearer ${issued.token}`)).not.toBeNull();
    // Written directly to the store, as `fecr tokens revoke` in another process would.
    await store.db.insertInto('revoked_tokens').values({ jti: jti!, expires_at: exp! * 1000 }).execute();
    const t = clock;
    try {
      clock = t + 1001;
      expect(await verify(`Bearer ${issued.token}`)).toBeNull();
    } finally {
      clock = Date.now();
    }
  });
});
