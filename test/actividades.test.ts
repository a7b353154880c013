// Issue 24, the activity code: written as Hacienda writes it (CIIU-4 `6201.0`), judged the same by `fecr validate` and
// the emulator (-408 for a code of neither catalogue, -407 a warning, -9010 a warning for a CIIU-4 code the incomplete
// list lacks, -9011 fecr's note on an old code), read from the spec's number form, and /fe/ae in the 2026 shape.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANTIGUAS_DATA, CIIU4_DATA } from '../src/core/catalog/actividades-data.js';
import { ANTIGUAS_CODES, CIIU4_CODES } from '../src/core/catalog/actividades-codes.js';
import { actividadFromInput, actividadRegistrada, ciiu4De, claseActividad, codigosAntiguosDe } from '../src/core/catalog/actividades.js';
import { parseIssuer } from '../src/core/document.js';
import { PublicQueryClient } from '../src/hacienda/client/index.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { verdictBench, crDay, crIso, type VerdictBench } from './helpers/verdicts.js';

const FIXTURE = JSON.parse(readFileSync(new URL('../fixtures/documents/01-fe-servicios-13.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const T408 =
  'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico, no es un código valido conforme el Catalogo de Actividades Económicas del Registro Único Tributario.';
const T407 =
  'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico no se encuentra Registrado ante el Ministerio de Hacienda para este contribuyente, favor verificar';

describe('the catalogues fecr ships and how a code is read', () => {
  it('holds the public lists as compiled (369 CIIU-4 codes, 715 old codes), every code in its form', () => {
    expect(CIIU4_DATA).toHaveLength(369);
    expect(ANTIGUAS_DATA).toHaveLength(715);
    for (const [c] of CIIU4_DATA) expect(c).toMatch(/^\d{4}\.\d$/);
    // The codes-only module says the same as the named lists.
    expect(CIIU4_CODES.split(' ')).toEqual(CIIU4_DATA.map(([c]) => c));
    expect(ANTIGUAS_CODES.split(' ')).toEqual(ANTIGUAS_DATA.map(([c, , s]) => `${c}>${s}`));
    for (const [c, , s] of ANTIGUAS_DATA) {
      expect(c).toMatch(/^\d{6}$/);
      expect(s).toMatch(/^(\d{4}\.\d)?$/);
    }
  });

  it('classes: CIIU-4 known or not, old, refused (the digit renderings Hacienda refused with -408)', () => {
    expect(claseActividad('6201.0')).toBe('ciiu4');
    expect(claseActividad('4620.0')).toBe('ciiu4');
    expect(claseActividad('9999.9')).toBe('ciiu4-desconocido');
    expect(claseActividad('512102')).toBe('antigua');
    for (const c of ['620100', '462000', '046200', '007410', '62O1.0', 'ABCDEF']) expect(claseActividad(c), c).toBe('invalida');
  });

  it('maps an old code to its CIIU-4 successor, and back (ciiu3)', () => {
    expect(ciiu4De('512102')).toBe('4620.0');
    expect(ciiu4De('722003')).toBe('6201.0');
    expect(codigosAntiguosDe('6201.0')).toEqual(['722003']);
    expect(actividadRegistrada('512102', [{ codigo: '4620.0' }])).toBe(true);
    expect(actividadRegistrada('512102', [{ codigo: '6201.0', ciiu3: [{ codigo: '722003' }] }])).toBe(false);
    expect(actividadRegistrada('722003', [{ codigo: '6201.0' }])).toBe(true);
  });

  it('reads the number form (the spec types codigoActividad as a number) and what a spreadsheet leaves, never inventing a code', () => {
    const cases: [string | number, string][] = [
      [6201.0, '6201.0'],
      [6201, '6201.0'],
      ['6201', '6201.0'],
      [114, '0114.0'],
      ['114', '0114.0'],
      [4711.2, '4711.2'],
      [11102, '011102'],
      ['11102', '011102'],
      ['6201.0', '6201.0'],
      [' 4620.0 ', '4620.0'],
      [512102, '512102'],
      [620100, '620100'],
      ['12', '12'],
      [12, '12'],
      [9999, '9999'],
    ];
    for (const [v, want] of cases) expect(actividadFromInput(v), JSON.stringify(v)).toBe(want);
  });

  it('an issuer record with a code Hacienda refuses is refused at registration, at codigoActividad, in Hacienda\'s words', () => {
    const base = { ...makeTestIssuer().issuer } as Record<string, unknown>;
    expect(parseIssuer({ ...base, codigoActividad: '6201.0' }).ok).toBe(true);
    expect(parseIssuer({ ...base, codigoActividad: 6201.0 })).toMatchObject({ ok: true, issuer: { codigoActividad: '6201.0' } });
    expect(parseIssuer({ ...base, codigoActividad: '512102' }).ok).toBe(true);
    expect(parseIssuer({ ...base, codigoActividad: '620100' })).toEqual({ ok: false, findings: [{ path: 'codigoActividad', message: `-408 ${T408}` }] });
  });
});

describe('one verdict on the activity code: fecr validate and the emulator (taxpayer 3101123456, registered with 6201.0)', () => {
  let b: VerdictBench;
  beforeAll(async () => {
    b = await verdictBench();
  });
  afterAll(async () => b.close());

  const body = (codigoActividad: string | number) => ({ ...FIXTURE, numeroReferencia: Math.floor(Math.random() * 1e9) + 1, fechaEmision: crIso(crDay(5)), codigoActividad });
  const listed = (st: Awaited<ReturnType<VerdictBench['send']>>) => st.status!.mensaje!.errores.map((e) => [e.codigo, e.mensaje]);

  it('6201.0: validate clean (no warning), aceptado with nothing listed', async () => {
    const v = await b.validate(body('6201.0'), ['--strict']);
    expect(v).toMatchObject({ code: 0, valid: true, findings: [], warnings: [] });
    const st = await b.send(body('6201.0'));
    expect(st.estado).toBe('aceptado');
    expect(listed(st)).toEqual([]);
  });

  it('620100: validate exits 1 with -408 at codigoActividad; the emulator rejects with -408 in Hacienda\'s text', async () => {
    const v = await b.validate(body('620100'));
    expect(v.code).toBe(1);
    expect(v.findings).toEqual([{ path: 'codigoActividad', message: `-408 ${T408}` }]);
    const st = await b.send(body('620100'));
    expect(st.estado).toBe('rechazado');
    expect(listed(st)).toEqual([[-408, T408]]);
  });

  it('512102 (old catalogue): validate passes with fecr\'s note; aceptado with -407 (the taxpayer has 6201.0, not 4620.0)', async () => {
    const v = await b.validate(body('512102'));
    expect(v).toMatchObject({ code: 0, valid: true, findings: [] });
    expect(v.warnings.map((w) => [w.path, w.message.split(' ')[0]])).toEqual([['codigoActividad', '-9011']]);
    expect(v.warnings[0]!.message).toContain('4620.0');
    expect((await b.validate(body('512102'), ['--strict'])).code).toBe(1);
    const st = await b.send(body('512102'));
    expect(st.estado).toBe('aceptado');
    expect(listed(st)).toEqual([[-407, T407]]);
  });

  it('4620.0 for a taxpayer registered with 6201.0: validate clean; aceptado with the -407 warning', async () => {
    expect(await b.validate(body('4620.0'))).toMatchObject({ code: 0, valid: true, findings: [], warnings: [] });
    const st = await b.send(body('4620.0'));
    expect(st.estado).toBe('aceptado');
    expect(listed(st)).toEqual([[-407, T407]]);
  });

  it('722003 (the old code of 6201.0): aceptado without -407', async () => {
    const st = await b.send(body('722003'));
    expect(st.estado).toBe('aceptado');
    expect(listed(st)).toEqual([]);
  });

  it('a CIIU-4 code the known list lacks (9999.9): a warning in both, never a rejection', async () => {
    const v = await b.validate(body('9999.9'));
    expect(v).toMatchObject({ code: 0, valid: true, findings: [] });
    expect(v.warnings.map((w) => w.message.split(' ')[0])).toEqual(['-9010']);
    const st = await b.send(body('9999.9'));
    expect(st.estado).toBe('aceptado');
    expect(st.status!.mensaje!.errores.map((e) => e.codigo)).toEqual([-9010, -407]);
  });

  it('the number form 6201 (JSON 6201.0) is read as 6201.0 end to end', async () => {
    expect(await b.validate(body(6201))).toMatchObject({ code: 0, valid: true, findings: [], warnings: [] });
    const st = await b.send(body(6201));
    expect(st.estado).toBe('aceptado');
  });

  it('/fe/ae answers in the 2026 shape: codigo a CIIU-4 string, ciiu3 a list of the old code(s)', async () => {
    const res = await fetch(`${b.emu.url}/fe/ae?identificacion=3101123456`);
    const j = (await res.json()) as { actividades: unknown[] };
    expect(j.actividades).toEqual([
      { estado: 'A', tipo: 'P', codigo: '6201.0', descripcion: 'Actividades de programación informática', ciiu3: [{ codigo: '722003', descripcion: 'DISEÑADOR GRAFICO, DE SOFWARE Y PAGINAS WEB' }] },
    ]);
  });
});

describe("the client reads /fe/ae's activities leniently (a number of before TRIBU-CR, ciiu3 absent, one object or a list)", () => {
  let server: Server;
  let url: string;
  const answers: Record<string, unknown> = {};
  beforeAll(async () => {
    server = createServer((req, res) => {
      const id = new URL(req.url ?? '/', 'http://x').searchParams.get('identificacion') ?? '';
      const a = answers[id];
      res.writeHead(a ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(a ?? {}));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const taxpayer = (actividades: unknown[]) => ({
    nombre: 'X',
    tipoIdentificacion: '02',
    regimen: { codigo: 1, descripcion: 'Régimen general' },
    situacion: { moroso: 'NO', omiso: 'NO', estado: 'Inscrito', administracionTributaria: 'San José' },
    actividades,
  });

  it('codigo as string or number, ciiu3 as list, object or absent', async () => {
    answers['3101000001'] = taxpayer([
      { estado: 'A', tipo: 'P', codigo: 751101, descripcion: 'antes' },
      { estado: 'A', tipo: 'S', codigo: '4620.0', descripcion: 'flores', ciiu3: [{ codigo: '512102', descripcion: 'FLORES' }] },
      { estado: 'A', tipo: 'S', codigo: 6201.0, descripcion: 'software', ciiu3: { codigo: 722003, descripcion: 'DISEÑO' } },
    ]);
    const q = new PublicQueryClient({ baseUrl: url });
    const t = await q.getTaxpayer('3101000001');
    expect(t?.actividades.map((a) => [a.codigo, a.ciiu3?.map((o) => o.codigo)])).toEqual([
      ['751101', undefined],
      ['4620.0', ['512102']],
      ['6201.0', ['722003']],
    ]);
    await q.close();
  });
});
