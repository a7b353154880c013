// Issue 30 (must show: annul, replace, payments), in local mode: the default profile, the service in-process on
// FECR_DATA_DIR and the embedded emulator, every document sent and decided by the real worker.
//  - annul: accepted FEs (services, goods with discounts, otros cargos, an exoneración, USD) → `fecr documents annul`
//    → NC aceptado, valid against the 2026 NC XSD (xmllint), every line and figure the FE's, its reference right;
//    `fecr status` of the FE names the NC; a second annul, an annul of a rejected FE and of an NC are refused.
//  - replace: an FE the emulator rejects (a fault file's reject rule) → `replace` with a corrected body → aceptado
//    with CodigoReferencia 16 / TipoDocIR 10 and a new consecutivo; `replace` of an accepted FE → refused, one line.
//  - payments: a credit FE (condicionVenta 10) of 100 000 + IVA paid in two REPs → each aceptado, balance 0 after the
//    second; a third refused; an overpayment refused.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../src/core/xml/kinds.js';
import { parseComprobanteXml, type ParsedComprobante } from '../src/core/xml/parse-comprobante.js';
import { fixtureBody } from './helpers/api-context.js';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const root = tempDir('fecr-annul-');
const work = join(root, 'work');
const env: Record<string, string> = { HOME: root, FECR_DATA_DIR: join(root, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[], opts: { stdin?: string } = {}) => runCli(args, { env, cwd: work, ...opts });
const issuer = makeTestIssuer();
let n = 700;

afterAll(() => rmSync(root, { recursive: true, force: true }));

function expectOneLine(r: CliRun, text: string | RegExp): void {
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(text);
}

async function send(body: Record<string, unknown>): Promise<{ clave: string; estado: string }> {
  const file = join(work, `body-${n}.json`);
  // No numeroReferencia: local mode takes the series' next free number (as the replacements and notes do).
  writeFileSync(file, JSON.stringify({ ...body, numeroReferencia: undefined }));
  n++;
  // Each call is a sale of its own, even of a body sent before (issue 36: without --new, the document it made).
  const r = await fecr(['send', file, '--wait', '--json', '--new']);
  const out = JSON.parse(r.stdout) as { clave: string; estado: string };
  return out;
}

async function xmlOf(clave: string): Promise<string> {
  const r = await fecr(['download', clave, '--out', '-']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

function xsdValid(kind: keyof typeof KINDS, xml: string): void {
  const file = join(work, `${kind}-${Math.random().toString(36).slice(2)}.xml`);
  writeFileSync(file, xml);
  const xsd = new URL(`../schemas/xsd/${KINDS[kind].xsdFile}`, import.meta.url).pathname;
  expect(xsd).toContain('/2026/v4.4/');
  const r = spawnSync('xmllint', ['--noout', '--schema', xsd, file], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

/** What must be the same in a comprobante and the NC that annuls it: receptor, lines, charges, every total. */
function figures(p: ParsedComprobante) {
  return { receptor: p.receptor, condicionVenta: p.condicionVenta, lineas: p.lineas, otrosCargos: p.otrosCargos, resumen: p.resumen };
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(issuer.issuer));
  const r = await fecr(['emisor', 'register', 'issuer.json']);
  expect(r.code, r.stderr).toBe(0);
}, 60_000);

describe('fecr documents annul', () => {
  const FES = ['01-fe-servicios-13', '02-fe-bienes-servicios-descuentos', '05-fe-otros-cargos', '06-fe-exoneracion-autorizacion', '08-fe-usd'];
  const annulled = new Map<string, { fe: string; nc: string }>();

  it.each(FES)('%s: accepted FE → NC aceptado, XSD-valid (2026), every line and figure the FE\'s, code 01', async (name) => {
    const fe = await send(fixtureBody(name));
    expect(fe.estado).toBe('aceptado');
    const r = await fecr(['documents', 'annul', fe.clave, '--wait', '--json', '--reason', 'Venta anulada a pedido del cliente']);
    expect(r.code, r.stderr).toBe(0);
    const nc = JSON.parse(r.stdout) as { clave: string; estado: string };
    expect(nc.estado).toBe('aceptado');
    expect(nc.clave.slice(29, 31)).toBe('03'); // the consecutivo's tipo de comprobante: 03 nota de crédito
    const feXml = parseComprobanteXml(await xmlOf(fe.clave));
    const ncText = await xmlOf(nc.clave);
    xsdValid('NC', ncText);
    const ncXml = parseComprobanteXml(ncText);
    expect(ncXml.kind).toBe('NC');
    expect(figures(ncXml)).toEqual(figures(feXml));
    expect(ncXml.informacionReferencia).toEqual([
      { tipoDocIR: '01', numero: fe.clave, fechaEmisionIR: feXml.fechaEmision, codigo: '01', razon: 'Venta anulada a pedido del cliente' },
    ]);
    annulled.set(name, { fe: fe.clave, nc: nc.clave });
  }, 60_000);

  it('fecr status of the FE names the NC, and its balance is 0', async () => {
    const { fe, nc } = annulled.get('01-fe-servicios-13')!;
    const r = await fecr(['status', fe]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('referenced by:');
    expect(r.stdout).toMatch(new RegExp(`NC\\t${nc}\\taceptado\\t01 Anula documento de referencia\\t\\d+\\.\\d{5}`));
    expect(r.stdout).toMatch(/^saldo: 0\.00000 CRC$/m);
    const j = JSON.parse((await fecr(['status', fe, '--json'])).stdout);
    expect(j.referenciadoPor).toEqual([expect.objectContaining({ clave: nc, tipo: 'NC', estado: 'aceptado', codigoReferencia: '01' })]);
    expect(j.saldo).toBe('0.00000');
    // Issue 36 item 7: an annulled comprobante names what annulled it.
    expect(j.anuladoPor).toEqual({ clave: nc, estado: 'aceptado' });
    expect(r.stdout).toContain(`annulled by: ${nc} (aceptado)`);
  });

  it('a second annul of the same FE is refused in one line, exit 1, nothing sent', async () => {
    const { fe, nc } = annulled.get('02-fe-bienes-servicios-descuentos')!;
    const before = (await fecr(['documents', 'list', '--json'])).stdout;
    expectOneLine(await fecr(['documents', 'annul', fe]), `${fe} is already annulled by ${nc} (aceptado)`);
    expect((await fecr(['documents', 'list', '--json'])).stdout).toBe(before);
  });

  it('an NC is not annulled by another NC, nor a TE without receptor or an FEE; an unknown clave is not found', async () => {
    const { nc } = annulled.get('05-fe-otros-cargos')!;
    expectOneLine(await fecr(['documents', 'annul', nc]), /is a nota de crédito \(an ND reverses it\)/);
    // A ticket without receptor, an export invoice (foreign receptor): no NC made from them (one line, nothing sent).
    const te = await send(fixtureBody('10-te-sin-receptor'));
    expect(te.estado).toBe('aceptado');
    expectOneLine(await fecr(['documents', 'annul', te.clave]), `${te.clave} has no receptor: a nota de crédito names a receptor with a Costa Rican identificación (01-04)`);
    const fee = await send(fixtureBody('20-fee-cafe-usd'));
    expect(fee.estado).toBe('aceptado');
    expectOneLine(await fecr(['documents', 'annul', fee.clave]), /is a factura electrónica de exportación/);
    const unknown = `${nc.slice(0, 42)}99999999`;
    const r = await fecr(['documents', 'annul', unknown]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no document with clave ${unknown}`);
  });
});

describe('fecr documents replace', () => {
  let rejected: string;
  const corrected = () => ({ ...fixtureBody('01-fe-servicios-13'), numeroReferencia: undefined });

  beforeAll(async () => {
    // The emulator rejects any document with a line whose Detalle says "RECHAZAR" (docs/faults.md).
    writeFileSync(join(work, 'faults.json'), JSON.stringify({ reject: [{ detalleContains: 'RECHAZAR', codigo: '-54' }] }));
    const c = await fecr(['config', 'set', `emulatorFaults=${join(work, 'faults.json')}`]);
    expect(c.code, c.stderr).toBe(0);
    const body = fixtureBody('01-fe-servicios-13');
    body.detalleServicio[0].detalle = 'Licencia anual RECHAZAR';
    const fe = await send(body);
    expect(fe.estado).toBe('rechazado');
    rejected = fe.clave;
  }, 60_000);

  it('a rejected FE → replace with the corrected body → aceptado, code 16 / TipoDocIR 10, a new consecutivo', async () => {
    const file = join(work, 'corrected.json');
    // The corrected body repeats the rejected one's number: the replacement takes the next free one instead.
    writeFileSync(file, JSON.stringify({ ...corrected(), numeroReferencia: Number(rejected.slice(31, 41)) }));
    const r = await fecr(['documents', 'replace', rejected, file, '--wait', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { clave: string; estado: string; numeroConsecutivo?: string };
    expect(out.estado).toBe('aceptado');
    const oldXml = parseComprobanteXml(await xmlOf(rejected));
    const xmlText = await xmlOf(out.clave);
    xsdValid('FE', xmlText);
    const xml = parseComprobanteXml(xmlText);
    expect(xml.numeroConsecutivo).not.toBe(oldXml.numeroConsecutivo);
    expect(Number(xml.numeroConsecutivo.slice(10))).toBeGreaterThan(Number(oldXml.numeroConsecutivo.slice(10)));
    expect(xml.informacionReferencia).toEqual([
      { tipoDocIR: '10', numero: rejected, fechaEmisionIR: oldXml.fechaEmision, codigo: '16', razon: 'Sustituye comprobante electrónico rechazado' },
    ]);
    const s = JSON.parse((await fecr(['status', rejected, '--json'])).stdout);
    expect(s.estado).toBe('rechazado');
    // Issue 36 item 7: the replacement's amount is its TotalComprobante; a rejected comprobante owes nothing, and its
    // status names what replaced it.
    const total = oldXml.resumen.totalComprobante;
    expect(s.referenciadoPor).toEqual([expect.objectContaining({ clave: out.clave, tipo: 'FE', estado: 'aceptado', codigoReferencia: '16', monto: xml.resumen.totalComprobante })]);
    expect(s.saldo).toBe('0.00000');
    expect(s.saldoPendiente).toBe('0.00000');
    expect(s.reemplazadoPor).toEqual({ clave: out.clave, estado: 'aceptado' });
    const table = await fecr(['status', rejected]);
    // Its exit is its own state's (3: rechazado), as always.
    expect(table.code, table.stderr).toBe(3);
    expect(table.stdout).toMatch(new RegExp(`^FE\\t${out.clave}\\taceptado\\t16 [^\\t]+\\t${xml.resumen.totalComprobante.replace('.', '\\.')}$`, 'm'));
    expect(table.stdout).toContain(`replaced by: ${out.clave} (aceptado)`);
    expect(table.stdout).toMatch(/^saldo: 0\.00000 CRC \(rejected by Hacienda: nothing is owed on it\)$/m);
    expect(table.stdout).not.toContain(`saldo: ${total}`);
    // Replaced once: a second replacement is refused.
    expectOneLine(await fecr(['documents', 'replace', rejected, file]), `${rejected} is already replaced by ${out.clave} (aceptado)`);
  }, 60_000);

  it('replace of an accepted FE is refused: exit 1, one line with the reason', async () => {
    const fe = await send(fixtureBody('01-fe-servicios-13'));
    expect(fe.estado).toBe('aceptado');
    const file = join(work, 'corrected-2.json');
    writeFileSync(file, JSON.stringify(corrected()));
    expectOneLine(await fecr(['documents', 'replace', fe.clave, file]), `${fe.clave} is aceptado: only a comprobante Hacienda rejected is replaced (CodigoReferencia 16)`);
  }, 60_000);

  it('annul of the rejected FE is refused', async () => {
    expectOneLine(await fecr(['documents', 'annul', rejected]), `${rejected} is rechazado: only a comprobante Hacienda accepted is annulled`);
  });
});

describe('fecr documents payment', () => {
  let sale: string;

  beforeAll(async () => {
    const body = fixtureBody('01-fe-servicios-13');
    body.condicionVenta = '10';
    body.plazoCredito = 60;
    body.resumenFactura = { codigoTipoMoneda: { codigoMoneda: 'CRC' } };
    body.detalleServicio = [
      { numeroLinea: 1, codigo: '8311500000000', detalle: 'Consultoría en gestión comercial', cantidad: 1, unidadMedida: 'Sp', precioUnitario: '100000.00', subTotal: '100000.00', montoTotal: '100000.00', impuestoNeto: 13000, montoTotalLinea: 113000, impuesto: [{ codigo: '01', codigoTarifa: '08', tarifa: '13', monto: '13000.00' }] },
    ];
    const fe = await send(body);
    expect(fe.estado).toBe('aceptado');
    sale = fe.clave;
  }, 60_000);

  it('a credit FE of 100 000 + IVA paid in two REPs: each aceptado, balance 0 after the second; a third refused', async () => {
    const first = await fecr(['documents', 'payment', sale, '--amount', '56500', '--wait', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const rep1 = JSON.parse(first.stdout) as { clave: string; estado: string };
    expect(rep1.estado).toBe('aceptado');
    const repText = await xmlOf(rep1.clave);
    xsdValid('REP', repText);
    const rep = parseComprobanteXml(repText);
    expect(rep.kind).toBe('REP');
    expect(rep.condicionVenta).toBe('11');
    expect(rep.lineas).toHaveLength(1);
    expect(rep.lineas[0]).toMatchObject({ montoTotal: '50000.00000', subTotal: '50000.00000', montoTotalLinea: '56500.00000' });
    expect(rep.lineas[0]!.impuestos[0]).toMatchObject({ codigo: '01', codigoTarifaIVA: '08', monto: '6500.00000' });
    expect(rep.lineas[0]!.detalle).toMatch(/^Pago de la cuota 1 de la factura \d{20}$/);
    expect(rep.mediosPago).toEqual([{ tipoMedioPago: '04', medioPagoOtros: undefined, totalMedioPago: undefined }]);
    expect(rep.informacionReferencia).toEqual([expect.objectContaining({ tipoDocIR: '01', numero: sale, codigo: '17' })]);
    let s = JSON.parse((await fecr(['status', sale, '--json'])).stdout);
    expect(s.saldo).toBe('56500.00000');

    const second = await fecr(['documents', 'payment', sale, '--amount', '56500.00', '--medio', '06', '--wait', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).estado).toBe('aceptado');
    s = JSON.parse((await fecr(['status', sale, '--json'])).stdout);
    expect(s.saldo).toBe('0.00000');
    expect(s.referenciadoPor.map((r: { tipo: string; estado: string; monto: string }) => [r.tipo, r.estado, r.monto])).toEqual([
      ['REP', 'aceptado', '56500.00000'],
      ['REP', 'aceptado', '56500.00000'],
    ]);
    const table = await fecr(['status', sale]);
    expect(table.stdout).toMatch(/^saldo: 0\.00000 CRC$/m);

    const before = (await fecr(['documents', 'list', '--json'])).stdout;
    expectOneLine(await fecr(['documents', 'payment', sale, '--amount', '1']), `${sale} is paid in full (balance 0.00000 CRC)`);
    expect((await fecr(['documents', 'list', '--json'])).stdout).toBe(before);
  }, 90_000);

  it('an overpayment is refused, naming the balance; a sale not on credit (08/10) gets no REP', async () => {
    const body = fixtureBody('01-fe-servicios-13');
    body.condicionVenta = '10';
    body.plazoCredito = 30;
    const fe = await send(body);
    expect(fe.estado).toBe('aceptado');
    expectOneLine(await fecr(['documents', 'payment', fe.clave, '--amount', '1000000']), `a payment of 1000000.00000 CRC exceeds the balance left on ${fe.clave} (918125.00000 CRC)`);
    const cash = await send(fixtureBody('01-fe-servicios-13'));
    expectOneLine(await fecr(['documents', 'payment', cash.clave, '--amount', '1000']), /has condicionVenta 01: a recibo de pago pays a sale with condicionVenta 08 .* or 10/);
    const usage = await fecr(['documents', 'payment', fe.clave, '--amount', '12,5']);
    expect(usage.code).toBe(2);
  }, 60_000);
});
