// Issue 36 item 2, as a user runs it (the built bin/fecr.js, its own HOME, local profile with the embedded emulator):
// two issuers registered, a sale and supplier invoices (answered, accepted) for each in one month. `fecr report iva
// MES` and `fecr recibidos resumen MES` without --issuer print one section per issuer, each a heading naming the
// cédula and name and then exactly what `--issuer X` prints; `--json` is an array of the `--issuer X --json`
// objects; `--csv` one table with `emisor` first. No figure is a sum across the two cédulas.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { fixtureBody } from './helpers/api-context.js';
import { tempDir } from './helpers/cli.js';
import { runBin, type BinRun } from './helpers/bin.js';
import { makeTestIssuer } from './helpers/issuer.js';

const home = tempDir('fecr-per-issuer-');
const work = join(home, 'work');
const env = { HOME: home, FECR_NO_KEYCHAIN: '1', NO_COLOR: '1' };
const a = makeTestIssuer().issuer;
// Not 3101987654: the emulator's default supplier.
const B = '3101765432';
const b = { ...a, identificacion: B, nombre: 'OTRA EMPRESA SOCIEDAD ANONIMA', certificadoHacienda: createTestP12({ id: B, type: '02', pin: '4321', name: 'OTRA EMPRESA SOCIEDAD ANONIMA' }).toString('base64'), pinCertificado: '4321' };
const mes = formatCr(new Date()).slice(0, 7);

function fecr(args: string[]): Promise<BinRun> {
  return runBin(args, { cwd: work, env });
}

async function ok(args: string[]): Promise<string> {
  const r = await fecr(args);
  expect(r.code, `fecr ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  for (const [name, issuer] of [['a.json', a], ['b.json', b]] as const) {
    writeFileSync(join(work, name), JSON.stringify(issuer));
    await ok(['emisor', 'register', name]);
  }
  // A sale of each (other fixtures, other figures), dated now: the month of the supplier invoices.
  for (const [file, fixture, emisor] of [['venta-a.json', '01-fe-servicios-13', a.identificacion], ['venta-b.json', '03-fe-tarifas-reducidas', B]] as const) {
    writeFileSync(join(work, file), JSON.stringify({ ...fixtureBody(fixture), emisor, numeroReferencia: undefined, fechaEmision: formatCr(new Date()) }));
    const sent = JSON.parse(await ok(['send', file, '--wait', '--json'])) as { estado: string };
    expect(sent.estado).toBe('aceptado');
  }
  // Supplier invoices to each, imported and accepted (Hacienda accepts each MensajeReceptor).
  for (const [to, count, dir] of [[a.identificacion, '2', 'compras-a'], [B, '1', 'compras-b']] as const) {
    const issued = JSON.parse(await ok(['hacienda', 'suppliers', 'issue', '--to', to, '--count', count, '--out', dir, '--json'])) as { clave: string }[];
    await ok(['recibidos', 'import', dir]);
    for (const d of issued) expect((JSON.parse(await ok(['recibidos', 'aceptar', d.clave, '--json'])) as { respuestaEstado: string }).respuestaEstado).toBe('aceptado');
  }
}, 180_000);

afterAll(() => rmSync(home, { recursive: true, force: true }));

const heading = (i: { identificacion: string; nombre?: string }) => `emisor ${i.identificacion} ${i.nombre}`;

describe('two issuers, one month: one section per issuer, never a sum', () => {
  it('fecr report iva: --json an array of the --issuer objects; the table two sections, each what --issuer prints', async () => {
    const each = JSON.parse(await ok(['report', 'iva', mes, '--json'])) as { emisor: { identificacion: string; nombre: string }; ventas: { ivaDebito: string; documentos: number }; compras: { documentos: number }; diferencia: { saldo: string } }[];
    const ra = JSON.parse(await ok(['report', 'iva', mes, '--issuer', a.identificacion, '--json']));
    const rb = JSON.parse(await ok(['report', 'iva', mes, '--issuer', B, '--json']));
    expect(each).toEqual([ra, rb]);
    expect(each.map((r) => r.emisor)).toEqual([{ identificacion: a.identificacion, nombre: a.nombre }, { identificacion: B, nombre: b.nombre }]);
    expect(each.map((r) => [r.ventas.documentos, r.compras.documentos])).toEqual([[1, 2], [1, 1]]);
    // Each its own figure: neither is the sum of both.
    const debitos = each.map((r) => new Decimal(r.ventas.ivaDebito));
    expect(debitos.every((d) => d.gt(0))).toBe(true);
    expect(debitos[0]!.eq(debitos[1]!)).toBe(false);

    const table = await ok(['report', 'iva', mes]);
    const ta = await ok(['report', 'iva', mes, '--issuer', a.identificacion]);
    const tb = await ok(['report', 'iva', mes, '--issuer', B]);
    expect(table).toBe(`${heading(a)}\n${ta}\n${heading(b)}\n${tb}`);
    const saldo = (t: string) => /= (-?[\d.]+)$/m.exec(t)![1];
    expect(saldo(ta)).toBe(new Decimal(ra.diferencia.saldo).toFixed(2, Decimal.ROUND_HALF_UP));
    expect(table).not.toContain(`= ${debitos[0]!.plus(debitos[1]!).toFixed(2)}`);

    // CSV: one table, the cédula its first column; each issuer's rows are its --issuer rows.
    const csv = (await ok(['report', 'iva', mes, '--csv'])).trimEnd().split('\r\n');
    expect(csv[0]).toBe('emisor,seccion,concepto,codigoTarifaIVA,tarifa,base,impuesto,documentos');
    const own = (id: string) => async () => (await ok(['report', 'iva', mes, '--issuer', id, '--csv'])).trimEnd().split('\r\n').slice(1).map((l) => `${id},${l}`);
    expect(csv.slice(1)).toEqual([...(await own(a.identificacion)()), ...(await own(B)())]);
  }, 120_000);

  it('fecr recibidos resumen: the same, per buyer; --issuer of an unknown issuer is one error line', async () => {
    const each = JSON.parse(await ok(['recibidos', 'resumen', mes, '--json'])) as { emisor: { identificacion: string }; documentos: number; totales: { ivaAcreditable: string } }[];
    const sa = JSON.parse(await ok(['recibidos', 'resumen', mes, '--issuer', a.identificacion, '--json']));
    const sb = JSON.parse(await ok(['recibidos', 'resumen', mes, '--issuer', B, '--json']));
    expect(each).toEqual([sa, sb]);
    expect(each.map((s) => [s.emisor.identificacion, s.documentos])).toEqual([[a.identificacion, 2], [B, 1]]);
    const table = await ok(['recibidos', 'resumen', mes]);
    const ta = await ok(['recibidos', 'resumen', mes, '--issuer', a.identificacion]);
    const tb = await ok(['recibidos', 'resumen', mes, '--issuer', B]);
    expect(table).toBe(`${heading(a)}\n${ta}\n${heading(b)}\n${tb}`);
    const bad = await fecr(['recibidos', 'resumen', mes, '--issuer', '999999999']);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^error: .*\n(.*emisor.*no issuer 999999999.*\n)?$/);
  }, 120_000);
});
