// Hacienda's location codification (fixtures/ubicacion/SOURCES.md): 7 provincias, 84 cantones, 492 distritos, the
// cantones created since 2017 and Hacienda's own numbering where it differs from the DTA; the generated module is
// what scripts/ubicacion.mjs makes of the CSV.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cantonesOf, distritosOf, provincias, ubicacionNames } from '../src/core/catalog/ubicacion.js';

describe('location codification', () => {
  it('has 7 provincias, 84 cantones and 492 distritos', () => {
    expect(provincias().map((p) => p.name)).toEqual(['San José', 'Alajuela', 'Cartago', 'Heredia', 'Guanacaste', 'Puntarenas', 'Limón']);
    const cantones = provincias().flatMap((p) => cantonesOf(p.code).map((c) => [p.code, c.code] as const));
    expect(cantones).toHaveLength(84);
    expect(cantones.flatMap(([p, c]) => distritosOf(p, c))).toHaveLength(492);
  });

  it('names Río Cuarto 2-16, Monteverde 6-12, Puerto Jiménez 6-13 and Hacienda\'s Grecia numbering', () => {
    expect(ubicacionNames('2', '16', '01')).toEqual({ provincia: 'Alajuela', canton: 'Río Cuarto', distrito: 'Río Cuarto' });
    expect(ubicacionNames('6', '12', '01')).toEqual({ provincia: 'Puntarenas', canton: 'Monteverde', distrito: 'Monteverde' });
    expect(ubicacionNames('6', '13', '01')).toEqual({ provincia: 'Puntarenas', canton: 'Puerto Jiménez', distrito: 'Puerto Jiménez' });
    expect(distritosOf('2', '03').map((d) => `${d.code} ${d.name}`)).toEqual(['01 Grecia', '02 San Isidro', '03 San José', '04 San Roque', '05 Tacares', '06 Puente de Piedra', '07 Bolívar']);
    expect(ubicacionNames('1', '01', '08')).toEqual({ provincia: 'San José', canton: 'San José', distrito: 'Mata Redonda' });
    // Codes it does not have: no name (shown as the code), never a wrong one.
    expect(ubicacionNames('6', '01', '09')).toEqual({ provincia: 'Puntarenas', canton: 'Puntarenas' });
    expect(ubicacionNames('8', '01', '01')).toEqual({});
    expect(ubicacionNames('1', '__proto__', '01')).toEqual({ provincia: 'San José' });
  });

  it('ubicacion-data.ts is what scripts/ubicacion.mjs generates from the CSV', () => {
    {
      const before = readFileSync(new URL('../src/core/catalog/ubicacion-data.ts', import.meta.url), 'utf8');
      const p = spawnSync(process.execPath, [new URL('../scripts/ubicacion.mjs', import.meta.url).pathname], { encoding: 'utf8' });
      expect(p.status, p.stderr).toBe(0);
      expect(p.stdout.trim()).toBe('7 provincias, 84 cantones, 492 distritos');
      expect(readFileSync(new URL('../src/core/catalog/ubicacion-data.ts', import.meta.url), 'utf8')).toBe(before);
    }
  });
});
