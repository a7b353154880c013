// Issue 13, faults 2 and 3.
//  - Fault 2: a finding about a figure derives from the values the other findings call right. A user who applies
//    exactly what the findings say (`must be "13"`, `is 13500 but … is 11700.00000`) gets a clean validation on the
//    next run; a finding that names no right value (a discount above the amount, say) holds back the figures
//    computed from it instead of judging them with the wrong value.
//  - Fault 3: unknown keys are findings at their path with the closest known name (`receptorr: unknown field; did
//    you mean "receptor"?`), at every level of the body and of the issuer record, through `fecr validate`,
//    `fecr send` (local profile) and the client API (400 with details).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentFromRows } from '../src/client/batch/csv.js';
import { parseDocument, parseIssuer } from '../src/core/document.js';
import { RESUMEN_TOTAL_FIELDS } from '../src/core/input/schema.js';
import type { Finding } from '../src/core/model.js';
import { dec, money } from '../src/core/money.js';
import { computeTotals } from '../src/core/totals.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

type Body = Record<string, any>;

const FIXTURE_NAMES = readdirSync(new URL('../fixtures/documents/', import.meta.url))
  .filter((f) => /^\d\d-.*\.json$/.test(f) && !f.endsWith('.expected.json'))
  .map((f) => f.slice(0, -'.json'.length));

/** `detalleServicio[1].impuesto[0].tarifa` → ['detalleServicio', 1, 'impuesto', 0, 'tarifa']. */
function pathKeys(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

function setAt(body: Body, path: string, value: unknown): void {
  const keys = pathKeys(path);
  let target: any = body;
  for (const k of keys.slice(0, -1)) target = target[k];
  target[keys[keys.length - 1]!] = value;
}

function getAt(body: Body, path: string): unknown {
  let v: any = body;
  for (const k of pathKeys(path)) v = v?.[k];
  return v;
}

/** The value a finding says is right (`must be "13" …`, `is 13500 but … is 11700.00000`), or undefined. */
function rightValue(f: Finding): string | undefined {
  const quoted = /^must be "([^"]*)"/.exec(f.message);
  if (quoted) return quoted[1];
  const figure = /^is \S+ but .* is (-?\d+(?:\.\d+)?)$/.exec(f.message);
  return figure?.[1];
}

/** Does what the findings say, mechanically; a finding that names no right value fails the test. */
function applyFindings(body: Body, findings: Finding[]): Body {
  const fixed = structuredClone(body);
  for (const f of findings) {
    const v = rightValue(f);
    expect(v, `"${f.path}: ${f.message}" names no right value`).toBeDefined();
    expect(getAt(fixed, f.path), `${f.path} is not a field of the body`).not.toBeTypeOf('object');
    setAt(fixed, f.path, v);
  }
  return fixed;
}

/** Findings of the body, then of the body with every correction those findings state. */
function validateFixValidate(body: Body): { first: Finding[]; second: Finding[] } {
  const first = parseDocument(body, ISSUER).findings;
  const second = parseDocument(applyFindings(body, first), ISSUER).findings;
  return { first, second };
}

/**
 * The paths of the figures a client sends (line figures, and the resumen totals present in the body). A recibo de
 * pago's line subTotal and montoTotal are its inputs (the amount paid and the base of its IVA), not figures.
 */
function sentFigurePaths(body: Body): string[] {
  const out: string[] = [];
  const rep = String(body.tipoDoc) === '10';
  body.detalleServicio.forEach((l: Body, i: number) => {
    const p = `detalleServicio[${i}]`;
    if (!rep) out.push(`${p}.subTotal`, `${p}.montoTotal`);
    out.push(`${p}.impuestoNeto`, `${p}.montoTotalLinea`);
    l.impuesto.forEach((_: unknown, j: number) => out.push(`${p}.impuesto[${j}].monto`));
  });
  for (const f of RESUMEN_TOTAL_FIELDS) if (body.resumenFactura[f] !== undefined) out.push(`resumenFactura.${f}`);
  return out;
}

/**
 * The body as a client computing every figure from its own `tarifa` sends it: the IVA entry (line, tax) carries
 * `tarifa`, and each figure of the body is fecr's arithmetic with that rate.
 */
function computedWithTarifa(body: Body, line: number, tax: number, tarifa: string): Body {
  const valid = parseDocument(body, ISSUER);
  if (!valid.ok) throw new Error(`not a valid body: ${JSON.stringify(valid.findings)}`);
  const doc = { ...valid.doc, lineas: valid.doc.lineas.map((l) => ({ ...l, impuestos: l.impuestos.map((i) => ({ ...i })) })) };
  doc.lineas[line]!.impuestos[tax]!.tarifa = dec(tarifa);
  const t = computeTotals(doc);
  const out = structuredClone(body);
  out.detalleServicio[line].impuesto[tax].tarifa = tarifa;
  out.detalleServicio.forEach((l: Body, i: number) => {
    const lt = t.lineas[i]!;
    l.subTotal = money(lt.montoTotal);
    l.montoTotal = money(lt.subTotal);
    l.impuestoNeto = money(lt.impuestoNeto);
    l.montoTotalLinea = money(lt.montoTotalLinea);
    l.impuesto.forEach((imp: Body, j: number) => (imp.monto = money(lt.impuestos[j]!.monto)));
  });
  for (const f of RESUMEN_TOTAL_FIELDS) if (out.resumenFactura[f] !== undefined) out.resumenFactura[f] = money(t.resumen[f]);
  return out;
}

const EXONERACION = { tipoDocumento: '04', numeroDocumento: 'AL-00020402-24', nombreInstitucion: '01', fechaEmision: '2024-03-01T00:00:00' };

describe('fault 2: the findings about figures derive from the values the other findings call right', () => {
  it('every fixture is valid as it is', () => {
    for (const name of FIXTURE_NAMES) expect(parseDocument(fixtureBody(name), ISSUER).findings, name).toEqual([]);
  });

  it('tarifa "15" on codigoTarifa "08" with the figures right at 13 %: one finding, the tarifa', () => {
    const body = validInvoice();
    body.detalleServicio[0].impuesto[0].tarifa = '15';
    const { first, second } = validateFixValidate(body);
    expect(first).toEqual([{ path: 'detalleServicio[0].impuesto[0].tarifa', message: 'must be "13" for codigoTarifa 08 (Tarifa general 13%)' }]);
    expect(second).toEqual([]);
  });

  it('tarifa "15" with every figure computed at 15 %: the figures to fix are the ones at 13 %, and fixing them all is clean', () => {
    const body = computedWithTarifa(validInvoice(), 0, 0, '15');
    const { first, second } = validateFixValidate(body);
    const by = Object.fromEntries(first.map((f) => [f.path, f.message]));
    expect(by['detalleServicio[0].impuesto[0].tarifa']).toMatch(/^must be "13"/);
    expect(by['detalleServicio[0].impuesto[0].monto']).toBe('is 13500 but the tax by the ANEXOS formula is 11700.00000');
    expect(by['detalleServicio[0].montoTotalLinea']).toBe('is 103500 but montoTotal + impuestoNeto is 101700.00000');
    expect(by['resumenFactura.totalComprobante']).toBe('is 107739.195 but the computed totalComprobante is 105939.19500');
    expect(second).toEqual([]);
  });

  it('codigoTarifa "11" (0 %, no sujeto) with tarifa "13" and figures at 13 %: fixing what the findings say is clean', () => {
    const body = computedWithTarifa(fixtureBody('04-fe-exento-no-sujeto'), 1, 0, '13');
    const { first, second } = validateFixValidate(body);
    expect(first.map((f) => f.path)).toContain('detalleServicio[1].impuesto[0].tarifa');
    expect(first.find((f) => f.path === 'detalleServicio[1].impuesto[0].monto')?.message).toMatch(/ is 0\.00000$/);
    expect(second).toEqual([]);
  });

  it('an exoneration is judged against the corrected rate: 13 points on a tarifa "4" coded 08 is no finding once the rate is 13', () => {
    const body = fixtureBody('06-fe-exoneracion-autorizacion');
    body.detalleServicio[0].impuesto[0].tarifa = '4';
    const { first, second } = validateFixValidate(body);
    expect(first).toEqual([{ path: 'detalleServicio[0].impuesto[0].tarifa', message: 'must be "13" for codigoTarifa 08 (Tarifa general 13%)' }]);
    expect(second).toEqual([]);
  });

  it('an exoneration above the corrected rate is said at once, naming that rate', () => {
    const body = validInvoice();
    body.detalleServicio[0].impuesto[0].tarifa = '15';
    body.detalleServicio[0].impuesto[0].exoneracion = { ...EXONERACION, porcentajeExoneracion: 14 };
    const paths = Object.fromEntries(parseDocument(body, ISSUER).findings.map((f) => [f.path, f.message]));
    expect(paths['detalleServicio[0].impuesto[0].exoneracion.porcentajeExoneracion']).toMatch(/^must not exceed the tax rate \(13\)/);
  });

  it('a wrong subTotal, montoTotal, monto or line total does not spread: one finding each, and fixing it is clean', () => {
    for (const path of sentFigurePaths(validInvoice())) {
      const body = validInvoice();
      setAt(body, path, money(dec(String(getAt(body, path))).plus(7)));
      const { first, second } = validateFixValidate(body);
      expect(first.map((f) => f.path), path).toEqual([path]);
      expect(second, path).toEqual([]);
    }
  });

  it('property: wrong rates (figures right, or computed from the wrong rate) and wrong figures, in any fixture: applying the findings is clean', () => {
    const bodies = [validInvoice(), ...FIXTURE_NAMES.map(fixtureBody)];
    const RATES = ['0', '0.5', '1', '2', '4', '8', '13', '15'];
    const arb = fc
      .record({
        which: fc.nat(bodies.length - 1),
        rate: fc.option(fc.record({ line: fc.nat(), rate: fc.constantFrom(...RATES), recompute: fc.boolean() }), { nil: undefined }),
        figures: fc.array(fc.record({ at: fc.nat(), delta: fc.integer({ min: -500, max: 5000 }).filter((d) => d !== 0) }), { maxLength: 4 }),
      })
      .filter(({ rate, figures }) => rate !== undefined || figures.length > 0);
    fc.assert(
      fc.property(arb, ({ which, rate, figures }) => {
        let body = structuredClone(bodies[which]!);
        if (rate) {
          const i = rate.line % body.detalleServicio.length;
          const tax = body.detalleServicio[i].impuesto[0];
          if (tax.codigo === '01' && dec(tax.tarifa).toFixed() !== rate.rate) {
            if (rate.recompute) body = computedWithTarifa(body, i, 0, rate.rate);
            else tax.tarifa = rate.rate;
          }
        }
        const paths = sentFigurePaths(body);
        for (const { at, delta } of figures) {
          const path = paths[at % paths.length]!;
          const v = dec(String(getAt(body, path))).plus(delta);
          if (v.gte(0)) setAt(body, path, money(v));
        }
        const { second } = validateFixValidate(body);
        expect(second).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('a batch CSV row with tarifa "15" on codigoTarifa "08": the figures fecr computes for it use 13 %, one finding', () => {
    const cells = {
      emisor: '3101123456', numeroReferencia: '201', tipoDoc: '1', fechaEmision: '2026-03-02T09:15:00-06:00', codigoActividad: '6201.0',
      receptorNombre: 'DISTRIBUIDORA EL CAFETAL', receptorTipo: '02', receptorNumero: '3101987654', moneda: 'CRC', medioPago: '04',
      codigo: '8311200000000', detalle: 'Consultoría', cantidad: '2', unidadMedida: 'h', precioUnitario: '50000', descuento: '10000',
      impuestoCodigo: '01', codigoTarifa: '08', tarifa: '15',
    };
    const built = documentFromRows([{ line: 2, cells }]);
    if (!('body' in built)) throw new Error(JSON.stringify(built.errors));
    expect(parseDocument(built.body, ISSUER).findings).toEqual([
      { path: 'detalleServicio[0].impuesto[0].tarifa', message: 'must be "13" for codigoTarifa 08 (Tarifa general 13%)' },
    ]);
  });

  describe('a finding that names no right value holds back the figures computed from it', () => {
    const cases: [string, (b: Body) => void, string][] = [
      ['a discount above the amount', (b) => (b.detalleServicio[0].descuento = '100000.01'), 'detalleServicio[0].descuento'],
      ['a zero unit price', (b) => (b.detalleServicio[1].precioUnitario = '0'), 'detalleServicio[1].precioUnitario'],
      ['an exoneration above the rate', (b) => (b.detalleServicio[0].impuesto[0].exoneracion = { ...EXONERACION, porcentajeExoneracion: 14 }), 'detalleServicio[0].impuesto[0].exoneracion.porcentajeExoneracion'],
      ['an exoneration with 3 decimals', (b) => (b.detalleServicio[1].impuesto[0].exoneracion = { ...EXONERACION, porcentajeExoneracion: 6.125 }), 'detalleServicio[1].impuesto[0].exoneracion.porcentajeExoneracion'],
      ['bienes usados without factorCalculoIVA', (b) => (b.detalleServicio[1].impuesto[0] = { codigo: '08', tarifa: '13', monto: '487.695' }), 'detalleServicio[1].impuesto[0].factorCalculoIVA'],
      ['an unknown código de tarifa', (b) => (b.detalleServicio[1].impuesto[0].codigoTarifa = '42'), 'detalleServicio[1].impuesto[0].codigoTarifa'],
      ['an unknown tax code', (b) => (b.detalleServicio[1].impuesto[0].codigo = '55'), 'detalleServicio[1].impuesto[0].codigo'],
      ['an unknown discount code', (b) => (b.detalleServicio[0].codigoDescuento = '42'), 'detalleServicio[0].codigoDescuento'],
    ];
    for (const [name, mutate, path] of cases) {
      it(`${name}: the one finding is at ${path}, and it says the figures wait for it`, () => {
        const body = validInvoice();
        mutate(body);
        const { findings } = parseDocument(body, ISSUER);
        expect(findings.map((f) => f.path)).toEqual([path]);
      });
    }
    it('the finding says that the figures computed from it are checked once it is fixed', () => {
      const body = validInvoice();
      body.detalleServicio[0].descuento = '100000.01';
      expect(parseDocument(body, ISSUER).findings).toEqual([
        { path: 'detalleServicio[0].descuento', message: 'must not exceed cantidad × precioUnitario; the figures computed from it are checked once it is fixed' },
      ]);
    });
    it('other charges of zero: the totals that include them wait, the line figures are still checked', () => {
      const body = validInvoice();
      body.otrosCargos = [{ tipoDocumento: '06', detalle: 'Servicio', montoCargo: '0', porcentaje: '10' }];
      body.resumenFactura.totalOtrosCargos = '9000.00';
      body.detalleServicio[1].montoTotalLinea = 1;
      expect(parseDocument(body, ISSUER).findings.map((f) => f.path).sort()).toEqual(['detalleServicio[1].montoTotalLinea', 'otrosCargos[0].montoCargo']);
    });
  });
});

describe('fault 3: unknown keys are findings with the closest known name', () => {
  const cases: [string, (b: Body) => void, Finding][] = [
    ['root', (b) => ((b.receptorr = b.receptor), delete b.receptor), { path: 'receptorr', message: 'unknown field; did you mean "receptor"?' }],
    ['receptor', (b) => (b.receptor.nombree = 'X'), { path: 'receptor.nombree', message: 'unknown field; did you mean "nombre"?' }],
    ['receptor.identificacion', (b) => (b.receptor.identificacion.tipoo = '02'), { path: 'receptor.identificacion.tipoo', message: 'unknown field; did you mean "tipo"?' }],
    ['receptor.ubicacion', (b) => (b.receptor.ubicacion = { provincia: '1', canton: '01', distrito: '01', direccion: 'Avenida 2', distritoo: '02' }), { path: 'receptor.ubicacion.distritoo', message: 'unknown field; did you mean "distrito"?' }],
    ['a line', (b) => (b.detalleServicio[1].descuentoo = '5.00'), { path: 'detalleServicio[1].descuentoo', message: 'unknown field; did you mean "descuento"?' }],
    ['a line, by a prefix', (b) => (b.detalleServicio[1].precio = '5.00'), { path: 'detalleServicio[1].precio', message: 'unknown field; did you mean "precioUnitario"?' }],
    ['codigoComercial', (b) => (b.detalleServicio[0].codigoComercial = [{ tipo: '01', codigo: 'A1', codgo: 'A1' }]), { path: 'detalleServicio[0].codigoComercial[0].codgo', message: 'unknown field; did you mean "codigo"?' }],
    ['a tax', (b) => (b.detalleServicio[0].impuesto[0].tarfa = '13'), { path: 'detalleServicio[0].impuesto[0].tarfa', message: 'unknown field; did you mean "tarifa"?' }],
    ['an exoneracion', (b) => (b.detalleServicio[0].impuesto[0].exoneracion = { ...EXONERACION, porcentajeExoneracion: 13, porcentajeExonerado: 13 }), { path: 'detalleServicio[0].impuesto[0].exoneracion.porcentajeExonerado', message: 'unknown field; did you mean "porcentajeExoneracion"?' }],
    ['resumenFactura', (b) => (b.resumenFactura.totalVentaa = '1.00'), { path: 'resumenFactura.totalVentaa', message: 'unknown field; did you mean "totalVenta"?' }],
    ['codigoTipoMoneda, by case', (b) => (b.resumenFactura.codigoTipoMoneda.tipocambio = '1'), { path: 'resumenFactura.codigoTipoMoneda.tipocambio', message: 'unknown field; did you mean "tipoCambio"?' }],
    ['mediosPago', (b) => (b.resumenFactura.mediosPago[0].totalMedioPag = '1'), { path: 'resumenFactura.mediosPago[0].totalMedioPag', message: 'unknown field; did you mean "totalMedioPago"?' }],
    ['otrosCargos', (b) => (b.otrosCargos = [{ tipoDocumento: '06', detalle: 'Servicio', montoCargo: '1.00', montocargo: '1.00' }]), { path: 'otrosCargos[0].montocargo', message: 'unknown field; did you mean "montoCargo"?' }],
    ['informacionReferencia', (b) => (b.informacionReferencia = [{ tipoDocIR: '01', numero: '5'.repeat(50), fechaEmision: '2026-03-01T10:00:00', codigo: '01', razón: 'Anula' }]), { path: 'informacionReferencia[0].razón', message: 'unknown field; did you mean "razon"?' }],
    ['nothing close', (b) => (b.comentario = 'hola'), { path: 'comentario', message: 'unknown field' }],
  ];
  for (const [where, mutate, finding] of cases) {
    it(`in ${where}: ${finding.path}`, () => {
      const body = validInvoice();
      mutate(body);
      const r = parseDocument(body, ISSUER);
      expect(r.ok).toBe(false);
      expect(r.findings).toContainEqual(finding);
    });
  }

  it('one finding per unknown key', () => {
    const body = validInvoice();
    Object.assign(body.detalleServicio[0], { cantidadd: 1, detallee: 'x' });
    const paths = parseDocument(body, ISSUER).findings.map((f) => f.path);
    expect(paths.sort()).toEqual(['detalleServicio[0].cantidadd', 'detalleServicio[0].detallee']);
  });

  it('an unknown key does not hide the other findings', () => {
    const body = validInvoice();
    body.detalleServicio[1].descuentoo = '5.00';
    body.detalleServicio[0].impuesto[0].tarifa = '15';
    const paths = parseDocument(body, ISSUER).findings.map((f) => f.path);
    expect(paths.sort()).toEqual(['detalleServicio[0].impuesto[0].tarifa', 'detalleServicio[1].descuentoo']);
  });

  it('in the issuer record, at its path', () => {
    const r = parseIssuer({ ...ISSUER, correo: 'a@b.cr', ubicacion: { ...ISSUER.ubicacion, provinica: '1' } });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.findings).toEqual(
        expect.arrayContaining([
          { path: 'correo', message: 'unknown field; did you mean "correoElectronico"?' },
          { path: 'ubicacion.provinica', message: 'unknown field; did you mean "provincia"?' },
        ]),
      );
  });
});

describe('fault 3 through the CLI and the API', () => {
  const root = tempDir('fecr-advice-');
  const registered = makeTestIssuer();
  const AUTH_URL = 'http://auth.fecr.test';
  let service: TestContext;
  let app: ReturnType<typeof buildApiApp>;
  let token: string;

  beforeAll(async () => {
    service = await makeServiceContext();
    await ensureSigningKey(service.ctx);
    await createAccount(service.ctx, { base: 'acme', password: 'contrasena-acme-123' });
    token = (await issueToken(service.ctx, { base: 'acme' }, { issuer: AUTH_URL })).token;
    app = buildApiApp(service.ctx, { authenticate: createTokenVerifier(service.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    await service?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const misspelt = (): Body => {
    const body = fixtureBody('01-fe-servicios-13');
    body.receptorr = body.receptor;
    delete body.receptor;
    return body;
  };

  it('fecr validate: the finding on stdout, exit 1', async () => {
    const work = join(root, 'validate');
    mkdirSync(work, { recursive: true });
    const body = fixtureBody('01-fe-servicios-13');
    body.detalleServicio[0].descuentoo = '1.00';
    const r = await runCli(['validate', '-', '--no-xsd'], { cwd: work, env: { HOME: work }, stdin: JSON.stringify(body) });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('detalleServicio[0].descuentoo: unknown field; did you mean "descuento"?\n');
    expect(r.stderr).toBe('error: invalid document: 1 finding\n');
    const m = await runCli(['validate', '-', '--no-xsd'], { cwd: work, env: { HOME: work }, stdin: JSON.stringify(misspelt()) });
    expect(m.code).toBe(1);
    expect(m.stdout).toContain('receptorr: unknown field; did you mean "receptor"?\n');
  });

  it('fecr validate --issuer: an unknown key of the issuer record', async () => {
    const work = join(root, 'validate-issuer');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'issuer.json'), JSON.stringify({ ...ISSUER, telefonoo: '22223333' }));
    const r = await runCli(['validate', '-', '--no-xsd', '--issuer', 'issuer.json'], { cwd: work, env: { HOME: work }, stdin: JSON.stringify(fixtureBody('01-fe-servicios-13')) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: issuer.json: invalid issuer record: 1 finding\n  telefonoo: unknown field; did you mean "telefono"?\n');
  });

  it('fecr send in a local profile: the finding, exit 1, nothing stored', async () => {
    const dir = join(root, 'local');
    const work = join(dir, 'work');
    mkdirSync(work, { recursive: true });
    const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1', FECR_MASTER_KEY: randomBytes(32).toString('base64') };
    writeFileSync(join(work, 'issuer.json'), JSON.stringify(registered.issuer));
    const reg = await runCli(['emisor', 'register', 'issuer.json'], { cwd: work, env });
    expect(reg.code, reg.stderr).toBe(0);
    const body = fixtureBody('01-fe-servicios-13');
    body.resumenFactura.mediosPago[0].tipoMedioPagoo = '04';
    const r = await runCli(['send', '-'], { cwd: work, env, stdin: JSON.stringify(body) });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: invalid document: 1 finding\n  resumenFactura.mediosPago[0].tipoMedioPagoo: unknown field; did you mean "tipoMedioPago"?\n');
    writeFileSync(join(work, 'issuer2.json'), JSON.stringify({ ...registered.issuer, nombreComerical: 'X' }));
    const upd = await runCli(['emisor', 'update', 'issuer2.json'], { cwd: work, env });
    expect(upd.code).toBe(1);
    expect(upd.stderr).toBe('error: invalid issuer record: 1 finding\n  nombreComerical: unknown field; did you mean "nombreComercial"?\n');
  });

  const post = async (url: string, payload: unknown) => {
    const res = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    return { status: res.statusCode, body: res.json() as any };
  };

  it('the API: an unknown key of the document body or of the issuer record is a 400 with details', async () => {
    const reg = await post('/api/enviar/emisor', { ...registered.issuer, ambiente: 2, sucursall: 1 });
    expect(reg.status).toBe(400);
    expect(reg.body).toMatchObject({ error: 'bad_request', message: 'Campos requeridos faltantes' });
    expect(reg.body.details).toEqual([{ path: 'sucursall', message: 'unknown field; did you mean "sucursal"?' }]);
    expect((await post('/api/enviar/emisor', registered.issuer)).status).toBe(200);

    const r = await post('/api/enviar/items', misspelt());
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual(expect.arrayContaining([{ path: 'receptorr', message: 'unknown field; did you mean "receptor"?' }]));
    const body = fixtureBody('01-fe-servicios-13');
    body.detalleServicio[1].impuesto[0].exoneracion = { ...EXONERACION, porcentajeExoneracion: 13, articulo: 1, incisoo: 2 };
    const r2 = await post('/api/enviar/items', body);
    expect(r2.status).toBe(400);
    expect(r2.body.details).toContainEqual({ path: 'detalleServicio[1].impuesto[0].exoneracion.incisoo', message: 'unknown field; did you mean "inciso"?' });
  });

  it('the API: unknown keys of the small request bodies are 400 findings too', async () => {
    const r = await post('/api/consultar/archivo', { claveHacienda: '5'.repeat(50), filetype: 'PDF' });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([{ path: 'filetype', message: 'unknown field; did you mean "fileType"?' }]);
  });
});
