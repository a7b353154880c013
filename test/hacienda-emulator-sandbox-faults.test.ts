// Two faults the real sandbox shows (issue 19), on the emulator alone: the index delay (GET /recepcion/{clave}
// answers 404 for a while after the 202) and per-issuer per-minute quotas (POST /recepcion answers 429 with
// Retry-After once an issuer has posted N documents in the current minute). Both on an injected clock, and both
// set at start, at run time through POST /_emulator/faults, and as flags of `fecr hacienda serve`.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ReceptionClient, resolveEndpoints } from '../src/hacienda/client/index.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { FAST_RETRY, acceptAll, claveFor, fakeClock, submission } from './helpers/hacienda.js';
import { spawnFecr } from './helpers/spawn.js';

const USER = 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr';
/** 2026-03-15T16:30:42Z: 42 s into a minute, so the window ends 18 s later. */
const T0 = Date.UTC(2026, 2, 15, 16, 30, 42);

async function tokenFor(emu: RunningEmulator): Promise<string> {
  const res = await request(`${emu.url}/auth/realms/rut/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: 'api-prod', client_secret: '', username: USER, password: 'x' }).toString(),
  });
  return ((await res.body.json()) as { access_token: string }).access_token;
}

async function post(emu: RunningEmulator, token: string, n: number, issuer = '3101123456') {
  const s = submission(n);
  const clave = claveFor(n, { id: issuer });
  const body = {
    clave,
    fecha: s.fecha,
    emisor: { tipoIdentificacion: '02', numeroIdentificacion: issuer },
    comprobanteXml: Buffer.from(`<FacturaElectronica><Clave>${clave}</Clave></FacturaElectronica>`).toString('base64'),
  };
  const res = await request(`${emu.url}/recepcion/v1/recepcion`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `bearer ${token}` },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers as Record<string, string | undefined>, text, clave };
}

async function get(emu: RunningEmulator, token: string, path: string) {
  const res = await request(`${emu.url}/recepcion/v1${path}`, { headers: { authorization: `bearer ${token}` } });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers as Record<string, string | undefined>, text };
}

async function setFaults(emu: RunningEmulator, patch: Record<string, unknown>) {
  const res = await request(`${emu.url}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patch) });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

describe('index delay', () => {
  const clock = fakeClock(T0);
  let emu: RunningEmulator;
  let token: string;
  beforeAll(async () => {
    emu = await startEmulator({ processingDelayMs: 5, validator: acceptAll, now: clock.now, faults: { indexDelayMs: 3_000 } });
    token = await tokenFor(emu);
  });
  afterAll(async () => {
    await emu.close();
  });

  it('for indexDelayMs after the 202, GET /recepcion/{clave} and /comprobantes/{clave} answer 404 exactly as for an unknown clave', async () => {
    const p = await post(emu, token, 1);
    expect(p.status).toBe(202);
    await emu.state.whenIdle(); // the verdict is written: only the index lags
    const unknown = await get(emu, token, `/recepcion/${claveFor(999_999)}`);
    expect(unknown.status).toBe(404);

    clock.advance(2_999);
    const early = await get(emu, token, `/recepcion/${p.clave}`);
    expect(early.status).toBe(404);
    expect(early.headers['x-error-cause']).toBe(`No existe el recurso con Clave = [${p.clave}]`);
    expect(early.text).toBe(unknown.text);
    const comprobante = await get(emu, token, `/comprobantes/${p.clave}`);
    expect(comprobante.status).toBe(404);
    expect(comprobante.headers['x-error-cause']).toBe(`No existe el recurso con Clave = [${p.clave}]`);
    // Not in the list either, while not indexed.
    const list = JSON.parse((await get(emu, token, '/comprobantes')).text) as { clave: string }[];
    expect(list.map((x) => x.clave)).not.toContain(p.clave);
    // A second POST of the same clave is still refused as a duplicate: only the queries lag.
    const again = await post(emu, token, 1);
    expect(again.status).toBe(400);
    expect(again.headers['x-error-cause']).toMatch(/ya fue recibido/);

    clock.advance(1);
    const later = await get(emu, token, `/recepcion/${p.clave}`);
    expect(later.status).toBe(200);
    expect(JSON.parse(later.text)).toMatchObject({ clave: p.clave, 'ind-estado': 'aceptado' });
    expect((await get(emu, token, `/comprobantes/${p.clave}`)).status).toBe(200);
    expect(emu.state.faultStats.indexDelayed).toBe(2);
  });

  it('is set at run time through POST /_emulator/faults (0 turns it off) and shown by GET', async () => {
    expect((await setFaults(emu, { indexDelayMs: 0 })).body).toMatchObject({ indexDelayMs: 0 });
    const p = await post(emu, token, 2);
    expect((await get(emu, token, `/recepcion/${p.clave}`)).status).toBe(200);
    expect((await setFaults(emu, { indexDelayMs: 60_000 })).body).toMatchObject({ indexDelayMs: 60_000 });
    const faults = (await (await request(`${emu.url}/_emulator/faults`)).body.json()) as Record<string, unknown>;
    expect(faults['indexDelayMs']).toBe(60_000);
    const q = await post(emu, token, 3);
    expect((await get(emu, token, `/recepcion/${q.clave}`)).status).toBe(404);
    // Already indexed documents are indexed for good only once the new delay has passed since their POST.
    clock.advance(60_000);
    expect((await get(emu, token, `/recepcion/${q.clave}`)).status).toBe(200);
    expect((await setFaults(emu, { indexDelayMs: -1 })).status).toBe(400);
    expect((await setFaults(emu, { indexDelayMs: 1.5 })).status).toBe(400);
  });
});

describe('reception client: the index delay after a POST whose answer was lost', () => {
  // One clock for the emulator and the client; the client's sleeps move it, so nothing waits for real.
  const clock = fakeClock(T0);
  const sleeps: number[] = [];
  let emu: RunningEmulator;
  let draws = 0;
  beforeAll(async () => {
    // POSTs draw from `random` (lostResponseRate, errorRate); a draw of 0 is the fault, 0.99 none.
    emu = await startEmulator({ processingDelayMs: 5, validator: acceptAll, now: clock.now, random: () => (draws++ === 0 ? 0 : 0.99) });
  });
  afterAll(async () => {
    await emu.close();
  });
  afterEach(() => {
    emu.state.setFaults({ reset: true });
    sleeps.length = 0;
    draws = 0;
  });
  const client = (indexDelayToleranceMs?: number) =>
    new ReceptionClient({
      endpoints: resolveEndpoints('local', { baseUrl: emu.url }),
      credentials: { username: USER, password: 'x' },
      retry: FAST_RETRY,
      statusRetry: FAST_RETRY,
      now: clock.now,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock.advance(ms);
      },
      ...(indexDelayToleranceMs !== undefined ? { indexDelayToleranceMs } : {}),
    });

  it('with a tolerance, the 404s of the index delay are asked again (250 ms doubling) and the document is POSTed once', async () => {
    emu.state.setFaults({ indexDelayMs: 2_000, lostResponseRate: 0.5, methods: ['POST'], targets: ['recepcion'] });
    const rc = client(30_000);
    const r = await rc.submit(submission(500));
    expect(r).toMatchObject({ status: 'received', posts: 1 });
    expect(r.confirmedByStatus?.estado).not.toBe('unknown');
    // The backoff after the lost answer, then the GETs at +0, 250, 750, 1750 ms see 404 and the one at 3750 ms finds it.
    expect(sleeps[0]).toBeLessThanOrEqual(FAST_RETRY.maxDelayMs);
    expect(sleeps.slice(1)).toEqual([250, 500, 1_000, 2_000]);
    expect(emu.state.receptions().find((x) => x.clave === claveFor(500))).toMatchObject({ acceptedPosts: 1, duplicatePosts: 0 });
    await rc.close();
  });

  it('without one (the default), the 404 is trusted: a second POST, refused as "ya fue recibido", so already-received', async () => {
    emu.state.setFaults({ indexDelayMs: 2_000, lostResponseRate: 0.5, methods: ['POST'], targets: ['recepcion'] });
    const rc = client();
    const r = await rc.submit(submission(501));
    expect(r).toMatchObject({ status: 'already-received', posts: 2 });
    expect(emu.state.receptions().find((x) => x.clave === claveFor(501))).toMatchObject({ acceptedPosts: 1, duplicatePosts: 1 });
    await rc.close();
  });

  it('after a 503 (not handled) the 404 is trusted at once, tolerance or not', async () => {
    emu.state.setFaults({ indexDelayMs: 2_000, errorRate: 0.5, methods: ['POST'], targets: ['recepcion'] });
    const rc = client(30_000);
    const r = await rc.submit(submission(502));
    expect(r).toMatchObject({ status: 'received', posts: 2, httpStatus: 202 });
    expect(sleeps).toHaveLength(1); // the backoff after the 503 only
    expect(sleeps[0]).toBeLessThanOrEqual(FAST_RETRY.maxDelayMs);
    expect(emu.state.faultStats.serverErrors).toBe(1);
    await rc.close();
  });
});

describe('per-issuer per-minute quota', () => {
  const clock = fakeClock(T0);
  let emu: RunningEmulator;
  let token: string;
  beforeAll(async () => {
    emu = await startEmulator({ processingDelayMs: 5, validator: acceptAll, now: clock.now });
    token = await tokenFor(emu);
  });
  afterAll(async () => {
    await emu.close();
  });
  afterEach(() => {
    emu.state.setFaults({ reset: true });
  });

  it('quota 5: the 6th POST of one issuer in the minute gets 429 with Retry-After to the next minute; another issuer is unaffected', async () => {
    expect((await setFaults(emu, { quotaPerMinute: 5 })).body).toMatchObject({ quotaPerMinute: 5 });
    const firstFive = [];
    for (let i = 0; i < 5; i++) firstFive.push(await post(emu, token, 100 + i));
    expect(firstFive.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    expect(firstFive.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);
    expect(firstFive[0]!.headers['x-ratelimit-limit']).toBe('5');

    clock.advance(500); // 42.5 s into the minute: 17.5 s left → Retry-After 18
    const sixth = await post(emu, token, 105);
    expect(sixth.status).toBe(429);
    expect(sixth.headers['retry-after']).toBe('18');
    expect(sixth.headers['x-ratelimit-limit']).toBe('5');
    expect(sixth.headers['x-ratelimit-remaining']).toBe('0');
    expect(sixth.headers['x-ratelimit-reset']).toBe(String(Math.floor(T0 / 60_000 + 1) * 60));
    expect(emu.state.receptions().some((r) => r.clave === sixth.clave)).toBe(false); // refused before any processing
    expect(emu.state.faultStats.quotaLimited).toBe(1);

    // Another issuer has its own quota.
    const other = await post(emu, token, 200, '3101999999');
    expect(other.status).toBe(202);
    expect(other.headers['x-ratelimit-remaining']).toBe('4');
    // A 429 does not use up the quota, and GETs are not counted.
    expect((await get(emu, token, `/recepcion/${firstFive[0]!.clave}`)).status).toBe(200);
    const seventh = await post(emu, token, 105);
    expect(seventh.status).toBe(429);
    expect(seventh.headers['retry-after']).toBe('18');

    // Fixed windows aligned to the clock's minutes: at the next minute the issuer posts again.
    clock.advance(17_500);
    const next = await post(emu, token, 105);
    expect(next.status).toBe(202);
    expect(next.headers['x-ratelimit-remaining']).toBe('4');
    await emu.state.whenIdle();
    const rec = emu.state.receptions().find((r) => r.clave === next.clave);
    expect(rec).toMatchObject({ acceptedPosts: 1, duplicatePosts: 0 });
  });

  it('is off by default and with 0; set at start; refuses bad values', async () => {
    for (let i = 0; i < 8; i++) expect((await post(emu, token, 300 + i)).status).toBe(202);
    const started = await startEmulator({ processingDelayMs: 5, validator: acceptAll, now: clock.now, faults: { quotaPerMinute: 1 } });
    try {
      const t = await tokenFor(started);
      expect((await post(started, t, 400)).status).toBe(202);
      expect((await post(started, t, 401)).status).toBe(429);
      expect((await setFaults(started, { quotaPerMinute: 0 })).body).toMatchObject({ quotaPerMinute: 0 });
      expect((await post(started, t, 401)).status).toBe(202);
    } finally {
      await started.close();
    }
    expect((await setFaults(emu, { quotaPerMinute: -1 })).status).toBe(400);
    expect((await setFaults(emu, { quotaPerMinute: 2.5 })).status).toBe(400);
  });
});

describe('fecr hacienda serve flags', () => {
  it('--index-delay MS and --quota-per-minute N set the faults; a bad or missing value is a usage error', async () => {
    const emu = await spawnFecr<{ url: string }>(['hacienda', 'serve', '--port', '0', '--index-delay', '1500', '--quota-per-minute', '30']);
    try {
      const faults = (await (await request(`${emu.ready.url}/_emulator/faults`)).body.json()) as Record<string, unknown>;
      expect(faults).toMatchObject({ indexDelayMs: 1500, quotaPerMinute: 30 });
    } finally {
      expect(await emu.stop('SIGTERM')).toBe(0);
    }
    await expect(spawnFecr(['hacienda', 'serve', '--index-delay', 'soon'])).rejects.toThrow(/exited 2: .*--index-delay must be a whole number/);
    await expect(spawnFecr(['hacienda', 'serve', '--quota-per-minute', '0'])).rejects.toThrow(/exited 2: .*--quota-per-minute must be a whole number from 1/);
    // No default: Hacienda publishes no figure, so the number is always the user's.
    await expect(spawnFecr(['hacienda', 'serve', '--quota-per-minute'])).rejects.toThrow(/exited 2: .*--quota-per-minute/);
  });
});
