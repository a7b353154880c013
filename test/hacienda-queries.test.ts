// Public queries (/fe/ae, /fe/cabys, /fe/ex) through the client against the emulator: shapes per
// NOTES §5, the real API's not-found behaviour, and the TTL cache on an injected clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { InvalidQueryError, PublicQueryClient } from '../src/hacienda/client/index.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { Registry, normalizeText } from '../src/emulator/registry.js';
import { DEFAULT_CABYS_FILE, DEFAULT_REGISTRY_FILE } from '../src/emulator/paths.js';
import { fakeClock } from './helpers/hacienda.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(async () => {
  await emu.close();
});

describe('lookups', () => {
  it('4000001021 → BANCO NACIONAL DE COSTA RICA, with a string CIIU-4 activity code and its old code under ciiu3 (the 2026 shape)', async () => {
    const q = new PublicQueryClient({ baseUrl: emu.url });
    const t = await q.getTaxpayer('4000001021');
    expect(t?.nombre).toBe('BANCO NACIONAL DE COSTA RICA');
    expect(t?.tipoIdentificacion).toBe('02');
    expect(t?.regimen.codigo).toBe(1);
    expect(t?.situacion).toMatchObject({ moroso: 'NO', omiso: 'NO', estado: 'Inscrito' });
    expect(t?.actividades[0]).toEqual({
      estado: 'A',
      tipo: 'P',
      codigo: '6492.0',
      descripcion: 'Otros tipos de crédito',
      ciiu3: [{ codigo: '659202', descripcion: 'EMISORAS Y PROCESADORAS DE TARJETAS DE CREDITO' }],
    });
    await q.close();
  });

  it('AL-00020402-24 → 13 %', async () => {
    const q = new PublicQueryClient({ baseUrl: emu.url });
    const e = await q.getExoneracion('AL-00020402-24');
    expect(e?.porcentajeExoneracion).toBe(13);
    expect(e?.identificacion).toBe('114560789');
    expect(e?.tipoDocumento.codigo).toBe('04');
    expect(e?.cabys).toEqual(['8311200000000', '8311300000000']);
    await q.close();
  });

  it('cabys?q=cafe returns coffee codes first, with integer percent and uri', async () => {
    const q = new PublicQueryClient({ baseUrl: emu.url });
    const r = await q.searchCabys('cafe', { top: 5 });
    expect(r.total).toBeGreaterThan(5);
    expect(r.cantidad).toBe(5);
    for (const c of r.cabys) {
      expect(normalizeText(c.descripcion).split(' ')[0]).toBe('cafe');
      expect(Number.isInteger(c.impuesto)).toBe(true);
      expect(c.uri).toBe(`${emu.url}/fe/cabys?codigo=${c.codigo}`);
      expect(c.categorias).toEqual([]);
    }
    // Accents and case are ignored.
    const accented = await q.searchCabys('CAFÉ', { top: 5 });
    expect(accented.cabys.map((c) => c.codigo)).toEqual(r.cabys.map((c) => c.codigo));
    await q.close();
  });

  it('cabys by code is an array; impuesto is the percent of the catalogue fraction', async () => {
    const res = await request(`${emu.url}/fe/cabys?codigo=2391102010200`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual([
      { codigo: '2391102010200', categorias: [], descripcion: 'Café tostado, sin descafeinar, molido', impuesto: 1 },
    ]);
    const q = new PublicQueryClient({ baseUrl: emu.url });
    expect((await q.getCabys('8311200000000'))?.impuesto).toBe(13);
    await q.close();
  });

  it('unknown ids: /fe/ae and /fe/ex 404 (client: null), /fe/cabys?codigo 200 [] (client: null)', async () => {
    for (const path of ['/fe/ae?identificacion=999999999', '/fe/ex?autorizacion=AL-99999999-24']) {
      const res = await request(emu.url + path);
      expect(res.statusCode).toBe(404);
      expect(((await res.body.json()) as { status: number }).status).toBe(404);
    }
    const res = await request(`${emu.url}/fe/cabys?codigo=9999999999999`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual([]);
    const q = new PublicQueryClient({ baseUrl: emu.url });
    expect(await q.getTaxpayer('999999999')).toBeNull();
    expect(await q.getExoneracion('AL-99999999-24')).toBeNull();
    expect(await q.getCabys('9999999999999')).toBeNull();
    await q.close();
  });

  it('malformed ids: 400 → InvalidQueryError (físicas with a leading 0, bad authorization format)', async () => {
    const q = new PublicQueryClient({ baseUrl: emu.url });
    await expect(q.getTaxpayer('0114560789')).rejects.toBeInstanceOf(InvalidQueryError);
    await expect(q.getExoneracion('XX')).rejects.toBeInstanceOf(InvalidQueryError);
    await q.close();
  });

  it('caches: taxpayers 1 h, CABYS 24 h, on the injected clock', async () => {
    const clock = fakeClock();
    const q = new PublicQueryClient({ baseUrl: emu.url, now: clock.now });
    const count = () => emu.state.requestCounts.fe;
    const start = count();
    await Promise.all([q.getTaxpayer('3101123456'), q.getTaxpayer('3101123456')]);
    expect(count() - start).toBe(1);
    await q.searchCabys('cafe');
    expect(count() - start).toBe(2);
    clock.advance(3_600_001);
    await q.getTaxpayer('3101123456');
    await q.searchCabys('cafe');
    expect(count() - start).toBe(3); // taxpayer expired, CABYS did not
    clock.advance(86_400_000);
    await q.searchCabys('cafe');
    expect(count() - start).toBe(4);
    await q.close();
  });
});

describe('CABYS search ranking', () => {
  const r = Registry.load(DEFAULT_REGISTRY_FILE, DEFAULT_CABYS_FILE);

  it('loads the whole catalogue from the gzip fixture', () => {
    expect(r.cabysCount).toBe(20_501);
  });

  it('all words must match when some entry matches them all; shorter descriptions first', () => {
    const s = r.searchCabys('jugo tomate');
    expect(s.results.map((c) => c.codigo)).toEqual(['2132100000200', '2132100000100']);
    const m = r.searchCabys('café molido');
    expect(m.results[0]?.codigo).toBe('2391102010200');
  });

  it('word prefixes match; stopwords are ignored', () => {
    const s = r.searchCabys('consultoria de gestion financ');
    expect(s.results[0]?.codigo).toBe('8311300000000');
  });
});
