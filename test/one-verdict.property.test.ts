// Issue 24, one verdict: for bodies mutated field by field (activity and CABYS codes, dates, rates, payment terms,
// totals), `fecr validate` (valid / findings) agrees with what the emulator decides for the same body sent as `fecr
// send` sends it (aceptado / rechazado, or refused by fecr's own checks before sending). Warnings on either side
// leave the verdict positive. The figures of a mutated body are settled to the computed ones (as a client that
// computes them would send them), except in the totals mutation, which breaks one on purpose.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { crDay, crIso, verdictBench, type VerdictBench } from './helpers/verdicts.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/documents/${name}.json`, import.meta.url), 'utf8')) as Record<string, any>;
const BASES = ['01-fe-servicios-13', '02-fe-bienes-servicios-descuentos', '03-fe-tarifas-reducidas', '04-fe-exento-no-sujeto', '10-te-sin-receptor', '16-nd-bienes-servicios'];

/** Sets a body path such as `detalleServicio[0].impuesto[1].monto`. */
function setPath(body: Record<string, any>, path: string, value: unknown): void {
  const keys = path.split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== '');
  let t: any = body;
  for (const k of keys.slice(0, -1)) t = t[k];
  t[keys[keys.length - 1]!] = value;
}

/** Writes the computed figures over the body's, as the findings name them (`is X but … is Y`), until none is left. */
function settleFigures(body: Record<string, any>, issuer: Parameters<typeof parseDocument>[1]): void {
  for (let round = 0; round < 4; round++) {
    const r = parseDocument(body, issuer);
    if (r.ok) return;
    let changed = false;
    for (const f of r.findings) {
      const m = /^is \S+ but .* is (-?\d+(?:\.\d+)?)$/.exec(f.message);
      if (m && !f.path.endsWith('mediosPago')) {
        setPath(body, f.path, m[1]);
        changed = true;
      }
    }
    if (!changed) return;
  }
}

type Mutation = { name: string; apply: (b: Record<string, any>) => void; settle: boolean };

const today = (h: number, d = 0) => crIso(crDay(h, d));
const mutations = fc.oneof(
  fc.constantFrom('6201.0', '620100', '512102', '4620.0', '9999.9', '462000', '046200', '007410', '722003', 'ABC123', '6201', 6201, '6201.00').map<Mutation>((c) => ({
    name: `codigoActividad=${JSON.stringify(c)}`,
    apply: (b) => (b.codigoActividad = c),
    settle: true,
  })),
  fc.constantFrom('8311200000000', '4522003990000', '7331200000000', '1234567890123', '0000000000000').map<Mutation>((c) => ({
    name: `detalleServicio[0].codigo=${c}`,
    apply: (b) => (b.detalleServicio[0].codigo = c),
    settle: true,
  })),
  fc.constantFrom(today(10, -1), today(5), today(6, 0).replace('06:00:00', '06:05:00'), today(12), today(1, 1), today(10, 3)).map<Mutation>((f) => ({
    name: `fechaEmision=${f}`,
    apply: (b) => (b.fechaEmision = f),
    settle: true,
  })),
  fc
    .constantFrom(['08', '13'], ['08', '4'], ['01', '0'], ['10', '0'], ['10', '13'], ['02', '1'], ['03', '2'], ['04', '4'], ['11', '0'], ['07', '13'], ['05', '0'])
    .map<Mutation>(([codigoTarifa, tarifa]) => ({
      name: `detalleServicio[0].impuesto[0]=${codigoTarifa}/${tarifa}`,
      apply: (b) => {
        const tax = b.detalleServicio[0].impuesto?.[0];
        if (tax) Object.assign(tax, { codigoTarifa, tarifa });
      },
      settle: true,
    })),
  fc.constantFrom<[string, string]>(['totalComprobante', '0.00001'], ['totalComprobante', '1'], ['totalImpuesto', '0.01'], ['totalDescuentos', '-0.5'], ['totalVenta', '100']).map<Mutation>(([field, delta]) => ({
    name: `resumenFactura.${field}+${delta}`,
    apply: (b) => (b.resumenFactura[field] = (Number(b.resumenFactura[field] ?? 0) + Number(delta)).toFixed(5)),
    settle: false,
  })),
  fc.constantFrom<[string, Record<string, unknown>]>(
    ['02 without plazoCredito', { condicionVenta: '02' }],
    ['02 with plazoCredito', { condicionVenta: '02', plazoCredito: 30 }],
  ).map<Mutation>(([name, set]) => ({ name: `condicionVenta ${name}`, apply: (b) => Object.assign(b, set), settle: true })),
  fc.constantFrom<[string, Record<string, unknown>]>(['99 without medioPagoOtros', { tipoMedioPago: '99' }], ['99 with medioPagoOtros', { tipoMedioPago: '99', medioPagoOtros: 'Permuta de bienes' }]).map<Mutation>(
    ([name, set]) => ({ name: `mediosPago[0] ${name}`, apply: (b) => (b.resumenFactura.mediosPago = [set]), settle: true }),
  ),
);

describe('one verdict: fecr validate agrees with the emulator on mutated bodies', () => {
  let b: VerdictBench;
  beforeAll(async () => {
    b = await verdictBench();
  });
  afterAll(async () => b.close());

  it('for every mutation of every base fixture, valid ⇔ aceptado', async () => {
    let n = 0;
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...BASES), fc.array(mutations, { minLength: 1, maxLength: 2 }), async (base, muts) => {
        const body = fixture(base);
        body.numeroReferencia = 900_000 + n++;
        body.fechaEmision = today(5);
        for (const m of muts) {
          m.apply(body);
          if (m.settle) settleFigures(body, b.issuer.issuer);
        }
        const v = await b.validate(body);
        const e = await b.send(body);
        const positive = e.estado === 'aceptado';
        const label = `${base} ${muts.map((m) => m.name).join(' + ')}`;
        const outcome = `${v.valid ? 'valid' : 'invalid'}/${e.estado}`;
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
        const why = JSON.stringify({ validate: v.findings, emulator: e.findings ?? e.status?.mensaje?.errores });
        expect(v.valid, `${label}: validate ${v.valid ? 'valid' : 'invalid'}, emulator ${e.estado}: ${why}`).toBe(positive);
      }),
      { numRuns: Number(process.env.FECR_PROPERTY_RUNS ?? 120), seed: process.env.FECR_PROPERTY_SEED ? Number(process.env.FECR_PROPERTY_SEED) : undefined },
    );
    // The property met both outcomes, and documents the emulator itself judged (not only ones fecr refused).
    expect(seen.get('valid/aceptado') ?? 0).toBeGreaterThan(5);
    expect(seen.get('invalid/rechazado') ?? 0).toBeGreaterThan(3);
    expect(seen.get('invalid/refused') ?? 0).toBeGreaterThan(3);
  }, 300_000);
});
