/**
 * Every fixture body in fixtures/documents goes through the real input path (parseIssuer +
 * parseDocument) and its totals are compared, field by field, with the hand-worked
 * NN-name.expected.json beside it. The client figures inside each body are checked too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDocument, parseIssuer } from '../src/core/document.js';
import { dec, money } from '../src/core/money.js';
import { computeTotals, totalsToStrings } from '../src/core/totals.js';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'documents');

/** SOFTWARE TICO SOCIEDAD ANONIMA, the issuer of every fixture (shared/fixtures/hacienda-registry.json). */
const ISSUER = {
  identificacion: '3101123456',
  tipoIdentificacion: 2,
  codigoActividad: '6201.0',
  sucursal: 1,
  nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA',
  nombreComercial: 'SOFTWARE TICO',
  telefono: '22223333',
  correoElectronico: 'facturacion@softwaretico.example.cr',
  ubicacion: { provincia: '1', canton: '01', distrito: '08', barrio: 'Sabana Norte', direccion: 'Edificio Torre Sabana, piso 4' },
  ambiente: 2,
  usuarioHacienda: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr',
  claveHacienda: 'c2VjcmV0bw==',
  pinCertificado: '1234',
  certificadoHacienda: 'MIIKZQIBAzCCCh8GCSqGSIb3DQEHAaCCChAEggoMMIIKCDCCBL8GCSqGSIb3DQEHBqCCBLAwggSsAgEAMIIEpQYJKoZIhvcNAQcB',
};

interface ExpectedLinea {
  montoTotal: string;
  subTotal: string;
  baseImponible?: string;
  impuestos: Array<{ monto: string; montoExoneracion?: string }>;
  impuestoNeto: string;
  montoTotalLinea: string;
}
interface Expected {
  _work: string[];
  lineas: ExpectedLinea[];
  resumen: Record<string, unknown>;
}

const names = fs
  .readdirSync(DIR)
  .filter((f) => /^\d\d-.+\.json$/.test(f) && !f.endsWith('.expected.json'))
  .sort();

describe('document fixtures: computed totals = hand-worked expected figures', () => {
  it('there are at least 12 fixtures, each with its expected file', () => {
    expect(names.length).toBeGreaterThanOrEqual(12);
    for (const n of names) expect(fs.existsSync(path.join(DIR, n.replace(/\.json$/, '.expected.json')))).toBe(true);
  });

  const issuer = parseIssuer(ISSUER);
  it('the fixture issuer record is valid', () => {
    expect(issuer.ok ? [] : issuer.findings).toEqual([]);
  });

  for (const name of names) {
    it(name, () => {
      const body = JSON.parse(fs.readFileSync(path.join(DIR, name), 'utf8'));
      const exp: Expected = JSON.parse(fs.readFileSync(path.join(DIR, name.replace(/\.json$/, '.expected.json')), 'utf8'));
      expect(Array.isArray(exp._work) && exp._work.length).toBeGreaterThan(3);
      if (!issuer.ok) throw new Error('invalid issuer');

      const r = parseDocument(body, issuer.issuer, { securityCode: '12345678' });
      expect(r.findings).toEqual([]);
      if (!r.ok) throw new Error('not parsed');

      const got = totalsToStrings(computeTotals(r.doc));

      // Line figures, field by field.
      expect(got.lineas).toHaveLength(exp.lineas.length);
      exp.lineas.forEach((el, i) => {
        const gl = got.lineas[i]!;
        for (const k of ['montoTotal', 'subTotal', 'baseImponible', 'impuestoNeto', 'montoTotalLinea'] as const) {
          if (el[k] !== undefined) expect({ line: i + 1, [k]: gl[k] }).toEqual({ line: i + 1, [k]: el[k] });
        }
        expect({ line: i + 1, impuestos: gl.impuestos }).toEqual({ line: i + 1, impuestos: el.impuestos });
      });

      // Summary figures, field by field (every ResumenTotals field is in the expected file).
      const gr = got.resumen;
      expect(Object.keys(exp.resumen).sort()).toEqual(Object.keys(gr).sort());
      for (const [k, v] of Object.entries(exp.resumen)) expect({ [k]: gr[k] }).toEqual({ [k]: v });

      // The client figures in the body are the hand-worked ones (spec names: subTotal = XML MontoTotal,
      // montoTotal = XML SubTotal).
      body.detalleServicio.forEach((l: Record<string, any>, i: number) => {
        const el = exp.lineas[i]!;
        expect(money(dec(l.subTotal))).toBe(el.montoTotal);
        expect(money(dec(l.montoTotal))).toBe(el.subTotal);
        expect(money(dec(l.impuestoNeto))).toBe(el.impuestoNeto);
        expect(money(dec(l.montoTotalLinea))).toBe(el.montoTotalLinea);
        l.impuesto.forEach((t: Record<string, any>, j: number) => expect(money(dec(t.monto))).toBe(el.impuestos[j]!.monto));
      });
      for (const [k, v] of Object.entries(body.resumenFactura)) {
        if (k.startsWith('total')) expect({ [k]: money(dec(v as string)) }).toEqual({ [k]: exp.resumen[k] });
      }
    });
  }
});
