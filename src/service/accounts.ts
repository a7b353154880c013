/**
 * Client accounts: the `base` a token names, its argon2id password hash, its disabled flag and its webhook
 * (URL + Standard Webhooks signing secret, sealed at rest). `verifyCredentials` runs exactly one argon2 verify
 * whatever the outcome, so an unknown, disabled or wrong-password login takes the same time.
 */
import type { Store } from '../store/index.js';
import type { Account as AccountRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { checkWebhookTarget, WebhookTargetError } from './webhook-targets.js';

/** 1-64 characters of `[A-Za-z0-9_.-]`. */
export const BASE_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

/** argon2id (the library's default algorithm) with the OWASP baseline: 19 MiB, 2 passes, 1 lane. */
const ARGON2_OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1, outputLen: 32 } as const;

export type AccountErrorCode = 'invalid_base' | 'invalid_password' | 'account_exists' | 'account_not_found' | 'invalid_webhook_url';

/** A use-case error the CLI prints as one line (`code` for scripts, `message` for people). */
export class AccountError extends Error {
  constructor(
    readonly code: AccountErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AccountError';
  }
}

/** An account as the service shows it (never the hash or the secret). */
export interface AccountInfo {
  id: number;
  base: string;
  disabled: boolean;
  webhookUrl: string | null;
  /** Epoch ms. */
  createdAt: number;
  updatedAt: number;
}

export interface CreateAccountInput {
  base: string;
  password: string;
  webhookUrl?: string;
}

export interface WebhookConfig {
  url: string;
  /** `whsec_<base64>`: the Standard Webhooks signing secret. */
  secret: string;
}

function toInfo(row: AccountRow): AccountInfo {
  return {
    id: Number(row.id),
    base: row.base,
    disabled: Number(row.disabled) === 1,
    webhookUrl: row.webhook_url,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

// Bumped (per store, in this process) whenever an account is disabled/enabled, so caches of "this account
// may use its tokens" (tokens.ts) drop their entries at once instead of waiting for their TTL.
const generations = new WeakMap<Store, number>();
/** Changes whenever an account of this store changes state in this process. */
export function accountsGeneration(store: Store): number {
  return generations.get(store) ?? 0;
}
function bumpGeneration(store: Store): void {
  generations.set(store, accountsGeneration(store) + 1);
}

function checkBase(base: string): void {
  if (typeof base !== 'string' || !BASE_PATTERN.test(base)) {
    throw new AccountError('invalid_base', `invalid account name ${JSON.stringify(base)}: use 1 to 64 characters among A-Z a-z 0-9 _ . -`);
  }
}

function checkPassword(password: string): void {
  if (typeof password !== 'string' || password.length < MIN_PASSWORD_LENGTH) {
    throw new AccountError('invalid_password', `the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new AccountError('invalid_password', `the password must have at most ${MAX_PASSWORD_LENGTH} characters`);
  }
}

/**
 * The URL's shape, then (hosted: ctx.webhookTargets.publicOnly) its target: a literal IP or every address its name
 * resolves to must be public (see webhook-targets.ts). Throws AccountError invalid_webhook_url.
 */
async function checkWebhookUrl(ctx: ServiceContext, url: string): Promise<void> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new AccountError('invalid_webhook_url', `invalid webhook URL ${JSON.stringify(url)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new AccountError('invalid_webhook_url', `the webhook URL must use http or https: ${url}`);
  }
  if (u.username || u.password) throw new AccountError('invalid_webhook_url', 'the webhook URL must not carry credentials');
  try {
    await checkWebhookTarget(ctx.webhookTargets, u);
  } catch (e) {
    if (e instanceof WebhookTargetError) throw new AccountError('invalid_webhook_url', `webhook URL refused: ${e.message}`);
    throw e;
  }
}

/** argon2 (a native addon) is loaded on the first hash or verify: most local commands never need it. */
function argon2(): Promise<typeof import('@node-rs/argon2')> {
  return import('@node-rs/argon2');
}

export async function hashPassword(password: string): Promise<string> {
  return (await argon2()).hash(password, ARGON2_OPTIONS);
}

let dummyHash: Promise<string> | undefined;
/** A hash with the same parameters as real ones, of a password nobody knows; verified when there is no account. */
function getDummyHash(ctx: ServiceContext): Promise<string> {
  dummyHash ??= hashPassword(ctx.randomBytes(32).toString('base64'));
  return dummyHash;
}

/** Computes the dummy hash ahead of the first login, so that first unknown-account login is not slower. */
export async function warmUpCredentialChecks(ctx: ServiceContext): Promise<void> {
  await getDummyHash(ctx);
}

async function safeVerify(hashed: string, password: string): Promise<boolean> {
  try {
    return await (await argon2()).verify(hashed, password);
  } catch {
    return false;
  }
}

/** `whsec_` + base64 of 24 random bytes. */
function newWebhookSecret(ctx: ServiceContext): string {
  return `whsec_${ctx.randomBytes(24).toString('base64')}`;
}

const webhookAad = (base: string): string => `fecr.account.webhook-secret:${base}`;

async function getRow(ctx: ServiceContext, base: string): Promise<AccountRow> {
  const row = await ctx.store.db.selectFrom('accounts').selectAll().where('base', '=', base).executeTakeFirst();
  if (!row) throw new AccountError('account_not_found', `no account named ${JSON.stringify(base)}`);
  return row;
}

function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown };
  return err?.code === 'SQLITE_CONSTRAINT_UNIQUE' || err?.code === '23505' || /UNIQUE constraint failed/i.test(String(err?.message ?? ''));
}

/**
 * Creates an account. With `webhookUrl`, also generates its webhook secret and returns it (once; it is
 * stored sealed). Throws AccountError invalid_base | invalid_password | invalid_webhook_url | account_exists.
 */
export async function createAccount(ctx: ServiceContext, input: CreateAccountInput): Promise<{ account: AccountInfo; webhookSecret: string | null }> {
  checkBase(input.base);
  checkPassword(input.password);
  if (input.webhookUrl !== undefined) await checkWebhookUrl(ctx, input.webhookUrl);
  const exists = await ctx.store.db.selectFrom('accounts').select('id').where('base', '=', input.base).executeTakeFirst();
  if (exists) throw new AccountError('account_exists', `an account named ${JSON.stringify(input.base)} already exists`);
  const passwordHash = await hashPassword(input.password);
  const secret = input.webhookUrl !== undefined ? newWebhookSecret(ctx) : null;
  const now = ctx.now();
  try {
    await ctx.store.db
      .insertInto('accounts')
      .values({
        base: input.base,
        password_hash: passwordHash,
        disabled: 0,
        webhook_url: input.webhookUrl ?? null,
        webhook_secret_enc: secret === null ? null : ctx.secrets.seal(secret, webhookAad(input.base)),
        created_at: now,
        updated_at: now,
      })
      .execute();
  } catch (e) {
    if (isUniqueViolation(e)) throw new AccountError('account_exists', `an account named ${JSON.stringify(input.base)} already exists`);
    throw e;
  }
  return { account: toInfo(await getRow(ctx, input.base)), webhookSecret: secret };
}

/** Every account, by name. */
export async function listAccounts(ctx: ServiceContext): Promise<AccountInfo[]> {
  const rows = await ctx.store.db.selectFrom('accounts').selectAll().orderBy('base').execute();
  return rows.map(toInfo);
}

/** The account named `base`, or null. */
export async function findAccount(ctx: ServiceContext, base: string): Promise<AccountInfo | null> {
  const row = await ctx.store.db.selectFrom('accounts').selectAll().where('base', '=', base).executeTakeFirst();
  return row ? toInfo(row) : null;
}

async function setDisabled(ctx: ServiceContext, base: string, disabled: boolean): Promise<AccountInfo> {
  await getRow(ctx, base);
  await ctx.store.db.updateTable('accounts').set({ disabled: disabled ? 1 : 0, updated_at: ctx.now() }).where('base', '=', base).execute();
  bumpGeneration(ctx.store);
  return toInfo(await getRow(ctx, base));
}

/** Disables an account: its logins fail and its tokens stop verifying. Throws account_not_found. */
export function disableAccount(ctx: ServiceContext, base: string): Promise<AccountInfo> {
  return setDisabled(ctx, base, true);
}

/** Re-enables a disabled account. Throws account_not_found. */
export function enableAccount(ctx: ServiceContext, base: string): Promise<AccountInfo> {
  return setDisabled(ctx, base, false);
}

/** Replaces the password. Throws account_not_found | invalid_password. Issued tokens stay valid (revoke them). */
export async function setPassword(ctx: ServiceContext, base: string, password: string): Promise<void> {
  checkPassword(password);
  await getRow(ctx, base);
  const passwordHash = await hashPassword(password);
  await ctx.store.db.updateTable('accounts').set({ password_hash: passwordHash, updated_at: ctx.now() }).where('base', '=', base).execute();
}

/**
 * Sets the webhook URL and generates a new signing secret, returned once (it replaces any previous secret).
 * Throws account_not_found | invalid_webhook_url.
 */
export async function setWebhook(ctx: ServiceContext, base: string, url: string): Promise<{ secret: string }> {
  await checkWebhookUrl(ctx, url);
  await getRow(ctx, base);
  const secret = newWebhookSecret(ctx);
  await ctx.store.db
    .updateTable('accounts')
    .set({ webhook_url: url, webhook_secret_enc: ctx.secrets.seal(secret, webhookAad(base)), updated_at: ctx.now() })
    .where('base', '=', base)
    .execute();
  return { secret };
}

/** The account's webhook URL and (opened) secret, or null when it has none or the account does not exist. */
export async function getWebhook(ctx: ServiceContext, accountId: number): Promise<WebhookConfig | null> {
  const row = await ctx.store.db
    .selectFrom('accounts')
    .select(['base', 'webhook_url', 'webhook_secret_enc'])
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (!row || !row.webhook_url || !row.webhook_secret_enc) return null;
  return { url: row.webhook_url, secret: ctx.secrets.open(row.webhook_secret_enc, webhookAad(row.base)) };
}

/**
 * The account when `password` is its password and it is enabled; null otherwise. Always one argon2 verify
 * (against a dummy hash when the account is unknown or disabled), so the time does not tell the cases apart.
 */
export async function verifyCredentials(ctx: ServiceContext, base: string, password: string): Promise<AccountInfo | null> {
  const row =
    typeof base === 'string' && BASE_PATTERN.test(base)
      ? await ctx.store.db.selectFrom('accounts').selectAll().where('base', '=', base).executeTakeFirst()
      : undefined;
  const usable = row !== undefined && Number(row.disabled) !== 1;
  const hashed = usable ? row.password_hash : await getDummyHash(ctx);
  const ok = await safeVerify(hashed, typeof password === 'string' ? password : '');
  return usable && ok ? toInfo(row) : null;
}

/**
 * Points the account's webhook at `url` (or at nothing, null) keeping its signing secret, so receivers keep
 * verifying; an account without a secret gets one, returned once (else `secret` is null). `fecr webhooks listen`
 * uses it to redirect deliveries for a while and to put the previous URL back. Throws account_not_found |
 * invalid_webhook_url.
 */
export async function pointWebhook(ctx: ServiceContext, accountId: number, url: string | null): Promise<{ url: string | null; secret: string | null }> {
  if (url !== null) await checkWebhookUrl(ctx, url);
  const row = await ctx.store.db.selectFrom('accounts').select(['base', 'webhook_secret_enc']).where('id', '=', accountId).executeTakeFirst();
  if (!row) throw new AccountError('account_not_found', `no account with id ${accountId}`);
  const secret = url !== null && !row.webhook_secret_enc ? newWebhookSecret(ctx) : null;
  await ctx.store.db
    .updateTable('accounts')
    .set({ webhook_url: url, ...(secret !== null ? { webhook_secret_enc: ctx.secrets.seal(secret, webhookAad(row.base)) } : {}), updated_at: ctx.now() })
    .where('id', '=', accountId)
    .execute();
  return { url, secret };
}

/** The account's webhook URL (null when it has none). */
export async function webhookUrlOf(ctx: ServiceContext, accountId: number): Promise<string | null> {
  const row = await ctx.store.db.selectFrom('accounts').select(['webhook_url']).where('id', '=', accountId).executeTakeFirst();
  if (!row) throw new AccountError('account_not_found', `no account with id ${accountId}`);
  return row.webhook_url;
}
