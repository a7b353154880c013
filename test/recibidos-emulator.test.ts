// The emulator plays suppliers (issue 16): its test suppliers issue signed FE, ND, NC and FEC to a receptor, each
// validated by the emulator like any received document (XSD, XAdES, signer, clave, totals) and accepted; a
// MensajeReceptor is checked with the same fidelity: signed by the receptor, about a comprobante the emulator has,
// its consecutivo not reused.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { buildMensajeReceptorXml } from '../src/core/xml/mensaje.js';
import { ReceptionClient, resolveEndpoints, type SubmitRequest } from '../src/hacienda/client/index.js';
import { CODIGOS, startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { FAST_RETRY } from './helpers/hacienda.js';

const BUYER = { tipo: '02', numero: '3101123456', nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA' };
let emu: RunningEmulator;
let rc: ReceptionClient;
const buyerCreds = loadP12(createTestP12({ id: BUYER.numero, type: '02', pin: '1234' }), '1234', new Date());

interface Issued {
  clave: string;
  tipo: string;
  proveedor: { identificacion: string; nombre: string };
  xml: string;
}

async function issue(body: Record<string, unknown>): Promise<{ status: number; documentos: Issued[]; error?: string }> {
  const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, ...((await res.json()) as { documentos: Issued[] }) };
}

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  rc = new ReceptionClient({
    endpoints: resolveEndpoints('local', { baseUrl: emu.url }),
    credentials: { username: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr', password: 'x' },
    retry: FAST_RETRY,
  });
});
afterAll(async () => {
  await rc.close();
  await emu.close();
});

describe('POST /_emulator/suppliers/issue', () => {
  it('three suppliers issue an FE each to the receptor; each is signed by its supplier and accepted by the emulator', async () => {
    const r = await issue({ receptor: BUYER, cantidad: 3 });
    expect(r.status).toBe(201);
    expect(r.documentos).toHaveLength(3);
    expect(new Set(r.documentos.map((d) => d.proveedor.identificacion)).size).toBe(3);
    await emu.state.whenIdle();
    for (const d of r.documentos) {
      const xml = Buffer.from(d.xml, 'base64').toString('utf8');
      expect(xml).toContain(`<Numero>${BUYER.numero}</Numero>`);
      const st = await rc.getStatus(d.clave);
      expect(st.mensaje?.errores, st.mensaje?.detalleMensaje).toEqual([]);
      expect(st.estado).toBe('aceptado');
    }
  });

  it('NC and ND reference a received document; a FEC is signed by its Receptor (the supplier who buys)', async () => {
    const [fe] = (await issue({ receptor: BUYER, proveedor: '3101987654' })).documentos;
    const nc = await issue({ receptor: BUYER, tipo: 'NC', referencia: fe!.clave });
    const nd = await issue({ receptor: BUYER, tipo: 'ND', referencia: fe!.clave });
    const fec = await issue({ receptor: BUYER, tipo: 'FEC' });
    expect([nc.status, nd.status, fec.status]).toEqual([201, 201, 201]);
    await emu.state.whenIdle();
    for (const d of [nc.documentos[0]!, nd.documentos[0]!, fec.documentos[0]!]) {
      const st = await rc.getStatus(d.clave);
      expect(st.estado, `${d.tipo}: ${st.mensaje?.detalleMensaje}`).toBe('aceptado');
    }
    expect(nc.documentos[0]!.proveedor.identificacion).toBe('3101987654');
    expect(nc.documentos[0]!.clave.slice(29, 31)).toBe('03');
    expect(fec.documentos[0]!.clave.slice(29, 31)).toBe('08');
  });

  it('a bad body is a 400 with the field named; an NC without a known referencia too', async () => {
    const r = await issue({ receptor: { tipo: '02', numero: 'x' } });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r)).toContain('receptor.numero');
    const nc = await issue({ receptor: BUYER, tipo: 'NC', referencia: '5'.repeat(50) });
    expect(nc.status).toBe(400);
  });
});

describe('MensajeReceptor at the emulator', () => {
  const newId = () => randomBytes(8).toString('hex');
  const mr = (clave: string, emisor: string, consecutivo: string, total: string) =>
    buildMensajeReceptorXml({
      clave,
      numeroCedulaEmisor: emisor,
      fechaEmisionDoc: '2026-03-03T08:00:00-06:00',
      mensaje: 1,
      totalFactura: total,
      numeroCedulaReceptor: BUYER.numero,
      numeroConsecutivoReceptor: consecutivo,
    });
  const post = (clave: string, emisor: string, consecutivo: string, xml: string): SubmitRequest => ({
    clave,
    fecha: '2026-03-03T08:00:00-06:00',
    emisor: { tipoIdentificacion: '02', numeroIdentificacion: emisor },
    receptor: { tipoIdentificacion: '02', numeroIdentificacion: BUYER.numero },
    consecutivoReceptor: consecutivo,
    comprobanteXml: xml,
  });

  it('about a received comprobante: aceptado; about an unknown clave: rechazado (-9005); the consecutivo reused: -99', async () => {
    const [fe] = (await issue({ receptor: BUYER, proveedor: '4000001021' })).documentos;
    await emu.state.whenIdle();
    const ok = signCanonical(mr(fe!.clave, '4000001021', '00100001050000000077', '0'), buyerCreds, { signingTime: new Date(), newId });
    const sent = await rc.submit(post(fe!.clave, '4000001021', '00100001050000000077', ok));
    await emu.state.whenIdle();
    const st = await rc.getStatus(sent.statusKey);
    expect(st.estado, st.mensaje?.detalleMensaje).toBe('aceptado');

    const unknown = `50603032600040000010210010000101${'9'.repeat(18)}`;
    const bad = signCanonical(mr(unknown, '4000001021', '00100001050000000078', '0'), buyerCreds, { signingTime: new Date(), newId });
    const sent2 = await rc.submit(post(unknown, '4000001021', '00100001050000000078', bad));
    await emu.state.whenIdle();
    const st2 = await rc.getStatus(sent2.statusKey);
    expect(st2.estado).toBe('rechazado');
    expect(st2.mensaje?.errores.map((e) => e.codigo)).toContain(CODIGOS.COMPROBANTE_DESCONOCIDO);

    const [fe2] = (await issue({ receptor: BUYER, proveedor: '4000001021' })).documentos;
    await emu.state.whenIdle();
    const again = signCanonical(mr(fe2!.clave, '4000001021', '00100001050000000077', '0'), buyerCreds, { signingTime: new Date(), newId });
    const sent3 = await rc.submit(post(fe2!.clave, '4000001021', '00100001050000000077', again));
    await emu.state.whenIdle();
    const st3 = await rc.getStatus(sent3.statusKey);
    expect(st3.estado).toBe('rechazado');
    expect(st3.mensaje?.errores.map((e) => e.codigo)).toContain(CODIGOS.CONSECUTIVO_REPETIDO);
  });
});
