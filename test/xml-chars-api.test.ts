// Issue 12, defect 3, through the real client API (a server on 127.0.0.1:0, real account, token and .p12): a
// character XML cannot carry in a text field is the spec's 400 bad_request "Campos requeridos faltantes" with
// details naming the field, for the issuer registration and for the submission; never a 500.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { FIVE_KINDS, fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { ISSUER } from './helpers/bodies.js';

const AUTH_URL = 'http://auth.fecr.test';
const PIN = 'Pin-Chars#3141';
const MISSING = 'Campos requeridos faltantes';

let t: TestContext;
let app: ReturnType<typeof buildApiApp>;
let baseUrl: string;
let token: string;
let issuerBody: Record<string, any>;

async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await request(baseUrl + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

beforeAll(async () => {
  t = await makeServiceContext();
  await ensureSigningKey(t.ctx);
  await createAccount(t.ctx, { base: 'empresa-chars', password: 'contrasena-chars-123' });
  token = (await issueToken(t.ctx, { base: 'empresa-chars' }, { issuer: AUTH_URL })).token;
  const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: PIN, name: ISSUER.nombre });
  issuerBody = { ...ISSUER, pinCertificado: PIN, certificadoHacienda: p12.toString('base64') };
  app = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await t?.close();
});

describe('control characters through the client API', () => {
  it('issuer registration: 400 bad_request with the field in details, nothing stored', async () => {
    for (const [body, path, cp] of [
      [{ ...issuerBody, nombreComercial: 'Software\u0007Tico' }, 'nombreComercial', 'U+0007'],
      [{ ...issuerBody, ubicacion: { ...issuerBody.ubicacion, direccion: 'Avenida 7\u001b, calles 31 y 33' } }, 'ubicacion.direccion', 'U+001B'],
      [{ ...issuerBody, nombre: 'SOFTWARE TICO \ud800 S.A.' }, 'nombre', 'U+D800'],
    ] as const) {
      const r = await post('/api/enviar/emisor', body);
      expect(r).toEqual({ status: 400, body: { error: 'bad_request', message: MISSING, details: [{ path, message: `contains ${cp}, not allowed in XML` }] } });
    }
    const issuers = await t.ctx.store.db.selectFrom('issuers').select('id').execute();
    expect(issuers).toEqual([]);
  });

  it('submission: 400 bad_request with detalleServicio[0].detalle in details, not a 500', async () => {
    const reg = await post('/api/actualizar/emisor', issuerBody); // creates it (or repairs it)
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    const body = fixtureBody(FIVE_KINDS.FE);
    body.detalleServicio[0].detalle = 'bell\u0007char';
    const r = await post('/api/enviar/items', body);
    expect(r).toEqual({
      status: 400,
      body: { error: 'bad_request', message: MISSING, details: [{ path: 'detalleServicio[0].detalle', message: 'contains U+0007, not allowed in XML' }] },
    });
    const receptor = fixtureBody(FIVE_KINDS.FE);
    receptor.receptor.nombre = 'BANCO\uffffNACIONAL';
    const r2 = await post('/api/enviar/items', receptor);
    expect(r2.status).toBe(400);
    expect(r2.body.details).toEqual([{ path: 'receptor.nombre', message: 'contains U+FFFF, not allowed in XML' }]);
    const documents = await t.ctx.store.db.selectFrom('documents').select('id').execute();
    expect(documents).toEqual([]);
    // The same body without the character is accepted.
    expect((await post('/api/enviar/items', fixtureBody(FIVE_KINDS.FE))).status).toBe(200);
  });
});
