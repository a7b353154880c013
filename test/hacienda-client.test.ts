// The Hacienda client against a real emulator on 127.0.0.1 (port 0): tokens, exactly-once submission
// under faults, and the distinct authentication errors. No mocks: every request crosses a socket.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import {
  AmbiguousSubmissionError,
  BadCredentialsError,
  ForbiddenError,
  HttpClient,
  IdpClientError,
  IdpUnavailableError,
  RateLimitedError,
  ReceptionClient,
  ReceptionValidationError,
  TokenManager,
  UnauthorizedError,
  resolveEndpoints,
  serverWaitMs,
  backoffDelay,
  DEFAULT_RETRY,
  formatDetalleErrors,
  parseDetalleMensaje,
  isAlreadyReceivedCause,
  tokenPath,
  logoutPath,
  type HaciendaEndpoints,
} from '../src/hacienda/client/index.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { FAST_RETRY, acceptAll, claveFor, fakeClock, submission } from './helpers/hacienda.js';

const CREDS = { username: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr', password: 'secreto' };

function client(emu: RunningEmulator, extra: Partial<ConstructorParameters<typeof ReceptionClient>[0]> = {}) {
  return new ReceptionClient({
    endpoints: resolveEndpoints('local', { baseUrl: emu.url }),
    credentials: CREDS,
    retry: FAST_RETRY,
    statusRetry: FAST_RETRY,
    ...extra,
  });
}

describe('endpoints', () => {
  it('resolves the real environments per NOTES §4.1 and overrides any URL', () => {
    const prod = resolveEndpoints('production');
    expect(prod.tokenUrl).toBe('https://idp.comprobanteselectronicos.go.cr/auth/realms/rut/protocol/openid-connect/token');
    expect(prod.logoutUrl).toBe('https://idp.comprobanteselectronicos.go.cr/auth/realms/rut/protocol/openid-connect/logout');
    expect(prod.clientId).toBe('api-prod');
    expect(prod.receptionBaseUrl).toBe('https://api.comprobanteselectronicos.go.cr/recepcion/v1');
    expect(prod.queryBaseUrl).toBe('https://api.hacienda.go.cr');
    const stag = resolveEndpoints('sandbox');
    expect(stag.tokenUrl).toContain('/realms/rut-stag/');
    expect(stag.clientId).toBe('api-stag');
    expect(stag.receptionBaseUrl).toBe('https://api.comprobanteselectronicos.go.cr/recepcion-sandbox/v1');
    const alt = resolveEndpoints('sandbox', { receptionBaseUrl: 'https://api-sandbox.comprobanteselectronicos.go.cr/recepcion/v1/' });
    expect(alt.receptionBaseUrl).toBe('https://api-sandbox.comprobanteselectronicos.go.cr/recepcion/v1');
    expect(alt.tokenUrl).toBe(stag.tokenUrl);
    const local = resolveEndpoints('local', { baseUrl: 'http://127.0.0.1:9999/' });
    expect(local).toMatchObject({
      tokenUrl: 'http://127.0.0.1:9999/auth/realms/rut/protocol/openid-connect/token',
      clientId: 'api-prod',
      receptionBaseUrl: 'http://127.0.0.1:9999/recepcion/v1',
      queryBaseUrl: 'http://127.0.0.1:9999',
    });
    expect(() => resolveEndpoints('local')).toThrow(/baseUrl/);
  });
});

describe('retry timing and message helpers', () => {
  it('reads Retry-After (seconds or HTTP-date) and X-Ratelimit-Reset (epoch or delta seconds)', () => {
    const now = Date.parse('2026-03-15T16:00:00Z');
    expect(serverWaitMs(429, { 'retry-after': '3' }, now)).toBe(3000);
    expect(serverWaitMs(503, { 'retry-after': 'Sun, 15 Mar 2026 16:00:10 GMT' }, now)).toBe(10_000);
    expect(serverWaitMs(429, { 'x-ratelimit-reset': String(now / 1000 + 7) }, now)).toBe(7000);
    expect(serverWaitMs(429, { 'x-ratelimit-reset': '5' }, now)).toBe(5000);
    expect(serverWaitMs(200, { 'x-ratelimit-reset': String(now / 1000 + 7), 'x-ratelimit-remaining': '0' }, now)).toBe(7000);
    expect(serverWaitMs(200, { 'x-ratelimit-reset': String(now / 1000 + 7), 'x-ratelimit-remaining': '4' }, now)).toBeUndefined();
    expect(serverWaitMs(503, {}, now)).toBeUndefined();
  });

  it('backs off exponentially with jitter, within [step/2, step], capped', () => {
    for (let n = 1; n <= 10; n++) {
      const step = Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * 2 ** (n - 1));
      expect(backoffDelay(n, DEFAULT_RETRY, () => 0)).toBe(step / 2);
      expect(backoffDelay(n, DEFAULT_RETRY, () => 1)).toBe(step);
    }
  });

  it('DetalleMensaje error lines round-trip, quotes and commas included', () => {
    const errors = [
      { codigo: -99, mensaje: 'La numeración consecutiva del comprobante, "001", ya existe.', fila: 0, columna: 0 },
      { codigo: -2, mensaje: 'Element X: not expected', fila: 1, columna: 7 },
    ];
    const text = `Este comprobante fue rechazado.\n\n${formatDetalleErrors(errors)}`;
    expect(parseDetalleMensaje(text)).toEqual([
      { ...errors[0], fila: null, columna: null, aviso: false },
      { ...errors[1], aviso: false },
    ]);
  });

  it('recognises Hacienda\'s "already received" causes', () => {
    expect(isAlreadyReceivedCause('El comprobante con la Clave [506...] ya fue recibido.')).toBe(true);
    expect(isAlreadyReceivedCause('El comprobante con la Clave [506...] ya fue recibido anteriormente.')).toBe(true);
    expect(isAlreadyReceivedCause('El comprobante fue recibido anteriormente')).toBe(true);
    expect(isAlreadyReceivedCause('El campo fecha es requerido.')).toBe(false);
  });
});

describe('client against the emulator', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ processingDelayMs: 20, validator: acceptAll, seed: 42 });
  });
  afterAll(async () => {
    await emu.close();
  });
  afterEach(() => {
    emu.state.setFaults({ reset: true });
  });

  it('submits, gets 202 with Location, polls to a verdict with a parsed MensajeHacienda', async () => {
    const rc = client(emu);
    const r = await rc.submit(submission(1));
    expect(r).toMatchObject({ status: 'received', httpStatus: 202, posts: 1 });
    expect(r.location).toBe(`${emu.url}/recepcion/v1/recepcion/${claveFor(1)}`);
    const st = await rc.waitForVerdict(claveFor(1), { intervalMs: 10 });
    expect(st.estado).toBe('aceptado');
    expect(st.fecha).toBe('2026-03-15T10:30:00-06:00');
    expect(st.respuestaXml?.toString('utf8')).toContain('<MensajeHacienda');
    expect(st.mensaje).toMatchObject({ clave: claveFor(1), mensaje: 1, estadoMensaje: 'Aceptado', signed: true });
    await rc.close();
  });

  it('the sandbox environment works against the emulator with only the base URL changed', async () => {
    const rc = new ReceptionClient({ endpoints: resolveEndpoints('sandbox', { baseUrl: emu.url }), credentials: CREDS, retry: FAST_RETRY });
    const r = await rc.submit(submission(50));
    expect(r.location).toBe(`${emu.url}/recepcion-sandbox/v1/recepcion/${claveFor(50)}`);
    const st = await rc.waitForVerdict(claveFor(50), { intervalMs: 10 });
    expect(st.estado).toBe('aceptado');
    expect(st.mensaje?.detalleMensaje).toContain('ambiente de pruebas');
    // Sandbox and production are separate databases, as at Hacienda.
    expect(emu.state.receptions().find((x) => x.clave === claveFor(50))?.environment).toBe('sandbox');
    await rc.close();
  });

  it('a clave Hacienda does not know is estado "unknown", not an error', async () => {
    const rc = client(emu);
    expect(await rc.getStatus(claveFor(999_999))).toEqual({ clave: claveFor(999_999), estado: 'unknown' });
    await rc.close();
  });

  it('"ya fue recibido" is already-received, not a failure', async () => {
    const rc = client(emu);
    await rc.submit(submission(2));
    const again = await rc.submit(submission(2));
    expect(again.status).toBe('already-received');
    expect(again.cause).toContain('ya fue recibido');
    await rc.close();
  });

  it('a 400 of the body becomes ReceptionValidationError with the X-Error-Cause text', async () => {
    const rc = client(emu);
    const err = await rc.submit({ ...submission(3), fecha: 'ayer' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReceptionValidationError);
    expect((err as ReceptionValidationError).code).toBe('HACIENDA_VALIDATION');
    expect((err as ReceptionValidationError).detail).toContain('fecha');
    expect((err as ReceptionValidationError).validationException).toBe(true);
    await rc.close();
  });

  it('50 concurrent submissions share a single login', async () => {
    const before = emu.state.idp.passwordGrants;
    const rc = client(emu);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => rc.submit(submission(100 + i))));
    expect(results.every((r) => r.status === 'received')).toBe(true);
    expect(emu.state.idp.passwordGrants - before).toBe(1);
    expect(rc.tokens.stats.passwordGrants).toBe(1);
    await rc.close();
  });

  it('clients sharing a TokenManager share the token; logout ends the IdP session', async () => {
    const endpoints = resolveEndpoints('local', { baseUrl: emu.url });
    const http = new HttpClient();
    const tokens = new TokenManager({ endpoints, http });
    const before = emu.state.idp.passwordGrants;
    const a = new ReceptionClient({ endpoints, credentials: CREDS, tokens, http });
    const b = new ReceptionClient({ endpoints, credentials: CREDS, tokens, http });
    await Promise.all([a.submit(submission(200)), b.submit(submission(201))]);
    expect(emu.state.idp.passwordGrants - before).toBe(1);
    const token = await tokens.getAccessToken(CREDS);
    expect(await tokens.logout(CREDS.username)).toBe(true);
    const res = await request(`${endpoints.receptionBaseUrl}/recepcion/${claveFor(200)}`, { headers: { authorization: `bearer ${token}` } });
    await res.body.dump();
    expect(res.statusCode).toBe(401);
    await http.close();
  });

  it('a lost POST response resolves to exactly one received document (GET before any re-POST)', async () => {
    emu.state.setFaults({ lostResponseRate: 1, methods: ['POST'], targets: ['recepcion'] });
    const rc = client(emu);
    const r = await rc.submit(submission(300));
    expect(r.status).toBe('received');
    expect(r.posts).toBe(1);
    expect(r.confirmedByStatus?.estado).toMatch(/recibido|procesando|aceptado/);
    expect(emu.state.faultStats.lostResponses).toBeGreaterThan(0);
    const rec = emu.state.receptions().find((x) => x.clave === claveFor(300));
    expect(rec).toMatchObject({ acceptedPosts: 1, duplicatePosts: 0 });
    await rc.close();
  });

  it('lost responses on half the requests: 30 documents, each received exactly once', async () => {
    emu.state.setFaults({ lostResponseRate: 0.5, targets: ['recepcion'] });
    const rc = client(emu);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => rc.submit(submission(400 + i))));
    expect(results.every((r) => r.status === 'received')).toBe(true);
    const recs = emu.state.receptions().filter((x) => results.some((r) => r.clave === x.clave));
    expect(recs).toHaveLength(30);
    expect(recs.every((x) => x.acceptedPosts === 1 && x.duplicatePosts === 0)).toBe(true);
    await rc.close();
  });

  it('a 5xx storm (50 %, IdP included) ends in success without a duplicate', async () => {
    emu.state.setFaults({ errorRate: 0.5 });
    const rc = client(emu);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => rc.submit(submission(500 + i))));
    expect(results.every((r) => r.status === 'received')).toBe(true);
    expect(emu.state.faultStats.serverErrors).toBeGreaterThan(10);
    const recs = emu.state.receptions().filter((x) => results.some((r) => r.clave === x.clave));
    expect(recs).toHaveLength(30);
    expect(recs.every((x) => x.acceptedPosts === 1 && x.duplicatePosts === 0)).toBe(true);
    await rc.close();
  });

  it('dropped connections (30 %) end in success without a duplicate', async () => {
    emu.state.setFaults({ dropRate: 0.3, targets: ['recepcion'] });
    const rc = client(emu);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => rc.submit(submission(600 + i))));
    expect(results.every((r) => r.status === 'received')).toBe(true);
    expect(emu.state.faultStats.dropped).toBeGreaterThan(0);
    const recs = emu.state.receptions().filter((x) => results.some((r) => r.clave === x.clave));
    expect(recs.every((x) => x.acceptedPosts === 1 && x.duplicatePosts === 0)).toBe(true);
    await rc.close();
  });

  it('a timeout waiting for the answer is ambiguous: the client GETs, finds the document, never re-POSTs', async () => {
    // The POST is processed at once but answered after 2 s; undici's headers timer has ~1 s resolution, so
    // a 100 ms timeout fires within 0.5-1.5 s, and the status query comes 2.5 s later.
    emu.state.setFaults({ responseDelayMs: 2_000, methods: ['POST'], targets: ['recepcion'] });
    const http = new HttpClient({ headersTimeoutMs: 100 });
    const rc = client(emu, { http, random: () => 1, retry: { ...FAST_RETRY, baseDelayMs: 2_500, maxDelayMs: 2_500 } });
    const r = await rc.submit(submission(650));
    expect(r).toMatchObject({ status: 'received', posts: 1 });
    expect(r.httpStatus).toBeUndefined(); // the POST's answer never arrived
    expect(r.confirmedByStatus?.estado).toMatch(/recibido|procesando|aceptado/);
    expect(emu.state.receptions().find((x) => x.clave === claveFor(650))).toMatchObject({ acceptedPosts: 1, duplicatePosts: 0 });
    await rc.close();
    await http.close();
  });

  it('honours Retry-After on 429 and gives up with RateLimitedError when it persists', async () => {
    emu.state.setFaults({ rateLimitRate: 1, retryAfterSeconds: 2, targets: ['recepcion'] });
    const waits: number[] = [];
    const rc = client(emu, {
      sleep: async (ms) => {
        waits.push(ms);
      },
      retry: { ...FAST_RETRY, maxAttempts: 3 },
    });
    const err = await rc.submit(submission(700)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(waits).toHaveLength(2);
    expect(waits.every((w) => w === 2000)).toBe(true);
    expect(emu.state.receptions().some((x) => x.clave === claveFor(700))).toBe(false);
    await rc.close();
  });

  it('when the status cannot be established after an ambiguous failure, it says so and never re-POSTs', async () => {
    emu.state.setFaults({ lostResponseRate: 1, targets: ['recepcion'] });
    const rc = client(emu, { statusRetry: { ...FAST_RETRY, maxAttempts: 3 } });
    const err = await rc.submit(submission(800)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmbiguousSubmissionError);
    expect((err as AmbiguousSubmissionError).code).toBe('HACIENDA_AMBIGUOUS');
    emu.state.setFaults({ reset: true });
    const rec = emu.state.receptions().find((x) => x.clave === claveFor(800));
    expect(rec).toMatchObject({ acceptedPosts: 1, duplicatePosts: 0 });
    expect((await rc.getStatus(claveFor(800))).estado).not.toBe('unknown');
    await rc.close();
  });

  it('lists /comprobantes (200, and 206 with Content-Range when paginated)', async () => {
    const rc = client(emu);
    const all = await rc.listComprobantes();
    expect(all.items.length).toBeGreaterThan(0);
    expect(all.items.length).toBeLessThanOrEqual(50);
    const page = await rc.listComprobantes({ offset: 0, limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.contentRange).toMatch(/^0-2\/\d+$/);
    expect(await rc.getComprobante(claveFor(1))).toMatchObject({ clave: claveFor(1), emisor: { numeroIdentificacion: '3101123456' } });
    expect(await rc.getComprobante(claveFor(999_998))).toBeNull();
    await rc.close();
  });
});

describe('token lifetime (shared injected clock)', () => {
  it('refreshes ~30 s before expiry, logs in again after the refresh token expires', async () => {
    const clock = fakeClock();
    const emu = await startEmulator({ processingDelayMs: 5, validator: acceptAll, now: clock.now });
    try {
      const rc = client(emu, { now: clock.now });
      await rc.submit(submission(1));
      expect(emu.state.idp).toMatchObject({ passwordGrants: 1, refreshGrants: 0 });
      clock.advance(260_000); // 40 s left: still fresh
      await rc.getStatus(claveFor(1));
      expect(emu.state.idp).toMatchObject({ passwordGrants: 1, refreshGrants: 0 });
      clock.advance(20_000); // 20 s left: inside the 30 s margin → refresh_token grant
      await rc.getStatus(claveFor(1));
      expect(emu.state.idp).toMatchObject({ passwordGrants: 1, refreshGrants: 1 });
      clock.advance(1_300_000); // refresh token (1200 s) expired too → password grant
      await rc.getStatus(claveFor(1));
      expect(emu.state.idp).toMatchObject({ passwordGrants: 2, refreshGrants: 1 });
      await rc.close();
    } finally {
      await emu.close();
    }
  });

  it('a 401 (token expired by the server clock) renews once and retries', async () => {
    const serverClock = fakeClock();
    const emu = await startEmulator({ processingDelayMs: 5, validator: acceptAll, now: serverClock.now });
    try {
      const rc = client(emu); // client uses the real clock: it believes its token is fresh
      await rc.submit(submission(1));
      serverClock.advance(400_000); // access token (300 s) expired for the server, refresh token not
      const r = await rc.submit(submission(2));
      expect(r.status).toBe('received');
      expect(emu.state.idp).toMatchObject({ passwordGrants: 1, refreshGrants: 1 });
      await rc.close();
    } finally {
      await emu.close();
    }
  });
});

describe('authentication errors are distinct', () => {
  let emu: RunningEmulator;
  let other: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ users: { [CREDS.username]: CREDS.password }, validator: acceptAll });
    other = await startEmulator({ validator: acceptAll });
  });
  afterAll(async () => {
    await emu.close();
    await other.close();
  });

  it('bad credentials → BadCredentialsError (IdP invalid_grant)', async () => {
    const rc = client(emu, { credentials: { username: CREDS.username, password: 'wrong' } });
    const err = await rc.submit(submission(1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadCredentialsError);
    expect((err as BadCredentialsError).code).toBe('HACIENDA_BAD_CREDENTIALS');
    expect((err as Error).message).toContain(CREDS.username);
    expect((err as Error).message).toContain('Invalid user credentials');
    await rc.close();
  });

  it('401 even after renewing → UnauthorizedError (token from another IdP)', async () => {
    const endpoints: HaciendaEndpoints = {
      ...resolveEndpoints('local', { baseUrl: other.url }),
      receptionBaseUrl: `${emu.url}/recepcion/v1`,
    };
    const before = other.state.idp.refreshGrants;
    const rc = new ReceptionClient({ endpoints, credentials: CREDS, retry: FAST_RETRY });
    const err = await rc.submit(submission(2)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect((err as UnauthorizedError).code).toBe('HACIENDA_UNAUTHORIZED');
    expect((err as Error).message).toMatch(/401/);
    expect(other.state.idp.refreshGrants - before).toBe(1); // renewed exactly once
    await rc.close();
  });

  it('403 → ForbiddenError (sandbox token on the production API; forbidden user)', async () => {
    const sandbox = resolveEndpoints('sandbox', { baseUrl: emu.url });
    const endpoints: HaciendaEndpoints = { ...sandbox, receptionBaseUrl: `${emu.url}/recepcion/v1` };
    const rc = new ReceptionClient({ endpoints, credentials: CREDS, retry: FAST_RETRY });
    const err = await rc.submit(submission(3)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect((err as ForbiddenError).code).toBe('HACIENDA_FORBIDDEN');
    expect((err as ForbiddenError).detail).toContain('sandbox');
    await rc.close();

    emu.state.setFaults({ forbiddenUsers: [CREDS.username] });
    const rc2 = client(emu);
    await expect(rc2.getStatus(claveFor(3))).rejects.toBeInstanceOf(ForbiddenError);
    emu.state.setFaults({ reset: true });
    await rc2.close();
  });

  it('the three messages differ', async () => {
    const a = new BadCredentialsError('u', 'production', 'Invalid user credentials').message;
    const b = new UnauthorizedError('https://x/recepcion').message;
    const c = new ForbiddenError('https://x/recepcion').message;
    expect(new Set([a, b, c]).size).toBe(3);
    expect(a).toMatch(/credentials/);
    expect(b).toMatch(/401/);
    expect(c).toMatch(/403/);
  });

  it('unknown client id → IdpClientError', async () => {
    const endpoints = { ...resolveEndpoints('local', { baseUrl: emu.url }), clientId: 'api-stag' };
    const tm = new TokenManager({ endpoints });
    const err = await tm.getAccessToken(CREDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdpClientError);
    expect((err as Error).message).toContain('UNKNOWN_CLIENT');
    await tm.close();
  });

  it('IdP outage and an unreachable IdP → IdpUnavailableError', async () => {
    emu.state.setFaults({ idpOutage: true });
    const tm = new TokenManager({ endpoints: resolveEndpoints('local', { baseUrl: emu.url }), retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    const err = await tm.getAccessToken(CREDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdpUnavailableError);
    expect((err as Error).message).toContain('503');
    emu.state.setFaults({ reset: true });
    await tm.close();

    const dead = await startEmulator({ validator: acceptAll });
    const url = dead.url;
    await dead.close();
    const tm2 = new TokenManager({
      endpoints: { environment: 'local', tokenUrl: url + tokenPath('rut'), logoutUrl: url + logoutPath('rut'), clientId: 'api-prod' },
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    const err2 = await tm2.getAccessToken(CREDS).catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(IdpUnavailableError);
    expect((err2 as Error).message).toContain('ECONNREFUSED');
    await tm2.close();
  });

  it('concurrent callers with bad credentials share one failed login', async () => {
    const before = emu.state.idp.failedGrants;
    const tm = new TokenManager({ endpoints: resolveEndpoints('local', { baseUrl: emu.url }) });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => tm.getAccessToken({ username: CREDS.username, password: 'nope' })));
    expect(results.every((r) => r.status === 'rejected' && r.reason instanceof BadCredentialsError)).toBe(true);
    expect(emu.state.idp.failedGrants - before).toBe(1);
    await tm.close();
  });
});
