// `fecr hacienda serve` as a real child process, used by the Hacienda client with only base URLs changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicQueryClient, ReceptionClient, resolveEndpoints } from '../src/hacienda/index.js';
import { issueComprobante } from '../src/core/comprobante.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { validInvoice } from './helpers/bodies.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';

let emu: Spawned<{ url: string }>;

beforeAll(async () => {
  emu = await spawnFecr<{ url: string }>(['hacienda', 'serve', '--port', '0', '--delay', '50']);
});
afterAll(async () => {
  expect(await emu.stop('SIGTERM')).toBe(0);
});

describe('fecr hacienda serve', () => {
  it('prints {"url"} when ready and answers the public queries', async () => {
    expect(emu.ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const q = new PublicQueryClient({ baseUrl: emu.ready.url });
    expect((await q.getTaxpayer('4000001021'))?.nombre).toBe('BANCO NACIONAL DE COSTA RICA');
    expect((await q.getExoneracion('AL-00020402-24'))?.porcentajeExoneracion).toBe(13);
    expect(await q.getTaxpayer('999999999')).toBeNull();
  });

  it('receives a signed invoice and gives the verdict aceptado', async () => {
    const t = makeTestIssuer();
    const r = issueComprobante(validInvoice(), t.issuer, t.creds, { securityCode: '87654321', signingTime: new Date(), newId: () => 'cli1' });
    if (!r.ok) throw new Error(JSON.stringify(r.findings));
    const client = new ReceptionClient({
      endpoints: resolveEndpoints('local', { baseUrl: emu.ready.url }),
      credentials: { username: t.issuer.usuarioHacienda, password: 'secreto' },
    });
    const sent = await client.submit({
      clave: r.doc.clave,
      fecha: r.doc.fechaEmision,
      emisor: { tipoIdentificacion: '02', numeroIdentificacion: '3101123456' },
      receptor: { tipoIdentificacion: '02', numeroIdentificacion: '4000001021' },
      comprobanteXml: r.xml,
    });
    expect(sent.status).toBe('received');
    const verdict = await client.waitForVerdict(r.doc.clave, { timeoutMs: 10_000, intervalMs: 50, maxIntervalMs: 200 });
    expect(verdict.estado).toBe('aceptado');
    expect(verdict.mensaje?.mensaje).toBe(1);
    expect(verdict.mensaje?.clave).toBe(r.doc.clave);
    await client.close();
  });

  it('rejects bad flags with a usage error', async () => {
    await expect(spawnFecr(['hacienda', 'serve', '--port', 'x'])).rejects.toThrow(/--port must be a whole number/);
  });
});
