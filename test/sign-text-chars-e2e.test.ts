// Issue 25, point 4, end to end: a document with U+2028 (and NEL) in its text goes through the service and the
// embedded emulator to aceptado, and a supplier's invoice signed by another signer (xmlsec1) with U+2028 in a text
// field is imported and answered with a MensajeReceptor whose DetalleMensaje carries U+2028 too, aceptado. Before
// the fix the emulator answered "rechazado" (digest mismatch in fecr's own document) and the import refused the
// supplier's invoice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadP12, type SigningCredentials } from '../src/core/sign/p12.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { MemoryStore } from '../src/emulator/store.js';
import { SupplierBook, supplierComprobante, TEST_SUPPLIERS, type SupplierLine } from '../src/emulator/suppliers.js';
import { createAccount } from '../src/service/accounts.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { decideRecibido } from '../src/service/recibidos/decide.js';
import { importRecibidos } from '../src/service/recibidos/import.js';
import { getRecibido, recibidoFile } from '../src/service/recibidos/queries.js';
import { formatCr } from '../src/core/dates.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { validInvoice } from './helpers/bodies.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { FAST_WORKER, withTimeout } from './helpers/worker-docs.js';
import { templateDocument, xmlsecSign } from './helpers/xmlsec-sign.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

const BUYER = { tipo: '02', numero: '3101123456', nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA' };
let emu: RunningEmulator;
let env: TestContext;
let accountId: number;
let t: TestIssuer;

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  env = await makeServiceContext({ haciendaUrl: emu.url });
  accountId = (await createAccount(env.ctx, { base: 'lineas', password: 'una clave larga 123' })).account.id;
  t = makeTestIssuer();
  await registerIssuer(env.ctx, accountId, t.issuer);
});
afterAll(async () => {
  await env?.close();
  await emu?.close();
});

async function until<T>(what: string, read: () => Promise<T>, done: (x: T) => boolean): Promise<T> {
  return withTimeout(
    (async () => {
      for (;;) {
        const x = await read();
        if (done(x)) return x;
        await new Promise((res) => setTimeout(res, 30));
      }
    })(),
    20_000,
    what,
  );
}

describe('a document fecr issues with U+2028 and NEL in its text', () => {
  it('is signed by the service, sent by the worker, and aceptado by the embedded emulator', async () => {
    const body = validInvoice();
    body.numeroReferencia = 2028;
    body.receptor.nombre = 'BANCO NACIONAL\u2028DE COSTA RICA';
    body.detalleServicio[0].detalle = 'Consultoría\u2028en gestión\u0085estratégica\u2029fase 1';
    const { clave } = await submitDocument(env.ctx, accountId, body);
    const stored = (await getDocument(env.ctx, accountId, clave))!;
    expect(stored.xml).toContain('Consultoría\u2028en gestión\u0085estratégica\u2029fase 1');
    expect(xmlsecVerify(stored.xml).ok).toBe(true);
    const worker = startWorker(env.ctx, FAST_WORKER);
    let row;
    try {
      row = await until('the verdict', () => getDocument(env.ctx, accountId, clave), (d) => d?.state === 'aceptado' || d?.state === 'rechazado' || d?.state === 'error');
    } finally {
      await worker.stop();
    }
    expect(row!.state, row!.detalle_mensaje ?? '').toBe('aceptado');
  });
});

describe('a supplier invoice signed by another signer with U+2028 in its text', () => {
  const book = new SupplierBook(new MemoryStore(), Date.now);
  const cafetal = TEST_SUPPLIERS[0]!;
  const credsOf = (s: (typeof TEST_SUPPLIERS)[number]): SigningCredentials => {
    const p = book.p12(s);
    return loadP12(p.p12, p.pin, new Date());
  };

  it('signed by xmlsec1 (another signer than fecr): imported as valid', async () => {
    // The supplier's own lines (their CABYS codes are in the catalogue), with U+2028, NEL and U+2029 in the text.
    const [software, transporte] = cafetal.lineas as [SupplierLine, SupplierLine];
    const lineas = [
      { ...software, detalle: 'Paquete de software\u2028de desarrollo\u0085licencia anual' },
      { ...transporte, detalle: 'Transporte aéreo\u2029local de personal' },
    ];
    const { unsignedXml } = supplierComprobante({ receptor: BUYER, kind: 'FE', lineas }, cafetal, 2028, new Date());
    expect(unsignedXml).toContain('Paquete de software\u2028de desarrollo\u0085licencia anual');
    const creds = credsOf(cafetal);
    const shape = { c14n: 'exc', docTransform: 'xpath', keyInfoReference: false, certDigest: 'sha1', signingTime: formatCr(new Date()), policy: 'v4.4', haciendaIds: true } as const;
    const signed = xmlsecSign(templateDocument(unsignedXml, shape, creds), creds);
    expect(signed).toContain('software\u2028de desarrollo\u0085licencia');
    expect(xmlsecVerify(signed).ok).toBe(true);

    const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'proveedor-u2028.xml', bytes: Buffer.from(signed) }]);
    expect(r!.hallazgos, JSON.stringify(r!.hallazgos)).toEqual([]);
    expect(r!.estado).toBe('pendiente');
  });

  it('issued by an emulator supplier: aceptado, imported, and the MensajeReceptor (U+2028 in DetalleMensaje) aceptado', async () => {
    const [software] = cafetal.lineas as [SupplierLine];
    const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ receptor: BUYER, proveedor: cafetal.identificacion, lineas: [{ ...software, detalle: 'Paquete\u2028de software\u0085de desarrollo' }] }),
    });
    expect(res.status).toBe(201);
    const [doc] = ((await res.json()) as { documentos: { clave: string; xml: string }[] }).documentos;
    await emu.state.whenIdle();
    expect(Buffer.from(doc!.xml, 'base64').toString('utf8')).toContain('Paquete\u2028de software\u0085de desarrollo');

    const [r] = await importRecibidos(env.ctx, accountId, [{ name: 'emulador-u2028.xml', bytes: Buffer.from(doc!.xml, 'base64') }]);
    expect([r!.estado, r!.haciendaEstado, r!.hallazgos]).toEqual(['pendiente', 'aceptado', []]);

    const detalle = 'Parte del servicio\u2028no fue prestada\u0085(faltó una licencia)';
    await decideRecibido(env.ctx, accountId, doc!.clave, { decision: 'parcial', ivaAcreditable: '100', detalle });
    expect((await recibidoFile(env.ctx, accountId, doc!.clave, 'MENSAJE_RECEPTOR'))?.toString()).toContain(detalle);
    const worker = startWorker(env.ctx, FAST_WORKER);
    let d;
    try {
      d = await until('the MensajeReceptor verdict', () => getRecibido(env.ctx, accountId, doc!.clave), (x) => x?.respuestaEstado === 'aceptado' || x?.respuestaEstado === 'rechazado');
    } finally {
      await worker.stop();
    }
    expect(d!.respuestaEstado, d!.decision?.respuestaDetalle ?? '').toBe('aceptado');
    expect(d!.estado).toBe('parcial');
  }, 60_000);
});
