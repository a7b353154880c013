import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildClave, buildConsecutivo, parseClave, parseConsecutivo, securityCodeFrom } from '../src/core/clave.js';
import { formatCr, parseIsoDateTime, toCrDateTime } from '../src/core/dates.js';

describe('NumeroConsecutivo', () => {
  it('lays out branch, terminal, type and number in 20 digits', () => {
    expect(buildConsecutivo({ sucursal: 2, terminal: 1, tipoComprobante: '01', numero: 7 })).toBe('00200001010000000007');
    expect(buildConsecutivo({ sucursal: 999, terminal: 99999, tipoComprobante: '04', numero: 9999999999 })).toBe('99999999049999999999');
    expect(parseConsecutivo('00200001010000000007')).toEqual({ sucursal: 2, terminal: 1, tipoComprobante: '01', numero: 7 });
  });
  it('rejects out-of-range parts', () => {
    expect(() => buildConsecutivo({ sucursal: 0, terminal: 1, tipoComprobante: '01', numero: 1 })).toThrow(/sucursal/);
    expect(() => buildConsecutivo({ sucursal: 1, terminal: 100000, tipoComprobante: '01', numero: 1 })).toThrow(/terminal/);
    expect(() => buildConsecutivo({ sucursal: 1, terminal: 1, tipoComprobante: '01', numero: 10_000_000_000 })).toThrow(/numero/);
  });
});

describe('clave', () => {
  it('reproduces the ANEXOS sandbox example layout', () => {
    // 506 270918 000111870763 00200001010000000007 1 00011154 (2018-09-27, física, branch 002, FE #7)
    const clave = buildClave({
      fechaEmision: parseIsoDateTime('2018-09-27T10:00:00-06:00')!,
      identificacion: '111870763',
      consecutivo: '00200001010000000007',
      situacion: '1',
      codigoSeguridad: '00011154',
    });
    expect(clave).toBe('50627091800011187076300200001010000000007100011154');
    expect(clave).toHaveLength(50);
    expect(parseClave(clave)).toMatchObject({ day: 27, month: 9, year2: 18, identificacion: '111870763', consecutivo: '00200001010000000007', situacion: '1' });
  });
  it('pads identifications to 12 (física 9, jurídica 10, DIMEX 11/12)', () => {
    const base = { fechaEmision: new Date('2026-03-15T16:00:00Z'), consecutivo: '00100001010000000001', situacion: '1' as const, codigoSeguridad: '00000000' };
    expect(buildClave({ ...base, identificacion: '114560789' }).slice(9, 21)).toBe('000114560789');
    expect(buildClave({ ...base, identificacion: '3101123456' }).slice(9, 21)).toBe('003101123456');
    expect(buildClave({ ...base, identificacion: '186201234567' }).slice(9, 21)).toBe('186201234567');
  });
  it('draws 8-digit security codes uniformly from injected bytes', () => {
    let i = 0;
    const bytes = [Uint8Array.from([0xff, 0xff, 0xff, 0xff]), Uint8Array.from([0, 0, 0, 42])];
    expect(securityCodeFrom(() => bytes[i++]!)).toBe('00000042'); // the first draw is above the limit and rejected
    const seen = new Set<string>();
    for (let k = 0; k < 200; k++) seen.add(securityCodeFrom((n) => crypto.getRandomValues(new Uint8Array(n))));
    for (const s of seen) expect(s).toMatch(/^\d{8}$/);
    expect(seen.size).toBeGreaterThan(195);
  });
});

describe('dates in Costa Rica time', () => {
  it('treats a date-time without offset as Costa Rica time and writes -06:00', () => {
    expect(toCrDateTime('2026-03-15T10:30:00')).toBe('2026-03-15T10:30:00-06:00');
    expect(toCrDateTime('2026-03-15T16:30:00Z')).toBe('2026-03-15T10:30:00-06:00');
    expect(toCrDateTime('2026-03-16T01:30:00+09:00')).toBe('2026-03-15T10:30:00-06:00');
    expect(toCrDateTime('2026-03-15T10:30:00.999-06:00')).toBe('2026-03-15T10:30:00-06:00');
  });
  it('rejects impossible dates', () => {
    for (const bad of ['2026-02-30T10:00:00', '2026-13-01T00:00:00', '2026-01-01T24:00:00', 'yesterday', '2026-01-01T10:00:00+25:00']) {
      expect(parseIsoDateTime(bad), bad).toBeNull();
    }
  });
  it('formats an instant the same whatever the instant', () => {
    expect(formatCr(new Date(Date.UTC(2026, 0, 1, 5, 59, 59)))).toBe('2025-12-31T23:59:59-06:00');
  });

  const aroundMidnight = [
    '2026-03-15T23:59:59-06:00',
    '2026-03-16T05:59:59Z',
    '2026-03-16T06:00:00Z',
    '2026-03-15T23:30:00',
    '2026-03-16T00:30:00',
    '2026-03-16T00:30:00+09:00',
    '2026-01-01T05:00:00Z',
    '2025-12-31T23:59:59',
  ];
  const expected = [
    ['2026-03-15T23:59:59-06:00', '150326'],
    ['2026-03-15T23:59:59-06:00', '150326'],
    ['2026-03-16T00:00:00-06:00', '160326'],
    ['2026-03-15T23:30:00-06:00', '150326'],
    ['2026-03-16T00:30:00-06:00', '160326'],
    ['2026-03-15T09:30:00-06:00', '150326'],
    ['2025-12-31T23:00:00-06:00', '311225'],
    ['2025-12-31T23:59:59-06:00', '311225'],
  ];
  for (const tz of ['UTC', 'Asia/Tokyo', 'America/Costa_Rica']) {
    it(`gives the same claves and dates around local midnight under TZ=${tz}`, () => {
      const out = JSON.parse(
        execFileSync(process.execPath, ['--import', 'tsx', 'test/helpers/clave-probe.ts', JSON.stringify(aroundMidnight)], {
          env: { ...process.env, TZ: tz },
          encoding: 'utf8',
        }),
      ) as { fecha: string; clave: string; localTz: string }[];
      expect(out[0]!.localTz).toBe(tz === 'UTC' ? 'UTC' : tz);
      out.forEach((r, i) => {
        expect(r.fecha).toBe(expected[i]![0]);
        expect(r.clave.slice(3, 9)).toBe(expected[i]![1]);
        expect(r.clave).toMatch(/^506\d{6}003101123456001000010100000000071\d{8}$/);
      });
    });
  }
});
