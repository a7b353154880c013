// Issuers, submissions, files and lookups as use cases (no HTTP): real SQLite file, real .p12, real emulator.
import { createPrivateKey, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadP12 } from '../src/core/sign/p12.js';
import { verifyXades } from '../src/core/sign/verify.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { canonicalJson, getDocument, hashBody, listDocuments, submitDocument } from '../src/service/documents.js';
import { getFile } from '../src/service/files.js';
import {
  getIssuerPublic,
  issuerSecretsContext,
  loadIssuerForSigning,
  registerIssuer,
  updateIssuer,
  type IssuerSecrets,
} from '../src/service/issuers.js';
import { closeLookups, lookupExoneracion, lookupTaxpayer, searchCabys } from '../src/service/lookups.js';
import { ServiceError } from '../src/service/service-error.js';
import { FIVE_KINDS, fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { queuedJobs } from './helpers/stores.js';
import { ISSUER } from './helpers/bodies.js';

const PIN = 'Pin-Distinto#7391';
const PASSWORD = 'HaciendaSecreta!2026';
let p12: Buffer;
let issuerBody: Record<string, any>;
let t: TestContext;
let accountA: number;
let accountB: number;

async function account(base: string): Promise<number> {
  const now = Date.now();
  const r = await t.ctx.store.db
    .insertInto('accounts')
    .values({ base, password_hash: 'x', disabled: 0, webhook_url: null, webhook_secret_enc: null, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

async function serviceError(p: Promise<unknown>): Promise<ServiceError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ServiceError);
  return e as ServiceError;
}

async function count(table: 'documents' | 'jobs' | 'issuers'): Promise<number> {
  if (table === 'jobs') return (await queuedJobs(t.ctx.store)).length; // the queue of either store
  const r = await t.ctx.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}

beforeAll(async () => {
  p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: PIN, name: ISSUER.nombre });
  issuerBody = {
    ...ISSUER,
    identificacion: 3101123456,
    tipoIdentificacion: 2,
    codigoActividad: 6201.0,
    pinCertificado: PIN,
    claveHacienda: Buffer.from(PASSWORD).toString('base64'),
    certificadoHacienda: p12.toString('base64'),
  };
  t = await makeServiceContext();
  accountA = await account('cuenta-a');
  accountB = await account('cuenta-b');
});
afterAll(async () => {
  await t.close();
});

describe('issuers', () => {
  it('registers an issuer: record without secrets, secrets sealed with the issuer context', async () => {
    expect(await registerIssuer(t.ctx, accountA, issuerBody)).toEqual({ identificacion: '3101123456', created: true });
    const row = await t.ctx.store.db.selectFrom('issuers').selectAll().where('account_id', '=', accountA).executeTakeFirstOrThrow();
    expect(row.identificacion).toBe('3101123456');
    const record = JSON.parse(row.record_json);
    expect(record).not.toHaveProperty('pinCertificado');
    expect(record).not.toHaveProperty('claveHacienda');
    expect(record).not.toHaveProperty('certificadoHacienda');
    expect(record.usuarioHacienda).toBe(ISSUER.usuarioHacienda);
    for (const secret of [PIN, PASSWORD, issuerBody.claveHacienda, issuerBody.certificadoHacienda.slice(0, 40)]) {
      expect(row.record_json).not.toContain(secret);
      expect(row.secrets_enc).not.toContain(secret);
    }
    const { signingKey, ...secrets } = t.ctx.secrets.openJson<IssuerSecrets>(row.secrets_enc, issuerSecretsContext(accountA, '3101123456'));
    expect(secrets).toEqual({ claveHacienda: issuerBody.claveHacienda, pinCertificado: PIN, certificadoHacienda: issuerBody.certificadoHacienda });
    // Sealed beside them: the .p12's own key and certificates, decoded once (signing needs no PKCS#12 derivation).
    const fromP12 = loadP12(p12, PIN, new Date());
    expect(signingKey!.certificate).toBe(fromP12.certificateBase64);
    expect(signingKey!.chain).toEqual(fromP12.chain.map((c) => c.toString('base64')));
    const key = createPrivateKey({ key: Buffer.from(signingKey!.keyPkcs8, 'base64'), format: 'der', type: 'pkcs8' });
    expect(key.export({ format: 'jwk' })).toEqual(fromP12.privateKey.export({ format: 'jwk' }));
    expect(row.secrets_enc).not.toContain(signingKey!.keyPkcs8.slice(0, 40));
    // Another context (another account) cannot open them.
    expect(() => t.ctx.secrets.open(row.secrets_enc, issuerSecretsContext(accountB, '3101123456'))).toThrow();
  });

  it('a second registration of the same issuer is a 400 that says so', async () => {
    const e = await serviceError(registerIssuer(t.ctx, accountA, issuerBody));
    expect(e.status).toBe(400);
    expect(e.code).toBe('bad_request');
    expect(e.message).toMatch(/ya está registrado/);
    expect(await count('issuers')).toBe(1);
  });

  it('lookup: exactly the six fields, as numbers where the spec says number; null for another account', async () => {
    expect(await getIssuerPublic(t.ctx, accountA, 3101123456)).toEqual({
      identificacion: 3101123456,
      tipoIdentificacion: 2,
      nombreComercial: ISSUER.nombreComercial,
      correoElectronico: ISSUER.correoElectronico,
      telefono: ISSUER.telefono,
      ambiente: 2,
    });
    expect(await getIssuerPublic(t.ctx, accountA, '3101123456')).not.toBeNull();
    expect(await getIssuerPublic(t.ctx, accountB, 3101123456)).toBeNull();
    expect(await getIssuerPublic(t.ctx, accountA, 3101999999)).toBeNull();
  });

  it('validation findings → 400 "Campos requeridos faltantes" with paths', async () => {
    const { ubicacion: _u, ...noUbicacion } = issuerBody;
    const e = await serviceError(registerIssuer(t.ctx, accountB, { ...noUbicacion, tipoIdentificacion: 7 }));
    expect(e.status).toBe(400);
    expect(e.message).toBe('Campos requeridos faltantes');
    expect(e.details?.map((d) => d.path).sort()).toEqual(['tipoIdentificacion', 'ubicacion']);
  });

  describe('certificate check', () => {
    const cases: [string, () => Record<string, any>, RegExp, string][] = [
      ['wrong PIN', () => ({ ...issuerBody, pinCertificado: '0000' }), /^El PIN del certificado es incorrecto$/, 'pinCertificado'],
      [
        'expired',
        () => ({ ...issuerBody, certificadoHacienda: p12Of({ notBefore: new Date('2020-01-01'), notAfter: new Date('2021-01-01') }) }),
        /^El certificado está vencido \(venció el 2021-01-01\)$/,
        'certificadoHacienda',
      ],
      [
        'not yet valid',
        () => ({ ...issuerBody, certificadoHacienda: p12Of({ notBefore: new Date('2099-01-01'), notAfter: new Date('2099-12-31') }) }),
        /^El certificado aún no es válido \(rige a partir del 2099-01-01\)$/,
        'certificadoHacienda',
      ],
      [
        "another taxpayer's certificate",
        () => ({ ...issuerBody, certificadoHacienda: p12Of({ id: '3101999999' }) }),
        /^El certificado no pertenece a la identificación 3101123456 \(pertenece a 3101999999\)$/,
        'certificadoHacienda',
      ],
      ['not base64', () => ({ ...issuerBody, certificadoHacienda: 'esto no es base64!' }), /no es un certificado \.p12 válido/, 'certificadoHacienda'],
      ['not a .p12', () => ({ ...issuerBody, certificadoHacienda: Buffer.from('hola mundo').toString('base64') }), /no es un certificado \.p12 válido/, 'certificadoHacienda'],
      ['no private key', () => ({ ...issuerBody, certificadoHacienda: p12WithoutKey() }), /no contiene la llave privada/, 'certificadoHacienda'],
    ];
    for (const [name, body, message, path] of cases) {
      it(`${name} → 400 with a clear message`, async () => {
        const e = await serviceError(registerIssuer(t.ctx, accountB, body()));
        expect(e.status).toBe(400);
        expect(e.code).toBe('bad_request');
        expect(e.message).toMatch(message);
        expect(e.details?.[0]?.path).toBe(path);
        expect(await getIssuerPublic(t.ctx, accountB, 3101123456)).toBeNull();
      });
    }
  });

  it('update replaces the record and the credentials (the signing cache follows); an unknown issuer is created', async () => {
    const before = await loadIssuerForSigning(t.ctx, accountA, '3101123456');
    expect(before?.creds.certificate.identificacion).toBe('3101123456');
    // Cached: the same object while the issuer does not change.
    expect(await loadIssuerForSigning(t.ctx, accountA, '3101123456')).toBe(before);

    const newP12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: PIN, name: ISSUER.nombre });
    expect(await updateIssuer(t.ctx, accountA, { ...issuerBody, nombreComercial: 'Software Tico Dos', certificadoHacienda: newP12.toString('base64') })).toEqual({
      identificacion: '3101123456',
      created: false,
    });
    const after = await loadIssuerForSigning(t.ctx, accountA, '3101123456');
    expect(after).not.toBe(before);
    expect(after?.record.nombreComercial).toBe('Software Tico Dos');
    expect(after?.creds.certificate.sha256Fingerprint).not.toBe(before?.creds.certificate.sha256Fingerprint);
    expect((await getIssuerPublic(t.ctx, accountA, 3101123456))?.nombreComercial).toBe('Software Tico Dos');
    expect(await count('issuers')).toBe(1);

    // Update of an unknown issuer (the spec shows no 404): upsert. (Another cédula: A's is an issuer of A only, issue 36.)
    const otherP12 = createTestP12({ id: '3101654321', type: '02', pin: PIN, name: ISSUER.nombre });
    const other = { ...issuerBody, identificacion: '3101654321', certificadoHacienda: otherP12.toString('base64') };
    expect(await updateIssuer(t.ctx, accountB, other)).toEqual({ identificacion: '3101654321', created: true });
    expect(await getIssuerPublic(t.ctx, accountB, 3101654321)).not.toBeNull();
    await expect(updateIssuer(t.ctx, accountB, issuerBody)).rejects.toThrow(/^El emisor 3101123456 ya está registrado en otra cuenta de este servicio/);
    // The update runs the same certificate check.
    const e = await serviceError(updateIssuer(t.ctx, accountA, { ...issuerBody, pinCertificado: 'mal' }));
    expect(e.message).toBe('El PIN del certificado es incorrecto');
  });

  it('an issuer saved before its key was sealed decoded still signs (from its .p12), with the same credentials', async () => {
    const row = await t.ctx.store.db.selectFrom('issuers').selectAll().where('account_id', '=', accountB).executeTakeFirstOrThrow();
    const context = issuerSecretsContext(accountB, row.identificacion);
    const { signingKey, ...legacy } = t.ctx.secrets.openJson<IssuerSecrets>(row.secrets_enc, context);
    expect(signingKey).toBeDefined();
    const fresh = await loadIssuerForSigning(t.ctx, accountB, row.identificacion);
    await t.ctx.store.db
      .updateTable('issuers')
      .set({ secrets_enc: t.ctx.secrets.sealJson(legacy, context), updated_at: row.updated_at + 1 })
      .where('id', '=', row.id)
      .execute();
    const old = await loadIssuerForSigning(t.ctx, accountB, row.identificacion);
    expect(old).not.toBe(fresh);
    expect(old!.creds.certificateBase64).toBe(fresh!.creds.certificateBase64);
    expect(old!.creds.rsaKeyValue).toEqual(fresh!.creds.rsaKeyValue);
    expect(old!.creds.privateKey.export({ format: 'jwk' })).toEqual(fresh!.creds.privateKey.export({ format: 'jwk' }));
    expect(old!.record.claveHacienda).toBe(issuerBody.claveHacienda);
    expect(old!.record).not.toHaveProperty('signingKey');
  });
});

describe('submissions', () => {
  const claves = new Map<string, string>();

  it('each of the five kinds → a 50-digit clave, a pendiente document and its send job', async () => {
    const docsBefore = await count('documents');
    const jobsBefore = await count('jobs');
    for (const [kind, fixture] of Object.entries(FIVE_KINDS)) {
      const start = Date.now();
      const r = await submitDocument(t.ctx, accountA, fixtureBody(fixture));
      expect(r.created, kind).toBe(true);
      expect(r.clave, kind).toMatch(/^506\d{47}$/);
      claves.set(kind, r.clave);
      const doc = await getDocument(t.ctx, accountA, r.clave);
      expect(doc?.state).toBe('pendiente');
      expect(doc?.kind).toBe(kind.slice(0, 2));
      expect(doc?.xml).toContain(`<Clave>${r.clave}</Clave>`);
      expect(doc?.body_hash).toBe(hashBody(fixtureBody(fixture)));
      const jobs = await queuedJobs(t.ctx.store, { documentId: r.documentId });
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ type: 'send', done: false, attempts: 0 });
      expect(jobs[0]!.run_at).toBeGreaterThanOrEqual(start);
      expect(jobs[0]!.run_at).toBeLessThanOrEqual(Date.now());
    }
    expect(await count('documents')).toBe(docsBefore + 5);
    expect(await count('jobs')).toBe(jobsBefore + 5);
    expect(claves.get('TE sin receptor')?.slice(29, 31)).toBe('04');
    expect(claves.get('NC')?.slice(29, 31)).toBe('03');
  });

  it('the same body again (keys in another order) → the same clave, nothing stored', async () => {
    const body = fixtureBody(FIVE_KINDS.FE);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect(canonicalJson(reordered)).toBe(canonicalJson(body));
    const docs = await count('documents');
    const jobs = await count('jobs');
    const r = await submitDocument(t.ctx, accountA, reordered);
    expect(r).toMatchObject({ clave: claves.get('FE'), created: false });
    expect(await count('documents')).toBe(docs);
    expect(await count('jobs')).toBe(jobs);
  });

  it('another body under a used number → 400 saying the number is already used', async () => {
    const body = fixtureBody(FIVE_KINDS.FE);
    body.detalleServicio[0].detalle = 'Otra descripción del servicio';
    const e = await serviceError(submitDocument(t.ctx, accountA, body));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/numeroReferencia 101 .* ya fue usado por otro documento/);
    expect(e.message).toContain(claves.get('FE'));
    expect(e.details).toEqual([{ path: 'numeroReferencia', message: expect.stringContaining('ya fue usado') }]);
  });

  it('the number is per kind, sucursal and terminal: another terminal is a new document', async () => {
    const body = { ...fixtureBody(FIVE_KINDS.FE), terminal: 2 };
    const r = await submitDocument(t.ctx, accountA, body);
    expect(r.created).toBe(true);
    expect(r.clave).not.toBe(claves.get('FE'));
    expect(r.clave.slice(24, 29)).toBe('00002');
  });

  it('concurrent identical submissions store one document and all get its clave', async () => {
    const body = { ...fixtureBody(FIVE_KINDS.FE), numeroReferencia: 5001 };
    const docs = await count('documents');
    const results = await Promise.all(Array.from({ length: 6 }, () => submitDocument(t.ctx, accountA, body)));
    expect(new Set(results.map((r) => r.clave)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await count('documents')).toBe(docs + 1);
    const doc = await getDocument(t.ctx, accountA, results[0]!.clave);
    const jobs = await queuedJobs(t.ctx.store, { documentId: doc!.id });
    expect(jobs).toHaveLength(1);
  });

  it('validation failures → 400 with details paths; nothing stored', async () => {
    const docs = await count('documents');
    const body = fixtureBody(FIVE_KINDS.FE);
    delete body.codigoActividad;
    body.detalleServicio[0].numeroLinea = 3;
    let e = await serviceError(submitDocument(t.ctx, accountA, body));
    expect(e.message).toBe('Campos requeridos faltantes');
    expect(e.details).toContainEqual({ path: 'codigoActividad', message: 'is required' });

    const body2: Record<string, any> = { ...fixtureBody(FIVE_KINDS.FE), numeroReferencia: 9001 };
    body2.detalleServicio[0].numeroLinea = 3;
    e = await serviceError(submitDocument(t.ctx, accountA, body2));
    expect(e.details?.map((d) => d.path)).toContain('detalleServicio[0].numeroLinea');

    e = await serviceError(submitDocument(t.ctx, accountA, undefined));
    expect(e.message).toBe('Campos requeridos faltantes');
    expect(await count('documents')).toBe(docs);
  });

  it('an issuer the account has not registered → 400', async () => {
    const e = await serviceError(submitDocument(t.ctx, accountA, { ...fixtureBody(FIVE_KINDS.FE), emisor: '3101999999', numeroReferencia: 77 }));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/El emisor 3101999999 no está registrado/);
  });

  it('tenancy: another account sees neither the document nor its files', async () => {
    const clave = claves.get('FE')!;
    expect(await getDocument(t.ctx, accountB, clave)).toBeNull();
    expect(await getFile(t.ctx, accountB, clave)).toBeNull();
    expect((await listDocuments(t.ctx, accountB)).map((d) => d.clave)).not.toContain(clave);
    expect((await listDocuments(t.ctx, accountA)).map((d) => d.clave)).toContain(clave);
  });

  it('listDocuments filters by state and since, newest first, without the XML', async () => {
    const all = await listDocuments(t.ctx, accountA, { state: 'pendiente' });
    expect(all.length).toBeGreaterThanOrEqual(7);
    expect(all[0]).not.toHaveProperty('xml');
    expect(all.map((d) => d.id)).toEqual([...all.map((d) => d.id)].sort((a, b) => b - a));
    expect(await listDocuments(t.ctx, accountA, { state: 'aceptado' })).toEqual([]);
    expect(await listDocuments(t.ctx, accountA, { since: Date.now() + 60_000 })).toEqual([]);
    expect(await listDocuments(t.ctx, accountA, { limit: 2 })).toHaveLength(2);
  });

  it('files: XML is the signed comprobante; RESPUESTA only once decided; types case-insensitive; unknown type 400', async () => {
    const clave = claves.get('FE exonerada')!;
    const xmlFile = await getFile(t.ctx, accountA, clave, 'xml');
    expect(xmlFile?.fileType).toBe('XML');
    expect(xmlFile?.claveHacienda).toBe(clave);
    const xml = Buffer.from(xmlFile!.encodedFile, 'base64').toString('utf8');
    expect(xml).toBe((await getDocument(t.ctx, accountA, clave))!.xml);
    const report = verifyXades(xml, new Date());
    expect(report.ok, JSON.stringify(report.checks.filter((c) => !c.ok))).toBe(true);
    expect(report.signer?.identificacion).toBe('3101123456');

    expect(await getFile(t.ctx, accountA, clave, 'RESPUESTA')).toBeNull();
    // The worker stores the verdict: then RESPUESTA is the MensajeHacienda.
    const mensaje = `<MensajeHacienda><Clave>${clave}</Clave><Mensaje>1</Mensaje></MensajeHacienda>`;
    await t.ctx.store.db
      .updateTable('documents')
      .set({ state: 'aceptado', response_xml: mensaje, mensaje: 1, decided_at: Date.now() })
      .where('clave', '=', clave)
      .execute();
    const resp = await getFile(t.ctx, accountA, clave, 'respuesta');
    expect(resp?.fileType).toBe('RESPUESTA');
    expect(Buffer.from(resp!.encodedFile, 'base64').toString('utf8')).toBe(mensaje);

    const e = await serviceError(getFile(t.ctx, accountA, clave, 'DOCX'));
    expect(e.status).toBe(400);
    expect(await getFile(t.ctx, accountA, '5'.repeat(50))).toBeNull();
    expect(await getFile(t.ctx, accountA, 'not-a-clave')).toBeNull();
  });

  it('no secret is in the raw database bytes (file and WAL)', async () => {
    const raw = await t.rawBytes();
    expect(raw.length).toBeGreaterThan(10_000);
    for (const secret of [PIN, PASSWORD, issuerBody.claveHacienda, issuerBody.certificadoHacienda, issuerBody.certificadoHacienda.slice(100, 160)]) {
      expect(raw.includes(Buffer.from(secret, 'utf8')), secret.slice(0, 20)).toBe(false);
    }
    // The DB does hold what it should (sanity check of the search itself).
    expect(raw.includes(Buffer.from(ISSUER.usuarioHacienda, 'utf8'))).toBe(true);
  });
});

describe('lookups through the Hacienda client (emulator)', () => {
  let emu: RunningEmulator;
  let lt: TestContext;
  beforeAll(async () => {
    emu = await startEmulator();
    lt = await makeServiceContext({ haciendaUrl: emu.url });
  });
  afterAll(async () => {
    await closeLookups(lt.ctx);
    await lt.close();
    await emu.close();
  });

  it('exoneración: vigente / vencido from fechaVencimiento; unknown and malformed → null', async () => {
    expect(await lookupExoneracion(lt.ctx, 'AL-00020402-24')).toEqual({
      numeroDocumento: 'AL-00020402-24',
      estado: 'vigente',
      porcentajeExoneracion: 13,
      fechaVencimiento: '2029-03-01T00:00:00',
    });
    expect((await lookupExoneracion(lt.ctx, 'AL-00460853-20'))?.estado).toBe('vencido');
    expect(await lookupExoneracion(lt.ctx, 'AL-99999999-24')).toBeNull();
    expect(await lookupExoneracion(lt.ctx, 'no es un número')).toBeNull();
  });

  it('exoneración estado follows the context clock', async () => {
    const late = await makeServiceContext({ haciendaUrl: emu.url, now: () => Date.parse('2029-03-02T00:00:00-06:00') });
    try {
      expect((await lookupExoneracion(late.ctx, 'AL-00020402-24'))?.estado).toBe('vencido');
    } finally {
      await closeLookups(late.ctx);
      await late.close();
    }
  });

  it('taxpayer and CABYS', async () => {
    expect(await lookupTaxpayer(lt.ctx, '4000001021')).toEqual({ nombre: 'BANCO NACIONAL DE COSTA RICA', tipoIdentificacion: '02', identificacion: '4000001021' });
    expect(await lookupTaxpayer(lt.ctx, '4-000-001021')).toMatchObject({ identificacion: '4000001021' });
    expect(await lookupTaxpayer(lt.ctx, '999999999')).toBeNull();
    const cabys = await searchCabys(lt.ctx, 'cafe');
    expect(cabys.length).toBeGreaterThan(0);
    for (const c of cabys) {
      expect(Object.keys(c).sort()).toEqual(['codigo', 'descripcion']);
      expect(c.codigo).toMatch(/^\d{13}$/);
    }
    expect(await searchCabys(lt.ctx, 'zzzzqqqxxyy')).toEqual([]);
  });
});

function p12Of(opts: { id?: string; notBefore?: Date; notAfter?: Date }): string {
  return createTestP12({ id: opts.id ?? ISSUER.identificacion, type: '02', pin: PIN, notBefore: opts.notBefore, notAfter: opts.notAfter }).toString('base64');
}

/** A .p12 holding only the certificate (no key bag). */
function p12WithoutKey(): string {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 1024, e: 0x10001 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01' + randomBytes(8).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000 * 365);
  const attrs = [{ type: '2.5.4.5', value: 'CPJ-3-101-123456' } as unknown as forge.pki.CertificateField, { shortName: 'CN', value: 'SIN LLAVE' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  const asn1 = forge.pkcs12.toPkcs12Asn1(null, [cert], PIN, { algorithm: '3des' });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary').toString('base64');
}
