// The client API over HTTP: a real server on 127.0.0.1:0, real accounts and RS256 tokens (auth modules), a real
// SQLite file, real .p12 certificates, the fixture bodies and the Hacienda emulator for the lookups.
import { generateKeyPair, SignJWT } from 'jose';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyXades } from '../src/core/sign/verify.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { API_PATHS, buildApiApp } from '../src/server/api-app.js';
import { EXTRA_PATHS } from '../src/server/api-extra.js';
import { RECIBIDOS_PATHS } from '../src/server/api-recibidos.js';
import { REPORTES_PATHS } from '../src/server/api-reportes.js';
import { ARCHIVO_PATHS } from '../src/server/api-archivo.js';
import { DOCUMENTOS_PATHS } from '../src/server/api-documentos.js';
import { CONTINGENCIA_PATHS } from '../src/server/api-contingencia.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { closeLookups } from '../src/service/lookups.js';
import { createTokenVerifier, issueToken, revokeToken } from '../src/service/tokens.js';
import { FIVE_KINDS, fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { queuedJobs } from './helpers/stores.js';
import { ISSUER } from './helpers/bodies.js';

const AUTH_URL = 'http://auth.fecr.test';
const PIN = 'Pin-Api#5521';
const PASSWORD = 'ClaveHaciendaApi!77';
const UNAUTHORIZED = { error: 'unauthorized', message: 'Token inválido o expirado' };
const MISSING = 'Campos requeridos faltantes';

let emu: RunningEmulator;
let t: TestContext;
let app: ReturnType<typeof buildApiApp>;
let baseUrl: string;
let tokenA: string;
let tokenB: string;
let issuerBody: Record<string, any>;
/** Every response body seen, to search for secrets at the end. */
const seen: string[] = [];

interface Res {
  status: number;
  body: any;
  text: string;
}

async function post(path: string, body: unknown, opts: { token?: string | null; raw?: string; contentType?: string; headers?: Record<string, string> } = {}): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? tokenA : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const payload = opts.raw ?? (body === undefined ? undefined : JSON.stringify(body));
  if (payload !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await request(baseUrl + path, { method: 'POST', headers, body: payload });
  const text = await res.body.text();
  seen.push(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, body: parsed, text };
}

async function count(table: 'documents' | 'jobs' | 'issuers'): Promise<number> {
  if (table === 'jobs') return (await queuedJobs(t.ctx.store)).length; // the queue of either store
  const r = await t.ctx.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}

beforeAll(async () => {
  emu = await startEmulator();
  t = await makeServiceContext({ haciendaUrl: emu.url });
  await ensureSigningKey(t.ctx);
  await createAccount(t.ctx, { base: 'empresa-a', password: 'contrasena-a-123' });
  await createAccount(t.ctx, { base: 'empresa-b', password: 'contrasena-b-123' });
  tokenA = (await issueToken(t.ctx, { base: 'empresa-a' }, { issuer: AUTH_URL })).token;
  tokenB = (await issueToken(t.ctx, { base: 'empresa-b' }, { issuer: AUTH_URL })).token;
  const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: PIN, name: ISSUER.nombre });
  issuerBody = {
    ...ISSUER,
    identificacion: 3101123456,
    tipoIdentificacion: 2,
    codigoActividad: 6201.0,
    pinCertificado: PIN,
    claveHacienda: Buffer.from(PASSWORD).toString('base64'),
    certificadoHacienda: p12.toString('base64'),
  };
  app = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await closeLookups(t.ctx);
  await t?.close();
  await emu?.close();
});

describe('authentication', () => {
  it('every endpoint: missing, malformed, foreign-key, expired and revoked tokens → 401 unauthorized', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const now = Math.floor(Date.now() / 1000);
    const foreign = await new SignJWT({ base: 'empresa-a' })
      .setProtectedHeader({ alg: 'RS256', kid: 'otra-llave', typ: 'JWT' })
      .setIssuer(AUTH_URL)
      .setAudience(AUTH_URL)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .setJti('j1')
      .setSubject('empresa-a')
      .sign(privateKey);
    const expired = (await issueToken({ ...t.ctx, now: () => Date.now() - 9 * 3600_000 }, { base: 'empresa-a' }, { issuer: AUTH_URL })).token;
    const revoked = (await issueToken(t.ctx, { base: 'empresa-a' }, { issuer: AUTH_URL })).token;
    const revokedJti = JSON.parse(Buffer.from(revoked.split('.')[1]!, 'base64url').toString()).jti as string;
    await revokeToken(t.ctx, revokedJti);
    for (const path of API_PATHS) {
      for (const headers of [{}, { authorization: 'Bearer' }, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: `Bearer ${tokenA}x` }] as Record<string, string>[]) {
        const r = await post(path, { identificacion: 3101123456 }, { token: null, headers });
        expect([path, r.status, r.body]).toEqual([path, 401, UNAUTHORIZED]);
      }
      for (const token of [foreign, expired, revoked, 'a.b.c']) {
        const r = await post(path, { identificacion: 3101123456 }, { token });
        expect([path, r.status, r.body]).toEqual([path, 401, UNAUTHORIZED]);
      }
    }
  });

  it('authentication comes before the body: malformed JSON without a token is still a 401', async () => {
    const r = await post('/api/enviar/items', undefined, { token: null, raw: '{"emisor": ' });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });
});

describe('issuers', () => {
  it('register → 200 {status, message}', async () => {
    const r = await post('/api/enviar/emisor', issuerBody);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'success', message: expect.any(String) });
  });

  it('registering it again → 400 saying it exists', async () => {
    const r = await post('/api/enviar/emisor', issuerBody);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.message).toMatch(/ya está registrado/);
  });

  it('Errors table: issuer registration with required fields missing → 400 bad_request "Campos requeridos faltantes" + details', async () => {
    const { pinCertificado: _p, ubicacion: _u, ...partial } = issuerBody;
    const r = await post('/api/enviar/emisor', partial, { token: tokenB });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.message).toBe(MISSING);
    expect(r.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['pinCertificado', 'ubicacion']);
  });

  it('certificate failures → 400 with a clear Spanish message (wrong PIN, expired, another taxpayer)', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ pinCertificado: '9999' }, /^El PIN del certificado es incorrecto$/],
      [
        { certificadoHacienda: createTestP12({ id: '3101123456', type: '02', pin: PIN, notBefore: new Date('2020-01-01'), notAfter: new Date('2022-06-30') }).toString('base64') },
        /^El certificado está vencido \(venció el 2022-06-30\)$/,
      ],
      [
        { certificadoHacienda: createTestP12({ id: '114560789', type: '01', pin: PIN }).toString('base64') },
        /^El certificado no pertenece a la identificación 3101123456 \(pertenece a 114560789\)$/,
      ],
    ];
    for (const [change, message] of cases) {
      const r = await post('/api/enviar/emisor', { ...issuerBody, ...change }, { token: tokenB });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('bad_request');
      expect(r.body.message).toMatch(message);
    }
    expect((await post('/api/consultar/emisor', { identificacion: 3101123456 }, { token: tokenB })).status).toBe(404);
  });

  it('lookup → exactly the six fields', async () => {
    const r = await post('/api/consultar/emisor', { identificacion: 3101123456 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'success',
      data: {
        identificacion: 3101123456,
        tipoIdentificacion: 2,
        nombreComercial: ISSUER.nombreComercial,
        correoElectronico: ISSUER.correoElectronico,
        telefono: ISSUER.telefono,
        ambiente: 2,
      },
    });
  });

  it('Errors table: issuer lookup of an unregistered issuer → 404 "Emisor no encontrado"; missing field → 400', async () => {
    let r = await post('/api/consultar/emisor', { identificacion: 3101999999 });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'not_found', message: 'Emisor no encontrado' });
    r = await post('/api/consultar/emisor', {});
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'bad_request', message: MISSING, details: [{ path: 'identificacion', message: 'is required' }] });
  });

  it('update → 200; changes show in the lookup; an unknown issuer is created (no 404 in the spec)', async () => {
    let r = await post('/api/actualizar/emisor', { ...issuerBody, nombreComercial: 'Software Tico Actualizado', telefono: '22224444' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'success', message: expect.any(String) });
    r = await post('/api/consultar/emisor', { identificacion: '3101123456' });
    expect(r.body.data).toMatchObject({ nombreComercial: 'Software Tico Actualizado', telefono: '22224444' });
    await post('/api/actualizar/emisor', issuerBody);

    const other = createTestP12({ id: '3101654321', type: '02', pin: PIN });
    r = await post('/api/actualizar/emisor', { ...issuerBody, identificacion: 3101654321, certificadoHacienda: other.toString('base64') });
    expect(r.status).toBe(200);
    expect((await post('/api/consultar/emisor', { identificacion: 3101654321 })).status).toBe(200);
  });
});

describe('submissions and files', () => {
  const claves = new Map<string, string>();

  it('each of the five kinds → 200 {status, message, clave}; the document and its send job are stored', async () => {
    for (const [kind, fixture] of Object.entries(FIVE_KINDS)) {
      const r = await post('/api/enviar/items', fixtureBody(fixture));
      expect([kind, r.status]).toEqual([kind, 200]);
      expect(r.body).toEqual({ status: 'success', message: expect.any(String), clave: expect.stringMatching(/^\d{50}$/) });
      claves.set(kind, r.body.clave);
      const doc = await t.ctx.store.db.selectFrom('documents').selectAll().where('clave', '=', r.body.clave).executeTakeFirstOrThrow();
      expect(doc.state).toBe('pendiente');
      const jobs = await queuedJobs(t.ctx.store, { documentId: doc.id });
      expect(jobs.map((j) => j.type)).toEqual(['send']);
    }
    expect(await count('documents')).toBe(5);
    expect(await count('jobs')).toBe(5);
  });

  it('idempotent resubmission → same clave, still one row and one job', async () => {
    const r = await post('/api/enviar/items', fixtureBody(FIVE_KINDS['TE extranjero']));
    expect(r.status).toBe(200);
    expect(r.body.clave).toBe(claves.get('TE extranjero'));
    expect(await count('documents')).toBe(5);
    expect(await count('jobs')).toBe(5);
  });

  it('conflicting resubmission (another body, same number) → 400 saying the number is used', async () => {
    const body = fixtureBody(FIVE_KINDS['TE extranjero']);
    body.fechaEmision = '2026-04-12T09:00:00-06:00';
    const r = await post('/api/enviar/items', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.message).toMatch(/ya fue usado por otro documento/);
    expect(await count('documents')).toBe(5);
  });

  it('Errors table: submission with required fields missing → 400 "Campos requeridos faltantes" with details paths', async () => {
    const body = fixtureBody(FIVE_KINDS.FE);
    delete body.emisor;
    delete body.resumenFactura.codigoTipoMoneda;
    body.detalleServicio[0].precioUnitario = 'mil';
    const r = await post('/api/enviar/items', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.message).toBe(MISSING);
    const paths = r.body.details.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['emisor', 'resumenFactura.codigoTipoMoneda', 'detalleServicio[0].precioUnitario']));
    for (const d of r.body.details) expect(Object.keys(d).sort()).toEqual(['message', 'path']);
    // Figures that do not add up are findings too.
    const wrong: Record<string, any> = { ...fixtureBody(FIVE_KINDS.FE), numeroReferencia: 4242 };
    wrong.resumenFactura.totalComprobante = '1.00';
    const r2 = await post('/api/enviar/items', wrong);
    expect(r2.status).toBe(400);
    expect(r2.body.details.map((d: { path: string }) => d.path)).toContain('resumenFactura.totalComprobante');
    expect(await count('documents')).toBe(5);
  });

  it('a submission for an issuer the account has not registered → 400', async () => {
    const r = await post('/api/enviar/items', fixtureBody(FIVE_KINDS.FE), { token: tokenB });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'bad_request', message: expect.stringMatching(/El emisor 3101123456 no está registrado/) });
  });

  it('file XML (default and explicit, any case): base64 of the signed comprobante, which verifies', async () => {
    for (const kind of Object.keys(FIVE_KINDS)) {
      const clave = claves.get(kind)!;
      const r = await post('/api/consultar/archivo', { claveHacienda: clave });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'success', data: { claveHacienda: clave, fileType: 'XML', encodedFile: expect.any(String) } });
      const xml = Buffer.from(r.body.data.encodedFile, 'base64').toString('utf8');
      expect(xml).toContain(`<Clave>${clave}</Clave>`);
      const report = verifyXades(xml, new Date());
      expect(report.ok, `${kind}: ${JSON.stringify(report.checks.filter((c) => !c.ok))}`).toBe(true);
    }
    const r = await post('/api/consultar/archivo', { claveHacienda: claves.get('FE'), fileType: 'xml' });
    expect(r.body.data.fileType).toBe('XML');
  });

  it('file PDF: base64 of the representación gráfica', async () => {
    const clave = claves.get('FE exonerada')!;
    const r = await post('/api/consultar/archivo', { claveHacienda: clave, fileType: 'pdf' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ claveHacienda: clave, fileType: 'PDF' });
    const pdf = Buffer.from(r.body.data.encodedFile, 'base64');
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.length).toBeGreaterThan(5_000);
  });

  it('Errors table: file download with no file for the key → 404 "Archivo no encontrado para la clave proporcionada"', async () => {
    const notFound = { error: 'not_found', message: 'Archivo no encontrado para la clave proporcionada' };
    // RESPUESTA before Hacienda's verdict.
    let r = await post('/api/consultar/archivo', { claveHacienda: claves.get('FE'), fileType: 'RESPUESTA' });
    expect([r.status, r.body]).toEqual([404, notFound]);
    r = await post('/api/consultar/archivo', { claveHacienda: '5'.repeat(50) });
    expect([r.status, r.body]).toEqual([404, notFound]);
    r = await post('/api/consultar/archivo', { claveHacienda: '123' });
    expect([r.status, r.body]).toEqual([404, notFound]);
    r = await post('/api/consultar/archivo', { claveHacienda: claves.get('FE'), fileType: 'DOCX' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    r = await post('/api/consultar/archivo', {});
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'bad_request', message: MISSING, details: [{ path: 'claveHacienda' }] });
  });

  it('tenant isolation: another account cannot see the issuer, the documents or their files', async () => {
    expect((await post('/api/consultar/emisor', { identificacion: 3101123456 }, { token: tokenB })).status).toBe(404);
    for (const clave of claves.values()) {
      const r = await post('/api/consultar/archivo', { claveHacienda: clave }, { token: tokenB });
      expect([r.status, r.body.message]).toEqual([404, 'Archivo no encontrado para la clave proporcionada']);
    }
    // B cannot register the same identification (issue 36: one numbering per cédula per service; B's first
    // document would be Hacienda's -99): refused naming the cédula, not A; A's data untouched.
    const r = await post('/api/enviar/emisor', { ...issuerBody, nombreComercial: 'Sucursal de B' }, { token: tokenB });
    expect([r.status, r.body.error, r.body.message]).toEqual([400, 'bad_request', 'El emisor 3101123456 ya está registrado en otra cuenta de este servicio; una identificación numera sus comprobantes en una sola cuenta']);
    expect(JSON.stringify(r.body)).not.toContain('empresa-a');
    expect((await post('/api/consultar/emisor', { identificacion: 3101123456 }, { token: tokenB })).status).toBe(404);
    expect((await post('/api/consultar/emisor', { identificacion: 3101123456 })).body.data.nombreComercial).toBe(ISSUER.nombreComercial);
    // B submitting the same body: not an issuer of B's.
    const sub = await post('/api/enviar/items', fixtureBody(FIVE_KINDS.FE), { token: tokenB });
    expect([sub.status, sub.body.details]).toEqual([400, [{ path: 'emisor', message: 'no es un emisor registrado de la cuenta' }]]);
  });
});

describe('Hacienda lookups (emulator)', () => {
  it('identificacion 4000001021 → BANCO NACIONAL DE COSTA RICA; unknown → 404 "Identificación no encontrada"', async () => {
    let r = await post('/api/hacienda/identificacion', { identificacion: '4000001021' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'success', data: { nombre: 'BANCO NACIONAL DE COSTA RICA', tipoIdentificacion: '02', identificacion: '4000001021' } });
    r = await post('/api/hacienda/identificacion', { identificacion: '999999999' });
    expect([r.status, r.body]).toEqual([404, { error: 'not_found', message: 'Identificación no encontrada' }]);
  });

  it('fecr extensions, only when asked: the taxpayer\'s régimen, situación and actividades (detalle), each CABYS code\'s IVA rate (impuesto)', async () => {
    let r = await post('/api/hacienda/identificacion', { identificacion: '3101123456', detalle: true });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA',
      tipoIdentificacion: '02',
      identificacion: '3101123456',
      regimen: { codigo: 1, descripcion: 'Régimen general' },
      situacion: { estado: 'Inscrito', moroso: 'NO', omiso: 'NO', administracionTributaria: 'San José Oeste' },
      actividades: [{ codigo: '6201.0', descripcion: 'Actividades de programación informática', ciiu3: ['722003'] }],
    });
    r = await post('/api/hacienda/identificacion', { identificacion: '3101123456', detalle: 'yes' });
    expect(r.status).toBe(400);
    r = await post('/api/hacienda/cabys', { name: 'cafe', impuesto: true });
    expect(r.status).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
    for (const c of r.body.data) {
      expect(Object.keys(c).sort()).toEqual(['codigo', 'descripcion', 'impuesto']);
      expect([0, 1, 2, 4, 13]).toContain(c.impuesto);
    }
  });

  it('exoneracion AL-00020402-24 → vigente 13; unknown → 404 "Documento de exoneración no encontrado"', async () => {
    let r = await post('/api/hacienda/exoneracion', { exoneracion: 'AL-00020402-24' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'success',
      data: { numeroDocumento: 'AL-00020402-24', estado: 'vigente', porcentajeExoneracion: 13, fechaVencimiento: '2029-03-01T00:00:00' },
    });
    r = await post('/api/hacienda/exoneracion', { exoneracion: 'AL-00460853-20' });
    expect(r.body.data.estado).toBe('vencido');
    r = await post('/api/hacienda/exoneracion', { exoneracion: 'AL-99999999-24' });
    expect([r.status, r.body]).toEqual([404, { error: 'not_found', message: 'Documento de exoneración no encontrado' }]);
  });

  it('cabys "cafe" → [{codigo, descripcion}]; nothing found → 200 []', async () => {
    let r = await post('/api/hacienda/cabys', { name: 'cafe' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    expect(r.body.data.length).toBeGreaterThan(0);
    for (const c of r.body.data) {
      expect(Object.keys(c).sort()).toEqual(['codigo', 'descripcion']);
      expect(c.codigo).toMatch(/^\d{13}$/);
      expect(c.descripcion.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()).toContain('cafe');
    }
    r = await post('/api/hacienda/cabys', { name: 'zzqqxxjj' });
    expect(r.body).toEqual({ status: 'success', data: [] });
    r = await post('/api/hacienda/cabys', {});
    expect([r.status, r.body.message]).toEqual([400, MISSING]);
  });
});

describe('transport errors are 4xx error bodies, never 500', () => {
  it('malformed JSON → 400, wrong content type → 400, empty body → 400 Campos requeridos faltantes, > 1 MiB → 413', async () => {
    let r = await post('/api/enviar/items', undefined, { raw: '{"emisor": ' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    r = await post('/api/enviar/items', undefined, { raw: 'emisor=1', contentType: 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    r = await post('/api/enviar/items', undefined, { raw: '' });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(MISSING);
    r = await post('/api/enviar/items', undefined);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(MISSING);
    r = await post('/api/enviar/items', ['no', 'es', 'objeto']);
    expect(r.status).toBe(400);
    r = await post('/api/enviar/items', undefined, { raw: JSON.stringify({ x: 'a'.repeat(1024 * 1024) }) });
    expect(r.status).toBe(413);
    expect(r.body.error).toBe('payload_too_large');
  });
});

describe('OpenAPI', () => {
  it('GET /openapi.json (no token): OpenAPI 3.1 with the eight paths and the extensions, bearer security and the error schema', async () => {
    const res = await request(`${baseUrl}/openapi.json`);
    expect(res.statusCode).toBe(200);
    const doc = (await res.body.json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([...API_PATHS, ...EXTRA_PATHS, ...RECIBIDOS_PATHS, ...REPORTES_PATHS, ...ARCHIVO_PATHS, ...DOCUMENTOS_PATHS, ...CONTINGENCIA_PATHS].sort());
    expect(doc.paths['/api/reportes/iva'].post).toMatchObject({ 'x-fecr-extension': true, security: [{ bearerAuth: [] }] });
    // The additive endpoints are listed and marked as extensions beyond SERVICE-SPEC; the spec's eight are not.
    expect(EXTRA_PATHS).toEqual(expect.arrayContaining(['/api/consultar/estado', '/api/consultar/documentos']));
    for (const path of EXTRA_PATHS) expect(doc.paths[path].post).toMatchObject({ 'x-fecr-extension': true, tags: ['fecr extensions'], security: [{ bearerAuth: [] }] });
    for (const path of API_PATHS) expect(doc.paths[path].post['x-fecr-extension']).toBeUndefined();
    const estado = doc.paths['/api/consultar/estado'].post;
    expect(Object.keys(estado.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404']));
    expect(doc.components.schemas.StatusBody.required).toEqual(['claveHacienda']);
    expect(Object.keys(doc.components.schemas.ListBody.properties).sort()).toEqual(['desde', 'emisor', 'estado', 'limite']);
    expect(doc.components.schemas.DocumentStatus.properties.estado.enum).toEqual(['pendiente', 'credenciales_invalidas', 'enviado', 'recibido', 'procesando', 'aceptado', 'rechazado', 'error']);
    expect(doc.components.schemas.DocumentListResponse.properties.data.type).toBe('array');
    expect(doc.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.components.schemas.Error.required).toEqual(['error', 'message']);
    const items = doc.paths['/api/enviar/items'].post;
    expect(items.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(items.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
    const body = doc.components.schemas.DocumentBody;
    expect(body.required).toEqual(expect.arrayContaining(['emisor', 'numeroReferencia', 'tipoDoc', 'receptor', 'detalleServicio', 'resumenFactura']));
    expect(doc.components.schemas.IssuerRecord.required).toEqual(expect.arrayContaining(['certificadoHacienda', 'pinCertificado', 'ubicacion']));
    expect(Object.keys(doc.components.schemas.IssuerLookupResponse.properties.data.properties).sort()).toEqual(
      ['ambiente', 'correoElectronico', 'identificacion', 'nombreComercial', 'telefono', 'tipoIdentificacion'],
    );
  });
});

describe('secrets', () => {
  it('no response ever carried a secret; the raw database bytes hold none', async () => {
    const secrets = [PIN, PASSWORD, issuerBody.claveHacienda, issuerBody.certificadoHacienda.slice(200, 260)];
    expect(seen.length).toBeGreaterThan(50);
    for (const s of secrets) for (const text of seen) expect(text.includes(s), s.slice(0, 12)).toBe(false);
    const raw = await t.rawBytes();
    for (const s of [...secrets, issuerBody.certificadoHacienda]) expect(raw.includes(Buffer.from(s)), s.slice(0, 12)).toBe(false);
  });
});
