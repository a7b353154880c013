// Issue 36, item 6, one numbering per cédula per service: a cédula another account of the same service holds is not
// registered again (each account would number from 1 and the second's first document be rejected -99, quoting the
// other's clave). Registration and the update that creates an unknown issuer are refused with the spec's 400 body,
// the message naming the cédula and never the other account; a store that already holds two accounts with one cédula
// still migrates (migration 0020's partial unique index) and keeps both, and no third account gets it. On both stores.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { findIssuer, registerIssuer, updateIssuer } from '../src/service/issuers.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { ServiceError } from '../src/service/service-error.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { issuerOneAccount } from '../src/store/migrations/0021-issuer-one-account.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';

const AUTH_URL = 'http://auth.fecr.test';
const issuer = makeTestIssuer();
const CEDULA = issuer.issuer.identificacion;
const MESSAGE = (id: string) => `El emisor ${id} ya está registrado en otra cuenta de este servicio; una identificación numera sus comprobantes en una sola cuenta`;
const DETAILS = [{ path: 'identificacion', message: 'ya es emisor de otra cuenta de este servicio' }];

let t: TestContext;
let a: number;
let b: number;

beforeAll(async () => {
  t = await makeServiceContext();
  await ensureSigningKey(t.ctx);
  a = (await createAccount(t.ctx, { base: 'empresa-a', password: 'contrasena-a-123' })).account.id;
  b = (await createAccount(t.ctx, { base: 'empresa-b', password: 'contrasena-b-123' })).account.id;
}, 60_000);
afterAll(async () => t?.close());

async function refusal(p: Promise<unknown>): Promise<ServiceError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ServiceError);
  return e as ServiceError;
}

describe('a cédula of another account', () => {
  it('registration and the upserting update are refused (400, the cédula named, not the other account); the holder updates as before', async () => {
    await registerIssuer(t.ctx, a, issuer.issuer);
    for (const attempt of [() => registerIssuer(t.ctx, b, issuer.issuer), () => updateIssuer(t.ctx, b, issuer.issuer)]) {
      const e = await refusal(attempt());
      expect({ status: e.status, code: e.code, message: e.message, details: e.details }).toEqual({ status: 400, code: 'bad_request', message: MESSAGE(CEDULA), details: DETAILS });
      expect(e.message).not.toContain('empresa-a');
    }
    expect(await findIssuer(t.ctx, b, CEDULA)).toBeUndefined();
    await expect(updateIssuer(t.ctx, a, { ...issuer.issuer, nombreComercial: 'Otro nombre S.A.' })).resolves.toMatchObject({ created: false });
  });

  it('POST /api/enviar/emisor answers the spec\'s error body', async () => {
    const app = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const token = (await issueToken(t.ctx, { base: 'empresa-b' }, { issuer: AUTH_URL })).token;
      const res = await request(`${url}/api/enviar/emisor`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(issuer.issuer) });
      expect(res.statusCode).toBe(400);
      expect(await res.body.json()).toEqual({ error: 'bad_request', message: MESSAGE(CEDULA), details: DETAILS });
    } finally {
      await app.close();
    }
  });
});

describe('a store that already has two accounts with one cédula (from before the fix)', () => {
  it('migration 0020 runs on it and keeps both; a third account is refused; new cédulas are unique by the index', async () => {
    const db = t.ctx.store.db;
    // The state of a store from before: the index absent, account b holding the same cédula as a (a copy of a's row).
    await issuerOneAccount.down!(db as never);
    const row = (await findIssuer(t.ctx, a, CEDULA))!;
    const { id: _id, ...copy } = row;
    await db.insertInto('issuers').values({ ...copy, account_id: b }).execute();
    await issuerOneAccount.up(db as never);
    expect((await db.selectFrom('issuers').select('account_id').where('identificacion', '=', CEDULA).orderBy('account_id').execute()).map((r) => Number(r.account_id))).toEqual([a, b]);

    const c = (await createAccount(t.ctx, { base: 'empresa-c', password: 'contrasena-c-123' })).account.id;
    expect((await refusal(registerIssuer(t.ctx, c, issuer.issuer))).message).toBe(MESSAGE(CEDULA));

    // A cédula registered after the migration: a second row for it (past the service's check) meets the index.
    const p12 = createTestP12({ id: '3101999999', type: '02', pin: issuer.issuer.pinCertificado, name: issuer.issuer.nombre });
    const other = { ...issuer.issuer, identificacion: '3101999999', certificadoHacienda: p12.toString('base64') };
    const fresh = (await registerIssuer(t.ctx, c, other).then(() => findIssuer(t.ctx, c, '3101999999')))!;
    const { id: _fid, ...dup } = fresh;
    await expect(db.insertInto('issuers').values({ ...dup, account_id: a }).execute()).rejects.toMatchObject({ code: expect.stringMatching(/^(SQLITE_CONSTRAINT_UNIQUE|23505)$/) });
  });
});
