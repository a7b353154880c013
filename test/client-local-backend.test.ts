// The local Backend (src/client/local-backend.ts) through its interface: the service's use cases in-process on a
// temp data dir, the embedded emulator started lazily, the CLI acting as the worker; errors as BackendErrors.
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientContext as Ctx } from '../src/client/context.js';
import { BackendError, type Backend, type DocumentStatus } from '../src/client/backend.js';
import { openLocalBackend } from '../src/client/local-backend.js';
import { parseMensajeHaciendaXml } from '../src/core/xml/parse-mensaje.js';
import { FIVE_KINDS, fixtureBody } from './helpers/api-context.js';
import { tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-local-backend-');
const dataDir = join(dir, 'data');
let output = '';

function makeCtx(): Ctx {
  const sink = () => {
    const s = new PassThrough();
    s.on('data', (c: Buffer) => (output += c.toString()));
    return s;
  };
  return {
    io: { stderr: sink(), env: { HOME: dir, FECR_NO_KEYCHAIN: '1' }, cwd: dir },
    debug: false,
    now: () => new Date(),
    randomBytes: (n) => randomBytes(n),
  };
}

const ctx = makeCtx();
const test = makeTestIssuer();
let backend: Backend;

async function rejected(p: Promise<unknown>): Promise<BackendError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(BackendError);
  return e as BackendError;
}

beforeAll(async () => {
  backend = await openLocalBackend(ctx, { dataDir });
});

afterAll(async () => {
  await backend?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('openLocalBackend', () => {
  it('is local mode on the given data dir, without starting Hacienda for issuer calls', async () => {
    expect(backend.mode).toBe('local');
    await backend.registerIssuer(test.issuer);
    expect(await backend.getIssuer('3101123456')).toEqual({
      identificacion: 3101123456,
      tipoIdentificacion: 2,
      nombreComercial: test.issuer.nombreComercial,
      correoElectronico: test.issuer.correoElectronico,
      telefono: test.issuer.telefono,
      ambiente: 2,
    });
    expect(await backend.getIssuer('3101000000')).toBeNull();
    expect(existsSync(join(dataDir, 'fecr.db'))).toBe(true);
    expect(existsSync(join(dataDir, 'emulator.db'))).toBe(false);
  });

  it('maps ServiceErrors: invalid issuer, duplicate registration, wrong PIN → invalid with findings', async () => {
    const bad = await rejected(backend.registerIssuer({ ...test.issuer, tipoIdentificacion: '07' }));
    expect(bad.code).toBe('invalid');
    expect(bad.findings.map((f) => f.path)).toContain('tipoIdentificacion');
    const dup = await rejected(backend.registerIssuer(test.issuer));
    expect(dup.code).toBe('invalid');
    expect(dup.findings).toEqual([{ path: 'identificacion', message: 'ya está registrado' }]);
    const pin = await rejected(backend.updateIssuer({ ...test.issuer, pinCertificado: '0000' }));
    expect(pin.findings[0]?.path).toBe('pinCertificado');
    await backend.updateIssuer(test.issuer);
  });

  it('submit sends (Hacienda has the POST when it returns); waitForVerdict gets aceptado with progress', async () => {
    const { clave } = await backend.submit(fixtureBody(FIVE_KINDS.FE));
    expect(clave).toMatch(/^506\d{47}$/);
    expect(existsSync(join(dataDir, 'emulator.db'))).toBe(true);
    const seen: string[] = [];
    const listed = await backend.listDocuments({});
    expect(listed.find((d) => d.clave === clave)?.estado).not.toBe('pendiente');
    const s = await backend.waitForVerdict(clave, { timeoutMs: 10_000, onProgress: (p) => seen.push(p.estado) });
    expect(s).toMatchObject({ clave, estado: 'aceptado', mensaje: 1, kind: 'FE', moneda: 'CRC', totalComprobante: '918125.00000' });
    expect(s.numeroConsecutivo).toBe(clave.slice(21, 41));
    expect(s.decidedAt).not.toBeNull();
    expect(seen.at(-1)).toBe('aceptado');
    expect(seen[0]).not.toBe('aceptado');
    // The same body again: the same clave, nothing new.
    expect((await backend.submit(fixtureBody(FIVE_KINDS.FE))).clave).toBe(clave);
    const resp = await backend.file(clave, 'RESPUESTA');
    expect(parseMensajeHaciendaXml(resp!.toString('utf8'))).toMatchObject({ clave, mensaje: 1 });
    expect((await backend.file(clave, 'PDF'))!.subarray(0, 4).toString()).toBe('%PDF');
    expect((await backend.file(clave, 'XML'))!.toString()).toContain(`<Clave>${clave}</Clave>`);
  });

  it('waitForVerdict with a short timeout returns the state reached; status later brings the verdict', async () => {
    const { clave } = await backend.submit({ ...fixtureBody(FIVE_KINDS.NC), numeroReferencia: 7001 });
    const early = await backend.waitForVerdict(clave, { timeoutMs: 1 });
    expect(['enviado', 'recibido', 'procesando']).toContain(early.estado);
    // (The worker goes on in the background: the verdict may already be stored by now.)
    const later = await backend.status(clave);
    expect(later?.estado).toBe('aceptado');
  });

  it('a document sent by one backend gets its verdict through another (the emulator resumes from its data file)', async () => {
    const other = await openLocalBackend(makeCtx(), { dataDir });
    const { clave } = await other.submit({ ...fixtureBody(FIVE_KINDS['TE sin receptor']), numeroReferencia: 7002 });
    await other.close();
    const again = await openLocalBackend(makeCtx(), { dataDir });
    try {
      const s = await again.waitForVerdict(clave, { timeoutMs: 10_000 });
      expect(s.estado).toBe('aceptado');
    } finally {
      await again.close();
    }
  });

  it('invalid documents and unknown claves', async () => {
    const body = fixtureBody(FIVE_KINDS.FE);
    body.resumenFactura.totalComprobante = '1.00';
    const e = await rejected(backend.submit({ ...body, numeroReferencia: 7003 }));
    expect(e.code).toBe('invalid');
    expect(e.findings.some((f) => f.path.startsWith('resumenFactura'))).toBe(true);
    const unknown = `506${'0'.repeat(47)}`;
    expect(await backend.status(unknown)).toBeNull();
    expect(await backend.status('not-a-clave')).toBeNull();
    expect(await backend.file(unknown, 'XML')).toBeNull();
    expect((await rejected(backend.waitForVerdict(unknown, { timeoutMs: 100 }))).code).toBe('not_found');
  });

  it('listDocuments filters by estado, since and limit; a bad since is invalid', async () => {
    const all = await backend.listDocuments({});
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(all.every((d: DocumentStatus) => d.estado === 'aceptado')).toBe(true);
    expect(await backend.listDocuments({ estado: 'rechazado' })).toEqual([]);
    expect(await backend.listDocuments({ since: '2999-01-01' })).toEqual([]);
    expect((await backend.listDocuments({ since: '2000-01-01T00:00:00Z', limit: 1 })).length).toBe(1);
    expect((await rejected(backend.listDocuments({ since: 'ayer' }))).code).toBe('invalid');
  });

  it('lookups reach the embedded emulator', async () => {
    expect(await backend.taxpayer('4000001021')).toEqual({ nombre: 'BANCO NACIONAL DE COSTA RICA', tipoIdentificacion: '02', identificacion: '4000001021' });
    expect(await backend.taxpayer('3101000001')).toBeNull();
    expect(await backend.exoneracion('AL-00020402-24')).toMatchObject({ numeroDocumento: 'AL-00020402-24', estado: 'vigente' });
    expect(await backend.exoneracion('AL-99999999-99')).toBeNull();
    const cafe = await backend.cabys('cafe');
    expect(cafe.length).toBeGreaterThan(0);
    expect(cafe[0]!.codigo).toMatch(/^\d{13}$/);
  });

  it('the local account is created once and nothing secret was printed', async () => {
    const { findAccount } = await import('../src/service/accounts.js');
    const { openService } = await import('../src/service/runtime.js');
    const { pino } = await import('pino');
    const svc = await openService({ dataDir, env: { FECR_NO_KEYCHAIN: '1' }, startLocalEmulator: false, logger: pino({ level: 'silent' }) });
    try {
      expect(await findAccount(svc.ctx, 'local')).toMatchObject({ base: 'local', disabled: false });
      const n = await svc.ctx.store.db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(n.n)).toBe(1);
    } finally {
      await svc.close();
    }
    expect(output).not.toMatch(/password|contraseña/i);
    expect(output).not.toContain(test.issuer.pinCertificado + '"');
  });

  it('an account other than local must exist', async () => {
    const b = await openLocalBackend(makeCtx(), { dataDir, account: 'nadie' });
    try {
      const e = await rejected(b.listDocuments({}));
      expect(e.code).toBe('not_found');
      expect(e.message).toContain('fecr accounts create nadie');
    } finally {
      await b.close();
    }
  });
});
