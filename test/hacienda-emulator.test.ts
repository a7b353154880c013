// The emulator on its own: IdP (Keycloak-like answers, RS256 JWTs), reception synchronous checks and
// asynchronous states, the signed MensajeHacienda, callbacks, faults admin, consecutivo reuse, persistence.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createRemoteJWKSet, jwtVerify, decodeProtectedHeader } from 'jose';
import { ReceptionClient, resolveEndpoints } from '../src/hacienda/client/index.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { verifyXades } from '../src/core/sign/verify.js';
import { acceptAll, claveFor, submission, FAST_RETRY } from './helpers/hacienda.js';

const USER = 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr';

async function form(url: string, fields: Record<string, string>) {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

async function tokenFor(emu: RunningEmulator, realm = 'rut', clientId = 'api-prod'): Promise<string> {
  const r = await form(`${emu.url}/auth/realms/${realm}/protocol/openid-connect/token`, {
    grant_type: 'password',
    client_id: clientId,
    client_secret: '',
    username: USER,
    password: 'x',
  });
  return r.body!['access_token'] as string;
}

async function postRecepcion(emu: RunningEmulator, body: unknown, token?: string, raw?: string) {
  const res = await request(`${emu.url}/recepcion/v1/recepcion`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `bearer ${token}` } : {}) },
    body: raw ?? JSON.stringify(body),
  });
  await res.body.dump();
  return { status: res.statusCode, headers: res.headers };
}

function apiBody(n: number, extra: Record<string, unknown> = {}) {
  const s = submission(n);
  return { clave: s.clave, fecha: s.fecha, emisor: s.emisor, comprobanteXml: Buffer.from(s.comprobanteXml).toString('base64'), ...extra };
}

describe('IdP', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ validator: acceptAll });
  });
  afterAll(async () => {
    await emu.close();
  });

  it('password grant answers like the staging IdP, with an RS256 JWT verifiable by the realm JWKS', async () => {
    const r = await form(`${emu.url}/auth/realms/rut-stag/protocol/openid-connect/token`, {
      grant_type: 'password',
      client_id: 'api-stag',
      client_secret: '',
      username: USER,
      password: 'anything',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ expires_in: 300, refresh_expires_in: 1200, token_type: 'bearer', 'not-before-policy': 0, scope: '' });
    const access = r.body!['access_token'] as string;
    expect(decodeProtectedHeader(access).alg).toBe('RS256');
    const jwks = createRemoteJWKSet(new URL(`${emu.url}/auth/realms/rut-stag/protocol/openid-connect/certs`));
    const { payload } = await jwtVerify(access, jwks, { issuer: `${emu.url}/auth/realms/rut-stag` });
    expect(payload).toMatchObject({ azp: 'api-stag', preferred_username: USER, typ: 'Bearer' });
    expect(payload.exp! - payload.iat!).toBe(300);
    expect(emu.state.store.users().map((u) => u.username)).toContain(USER);
  });

  it('refresh_token grant, logout, then the refresh token is dead (400 invalid_grant)', async () => {
    const url = `${emu.url}/auth/realms/rut/protocol/openid-connect`;
    const login = await form(`${url}/token`, { grant_type: 'password', client_id: 'api-prod', username: USER, password: 'p' });
    const refresh = login.body!['refresh_token'] as string;
    const r = await form(`${url}/token`, { grant_type: 'refresh_token', client_id: 'api-prod', refresh_token: refresh });
    expect(r.status).toBe(200);
    expect(typeof r.body!['access_token']).toBe('string');
    const out = await form(`${url}/logout`, { client_id: 'api-prod', refresh_token: refresh });
    expect(out.status).toBe(204);
    const again = await form(`${url}/token`, { grant_type: 'refresh_token', client_id: 'api-prod', refresh_token: refresh });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('empty credentials, unknown client, unknown realm and missing grant_type are refused like Keycloak', async () => {
    const base = `${emu.url}/auth/realms`;
    expect(await form(`${base}/rut/protocol/openid-connect/token`, { grant_type: 'password', client_id: 'api-prod', username: USER, password: '' })).toMatchObject({
      status: 401,
      body: { error: 'invalid_grant', error_description: 'Invalid user credentials' },
    });
    expect(await form(`${base}/rut/protocol/openid-connect/token`, { grant_type: 'password', client_id: 'api-stag', username: USER, password: 'x' })).toMatchObject({
      status: 401,
      body: { error: 'unauthorized_client' },
    });
    expect((await form(`${base}/nope/protocol/openid-connect/token`, { grant_type: 'password' })).status).toBe(404);
    expect(await form(`${base}/rut/protocol/openid-connect/token`, { client_id: 'api-prod' })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });

  it('strict mode: only the users of the users map', async () => {
    const strict = await startEmulator({ users: { alice: 's3cret' }, validator: acceptAll });
    try {
      const url = `${strict.url}/auth/realms/rut/protocol/openid-connect/token`;
      expect((await form(url, { grant_type: 'password', client_id: 'api-prod', username: 'alice', password: 's3cret' })).status).toBe(200);
      expect((await form(url, { grant_type: 'password', client_id: 'api-prod', username: 'alice', password: 'x' })).status).toBe(401);
      expect((await form(url, { grant_type: 'password', client_id: 'api-prod', username: 'bob', password: 's3cret' })).status).toBe(401);
    } finally {
      await strict.close();
    }
  });
});

describe('reception', () => {
  let emu: RunningEmulator;
  let token: string;
  beforeAll(async () => {
    emu = await startEmulator({ validator: acceptAll, processingDelayMs: 20 });
    token = await tokenFor(emu);
  });
  afterAll(async () => {
    await emu.close();
  });

  it('401 without a token or with a garbage one; 403 with a sandbox token on production', async () => {
    expect((await postRecepcion(emu, apiBody(1))).status).toBe(401);
    expect((await postRecepcion(emu, apiBody(1), 'abc.def.ghi')).status).toBe(401);
    const stag = await tokenFor(emu, 'rut-stag', 'api-stag');
    const r = await postRecepcion(emu, apiBody(1), stag);
    expect(r.status).toBe(403);
    expect(String(r.headers['x-error-cause'])).toContain('sandbox');
  });

  it('shape errors: 400 with X-Error-Cause and validation-exception: true', async () => {
    const cases: [unknown, RegExp][] = [
      [{ ...apiBody(2), clave: undefined }, /clave es requerido/],
      [{ ...apiBody(2), clave: '123' }, /50 caracteres/],
      [{ ...apiBody(2), fecha: '15/03/2026' }, /fecha/],
      [{ ...apiBody(2), emisor: undefined }, /emisor es requerido/],
      [{ ...apiBody(2), emisor: { tipoIdentificacion: '02', numeroIdentificacion: '1234567890123' } }, /12 caracteres/],
      [{ ...apiBody(2), comprobanteXml: '***' }, /Base64/],
      [{ ...apiBody(2), callbackUrl: 'ftp://x' }, /callbackUrl/],
      [{ ...apiBody(2), consecutivoReceptor: '123' }, /consecutivoReceptor/],
    ];
    for (const [body, cause] of cases) {
      const r = await postRecepcion(emu, body, token);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.headers['validation-exception']).toBe('true');
      expect(Buffer.from(String(r.headers['x-error-cause']), 'latin1').toString('latin1')).toMatch(cause);
    }
    const bad = await postRecepcion(emu, undefined, token, '{"clave": ');
    expect(bad.status).toBe(400);
    expect(bad.headers['validation-exception']).toBe('true');
    expect(emu.state.receptions()).toHaveLength(0);
  });

  it('202 + Location, then recibido → procesando → aceptado; duplicate → 400 "ya fue recibido anteriormente"', async () => {
    const slow = await startEmulator({ validator: acceptAll, processingDelayMs: 2_000 });
    try {
      const tok = await tokenFor(slow);
      const r = await postRecepcion(slow, apiBody(3), tok);
      expect(r.status).toBe(202);
      expect(r.headers['location']).toBe(`${slow.url}/recepcion/v1/recepcion/${claveFor(3)}`);
      expect(r.headers['x-ratelimit-limit']).toBeDefined();
      const get = async () => {
        const res = await request(`${slow.url}/recepcion/v1/recepcion/${claveFor(3)}`, { headers: { authorization: `bearer ${tok}` } });
        return (await res.body.json()) as Record<string, string>;
      };
      expect((await get())['ind-estado']).toBe('recibido');
      await new Promise((res) => setTimeout(res, 1_300)); // procesando from 1 s, verdict at 2 s
      expect((await get())['ind-estado']).toBe('procesando');
      await slow.state.whenIdle();
      const done = await get();
      expect(done['ind-estado']).toBe('aceptado');
      expect(Buffer.from(done['respuesta-xml']!, 'base64').toString('utf8')).toContain('<Mensaje>1</Mensaje>');
      const dup = await postRecepcion(slow, apiBody(3), tok);
      expect(dup.status).toBe(400);
      expect(dup.headers['x-error-cause']).toBe(`El comprobante con la Clave [${claveFor(3)}] ya fue recibido anteriormente.`);
      expect(slow.state.receptions().find((x) => x.clave === claveFor(3))).toMatchObject({ acceptedPosts: 1, duplicatePosts: 1 });
    } finally {
      await slow.close();
    }
  });

  it('unknown clave → 404 with "No existe el recurso con Clave = [...]"', async () => {
    const res = await request(`${emu.url}/recepcion/v1/recepcion/${claveFor(4242)}`, { headers: { authorization: `bearer ${token}` } });
    await res.body.dump();
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-error-cause']).toBe(`No existe el recurso con Clave = [${claveFor(4242)}]`);
  });

  it('a consecutivo reused by the same issuer under another clave → rechazado -99', async () => {
    const first = apiBody(5);
    const second = { ...apiBody(5), clave: claveFor(5, { security: '87654321' }) };
    expect((await postRecepcion(emu, first, token)).status).toBe(202);
    expect((await postRecepcion(emu, second, token)).status).toBe(202);
    await emu.state.whenIdle();
    const recs = emu.state.receptions();
    expect(recs.find((x) => x.clave === first.clave)?.estado).toBe('aceptado');
    const bad = recs.find((x) => x.clave === second.clave);
    expect(bad?.estado).toBe('rechazado');
    expect(bad?.errors.map((e) => e.codigo)).toEqual([-99]);
    expect(bad?.errors[0]?.mensaje).toContain('ya existe en nuestras bases de datos');
  });

  it('forced rejection of a clave via /_emulator/faults', async () => {
    const res = await request(`${emu.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rejectClaves: [claveFor(6)] }),
    });
    expect(((await res.body.json()) as { rejectClaves: string[] }).rejectClaves).toEqual([claveFor(6)]);
    await postRecepcion(emu, apiBody(6), token);
    await emu.state.whenIdle();
    expect(emu.state.receptions().find((x) => x.clave === claveFor(6))?.estado).toBe('rechazado');
    const bad = await request(`${emu.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ errorRate: 2 }),
    });
    await bad.body.dump();
    expect(bad.statusCode).toBe(400);
    emu.state.setFaults({ reset: true });
    const health = await request(`${emu.url}/_emulator/health`);
    expect(await health.body.json()).toMatchObject({ status: 'ok', persistent: false, cabys: 20_501 });
  });

  it('the MensajeHacienda is valid against its v4.4 XSD and signed with the emulator key', async () => {
    await postRecepcion(emu, apiBody(7), token);
    await emu.state.whenIdle();
    const rec = emu.state.store.getReception('production', claveFor(7))!;
    const xml = rec.respuestaXml!.toString('utf8');
    const dir = mkdtempSync(join(tmpdir(), 'fecr-mh-'));
    try {
      writeFileSync(join(dir, 'mh.xml'), xml);
      const xsd = new URL('../schemas/xsd/2026/v4.4/MensajeHacienda_V4.4.xsd', import.meta.url).pathname;
      const r = spawnSync('xmllint', ['--noout', '--schema', xsd, join(dir, 'mh.xml')], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const report = verifyXades(xml, new Date());
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.signer?.subject).toContain('EMULADOR');
  });
});

describe('callback', () => {
  let server: Server;
  let url: string;
  const received: { body: Record<string, string> }[] = [];
  let failFirst = 2;
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string> });
        if (failFirst > 0) {
          failFirst--;
          res.statusCode = 500;
        } else res.statusCode = 200;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/hacienda`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it('POSTs the GET body to callbackUrl when processing ends, retrying on failure', async () => {
    const emu = await startEmulator({ validator: acceptAll, processingDelayMs: 10, callbackRetryDelayMs: 10 });
    try {
      const rc = new ReceptionClient({ endpoints: resolveEndpoints('local', { baseUrl: emu.url }), credentials: { username: USER, password: 'x' }, retry: FAST_RETRY });
      await rc.submit({ ...submission(1), callbackUrl: url });
      await emu.state.whenIdle();
      for (let i = 0; i < 100 && !emu.state.receptions()[0]?.callback; i++) await new Promise((r) => setTimeout(r, 20));
      expect(emu.state.receptions()[0]?.callback).toMatchObject({ attempts: 3, delivered: true, lastStatus: 200 });
      expect(received).toHaveLength(3);
      const body = received[2]!.body;
      expect(body).toMatchObject({ clave: claveFor(1), 'ind-estado': 'aceptado', callbackUrl: url });
      expect(Buffer.from(body['respuesta-xml']!, 'base64').toString()).toContain('<MensajeHacienda');
      const st = await rc.getStatus(claveFor(1));
      expect(st.callbackUrl).toBe(url);
      await rc.close();
    } finally {
      await emu.close();
    }
  });

  it('gives up after 3 retries (4 attempts)', async () => {
    failFirst = 100;
    received.length = 0;
    const emu = await startEmulator({ validator: acceptAll, processingDelayMs: 10, callbackRetryDelayMs: 5 });
    try {
      const token = await tokenFor(emu);
      await postRecepcion(emu, apiBody(2, { callbackUrl: url }), token);
      await emu.state.whenIdle();
      for (let i = 0; i < 100 && !emu.state.receptions()[0]?.callback; i++) await new Promise((r) => setTimeout(r, 20));
      expect(emu.state.receptions()[0]?.callback).toMatchObject({ attempts: 4, delivered: false, lastStatus: 500 });
      expect(received).toHaveLength(4);
    } finally {
      await emu.close();
    }
  });
});

describe('persistence (dataFile)', () => {
  it('documents, duplicate detection, learnt state and the signing key survive a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fecr-emu-'));
    const dataFile = join(dir, 'state.db');
    try {
      const a = await startEmulator({ dataFile, validator: acceptAll, processingDelayMs: 5, port: 0 });
      const token = await tokenFor(a);
      await postRecepcion(a, apiBody(1), token);
      await a.state.whenIdle();
      const port = Number(new URL(a.url).port);
      await a.close();

      const b = await startEmulator({ dataFile, validator: acceptAll, processingDelayMs: 5, port });
      try {
        const res = await request(`${b.url}/recepcion/v1/recepcion/${claveFor(1)}`, { headers: { authorization: `bearer ${token}` } });
        expect(res.statusCode).toBe(200); // the old token still verifies: same key, same URL
        expect(((await res.body.json()) as Record<string, string>)['ind-estado']).toBe('aceptado');
        expect((await postRecepcion(b, apiBody(1), token)).status).toBe(400);
        expect(b.state.receptions()[0]).toMatchObject({ acceptedPosts: 1, duplicatePosts: 1 });
        expect((await b.state.store.users()).map((u) => u.username)).toContain(USER);
        const health = await request(`${b.url}/_emulator/health`);
        expect(await health.body.json()).toMatchObject({ persistent: true, receptions: 1 });
      } finally {
        await b.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('documents still pending at shutdown get their verdict after the restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fecr-emu-'));
    const dataFile = join(dir, 'state.db');
    try {
      const a = await startEmulator({ dataFile, validator: acceptAll, processingDelayMs: 60_000 });
      await postRecepcion(a, apiBody(9), await tokenFor(a));
      expect(a.state.receptions()[0]?.estado).toBe('recibido');
      await a.close();
      const b = await startEmulator({ dataFile, validator: acceptAll });
      try {
        await b.state.whenIdle();
        expect(b.state.receptions()[0]?.estado).toBe('aceptado');
      } finally {
        await b.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
