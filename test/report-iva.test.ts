// Issue 29 (must show 1): a month made here — FE at 13 %, at 4/2/1/0 %, exento and no sujeto, an exonerated FE, a USD
// FE, a TE, an NC partly cancelling an FE, an ND, an FEE (USD), a FEC, a REP, one FE Hacienda has not decided on; three
// supplier invoices answered (accepted, partly, rejected by us) and one whose MensajeReceptor Hacienda rejected — sent
// to the emulator by the real worker; then `ivaReport` equals the figures computed here, independently, from the signed
// XML (Decimal over the XML's own elements, not core/report/iva.ts), line by line, and the left-out documents are listed.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { createAccount } from '../src/service/accounts.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { registerIssuer } from '../src/service/issuers.js';
import { decideRecibido } from '../src/service/recibidos/decide.js';
import { importRecibidos } from '../src/service/recibidos/import.js';
import { getRecibido, recibidoFile } from '../src/service/recibidos/queries.js';
import { ivaReport, ivaReports } from '../src/service/report-iva.js';
import { buildApiApp } from '../src/server/api-app.js';
import { RemoteReports } from '../src/client/reports-backends.js';
import { fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { FAST_WORKER, storeSigned, withTimeout } from './helpers/worker-docs.js';
import { runCli, tempDir } from './helpers/cli.js';
import { childEnv } from './helpers/hermetic-env.js';

const BUYER = { tipo: '02', numero: '3101123456', nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA' };
const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP });
const m5 = (d: Decimal) => d.toFixed(5, Decimal.ROUND_HALF_UP);

let emu: RunningEmulator;
let env: TestContext;
let accountId: number;
let issuerId: number;
let t: TestIssuer;
let mes: string;
const sales: { clave: string; id: number; kind: string }[] = [];
let pendingClave: string;
const received: Record<'acepta' | 'parcial' | 'rechaza' | 'mrRechazado', string> = { acepta: '', parcial: '', rechaza: '', mrRechazado: '' };

const tag = (xml: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
const blocks = (xml: string, name: string): string[] => [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g'))].map((m) => m[1]!);

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  env = await makeServiceContext({ haciendaUrl: emu.url });
  accountId = (await createAccount(env.ctx, { base: 'contador', password: 'una clave larga 123' })).account.id;
  t = makeTestIssuer();
  await registerIssuer(env.ctx, accountId, t.issuer);
  issuerId = Number((await env.ctx.store.db.selectFrom('issuers').select('id').where('account_id', '=', accountId).executeTakeFirstOrThrow()).id);
  const now = new Date();
  mes = formatCr(now).slice(0, 7);
  const fecha = formatCr(now);
  const before = formatCr(new Date(now.getTime() - 60_000));
  let n = 500;
  const store = async (name: string, patch: (b: Record<string, any>) => void = () => undefined) => {
    const b = fixtureBody(name);
    b['numeroReferencia'] = n++;
    b['fechaEmision'] = fecha;
    for (const r of b['informacionReferencia'] ?? []) r.fechaEmision = before;
    patch(b);
    const r = await storeSigned({ ctx: env.ctx, accountId, issuerId }, t, b);
    return r;
  };
  const fe13 = await store('01-fe-servicios-13');
  sales.push({ ...fe13, kind: 'FE' });
  for (const [name, kind] of [
    ['03-fe-tarifas-reducidas', 'FE'],
    ['04-fe-exento-no-sujeto', 'FE'],
    ['06-fe-exoneracion-autorizacion', 'FE'],
    ['08-fe-usd', 'FE'],
    ['10-te-sin-receptor', 'TE'],
    ['14-nd-ajuste-servicios', 'ND'],
    ['20-fee-cafe-usd', 'FEE'],
    ['17-fec-agricultor', 'FEC'],
    ['23-rep-credito-90-dias', 'REP'],
  ] as const) sales.push({ ...(await store(name)), kind });
  // The NC cancels part of a 13 % sale (its own figures, the fixture's; its reference names the FE made here).
  const nc = await store('09-nc-devolucion', (b) => {
    b['informacionReferencia'][0].numero = fe13.clave;
  });
  sales.push({ ...nc, kind: 'NC' });

  // Purchases: four supplier invoices to the issuer.
  const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receptor: { tipo: '02', numero: t.issuer.identificacion, nombre: BUYER.nombre }, cantidad: 4 }) });
  const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string }[] };
  await emu.state.whenIdle();
  await importRecibidos(env.ctx, accountId, documentos.map((d) => ({ name: `${d.clave}.xml`, bytes: Buffer.from(d.xml, 'base64') })));
  [received.acepta, received.parcial, received.rechaza, received.mrRechazado] = documentos.map((d) => d.clave) as [string, string, string, string];
  await decideRecibido(env.ctx, accountId, received.acepta, { decision: 'aceptar' });
  await decideRecibido(env.ctx, accountId, received.parcial, { decision: 'parcial', ivaAcreditable: '1000', detalle: 'Parte del servicio no fue prestado' });
  await decideRecibido(env.ctx, accountId, received.rechaza, { decision: 'rechazar', detalle: 'Mercadería no recibida' });
  await decideRecibido(env.ctx, accountId, received.mrRechazado, { decision: 'aceptar' });

  const worker = startWorker(env.ctx, FAST_WORKER);
  try {
    await withTimeout(
      (async () => {
        for (;;) {
          const docs = await env.ctx.store.db.selectFrom('documents').select(['state']).where('account_id', '=', accountId).execute();
          if (docs.every((d) => ['aceptado', 'rechazado', 'error'].includes(d.state))) return;
          await new Promise((r) => setTimeout(r, 50));
        }
      })(),
      25_000,
      'every document decided',
    );
  } finally {
    await worker.stop();
  }
  // Hacienda rejecting a MensajeReceptor is shown end to end in test/recibidos-answer-again.test.ts (a second
  // Hacienda): here its stored verdict is set so, the state the report reads.
  const mr = (await getRecibido(env.ctx, accountId, received.mrRechazado))!;
  await env.ctx.store.db.updateTable('documents').set({ state: 'rechazado' }).where('clave', '=', mr.decision!.mensajeClave!).execute();
  // One FE Hacienda has not decided on yet (stored after the worker stopped).
  pendingClave = (await store('01-fe-servicios-13')).clave;
}, 60_000);

afterAll(async () => {
  await env?.close();
  await emu?.close();
});

/** The sales figures computed here from the signed XML. */
function expectedSales(xmls: string[]) {
  const z = () => ({ base: new D(0), impuesto: new D(0), n: new Set<string>() });
  const gravado = new Map<string, ReturnType<typeof z>>();
  const fec = new Map<string, ReturnType<typeof z>>();
  const b = { exento: z(), noSujeto: z(), exonerado: z(), exportaciones: z(), rep: z() };
  let exoneracion = new D(0);
  for (const xml of xmls) {
    const clave = tag(xml, 'Clave')!;
    const root = /<(FacturaElectronica|NotaCreditoElectronica|NotaDebitoElectronica|TiqueteElectronico|FacturaElectronicaExportacion|FacturaElectronicaCompra|ReciboElectronicoPago)[\s>]/.exec(xml)![1]!;
    const moneda = blocks(xml, 'CodigoTipoMoneda')[0]!;
    const tc = tag(moneda, 'CodigoMoneda') === 'CRC' ? new D(1) : new D(tag(moneda, 'TipoCambio')!);
    const sign = root === 'NotaCreditoElectronica' ? -1 : 1;
    for (const l of blocks(xml, 'LineaDetalle')) {
      const iva = blocks(l, 'Impuesto').find((i) => tag(i, 'Codigo') === '01');
      const base = new D(tag(l, 'BaseImponible') ?? tag(l, 'SubTotal')!).times(tc).times(sign);
      const imp = new D(iva ? tag(iva, 'Monto')! : '0').times(tc).times(sign);
      const into = (a: ReturnType<typeof z>) => {
        a.base = a.base.plus(base);
        a.impuesto = a.impuesto.plus(imp);
        a.n.add(clave);
      };
      const code = iva ? tag(iva, 'CodigoTarifaIVA')! : '';
      const key = `${code} ${iva ? tag(iva, 'Tarifa') : ''}`;
      if (root === 'ReciboElectronicoPago') into(b.rep);
      else if (root === 'FacturaElectronicaCompra') into(fec.get(key) ?? fec.set(key, z()).get(key)!);
      else if (root === 'FacturaElectronicaExportacion') into(b.exportaciones);
      else if (!iva || code === '01' || code === '11') into(b.noSujeto);
      else if (code === '10') into(b.exento);
      else if (iva.includes('<Exoneracion>')) {
        into(b.exonerado);
        exoneracion = exoneracion.plus(new D(tag(iva, 'MontoExoneracion')!).times(tc).times(sign));
      } else into(gravado.get(key) ?? gravado.set(key, z()).get(key)!);
    }
  }
  const lines = (m: Map<string, ReturnType<typeof z>>) =>
    [...m.entries()].sort(([a], [c]) => (a < c ? -1 : 1)).map(([k, v]) => ({ codigoTarifaIVA: k.split(' ')[0], tarifa: k.split(' ')[1], base: m5(v.base), impuesto: m5(v.impuesto), documentos: v.n.size }));
  const bk = (a: ReturnType<typeof z>) => ({ base: m5(a.base), impuesto: m5(a.impuesto), documentos: a.n.size });
  const g = lines(gravado);
  const neto = b.exonerado.impuesto.minus(exoneracion);
  const debito = g.reduce((s, l) => s.plus(l.impuesto), new D(0)).plus(m5(neto)).plus(m5(b.exportaciones.impuesto));
  const a = lines(fec);
  return {
    gravado: g,
    exento: bk(b.exento),
    noSujeto: bk(b.noSujeto),
    exonerado: { ...bk(b.exonerado), montoExoneracion: m5(exoneracion), impuestoNeto: m5(neto) },
    exportaciones: bk(b.exportaciones),
    ivaDebito: m5(debito),
    pagosRecibidos: bk(b.rep),
    autoliquidado: a,
    ivaAutoliquidado: m5(a.reduce((s, l) => s.plus(l.impuesto), new D(0))),
  };
}

describe('fecr report iva: a month of every kind', () => {
  it('equals the figures computed from the signed XML, line by line; the left-out documents listed with why', async () => {
    const rows = await env.ctx.store.db.selectFrom('documents').select(['clave', 'kind', 'state', 'xml']).where('account_id', '=', accountId).where('kind', 'in', ['FE', 'NC', 'ND', 'TE', 'FEE', 'FEC', 'REP']).execute();
    // Every document made above was accepted by the emulator, but the one stored after the worker stopped.
    expect(rows.filter((r) => r.state !== 'aceptado').map((r) => [r.clave, r.state])).toEqual([[pendingClave, 'pendiente']]);
    const accepted = rows.filter((r) => r.state === 'aceptado');
    expect(accepted.map((r) => r.kind).sort()).toEqual(['FE', 'FE', 'FE', 'FE', 'FE', 'FEC', 'FEE', 'NC', 'ND', 'REP', 'TE']);
    const want = expectedSales(accepted.map((r) => r.xml));
    const rep = await ivaReport(env.ctx, accountId, mes, t.issuer.identificacion);
    const { documentos, documentosFec, pagosRecibidos, ...got } = rep.ventas;
    const { pagosRecibidos: _p, ...wantRest } = want;
    expect(got.gravado).toEqual(want.gravado);
    expect(got.exento).toEqual(want.exento);
    expect(got.noSujeto).toEqual(want.noSujeto);
    expect(got.exonerado).toEqual(want.exonerado);
    expect(got.exportaciones).toEqual(want.exportaciones);
    expect(got.autoliquidado).toEqual(want.autoliquidado);
    expect(got).toEqual(wantRest);
    expect(got.ivaDebito).toBe(want.ivaDebito);
    expect(got.ivaAutoliquidado).toBe(want.ivaAutoliquidado);
    expect({ base: pagosRecibidos.base, impuesto: pagosRecibidos.impuesto, documentos: pagosRecibidos.documentos }).toEqual(want.pagosRecibidos);
    expect(documentos).toBe(9);
    expect(documentosFec).toBe(1);
    // The kinds are there: 13 %, 4 %, 1 %, exento, no sujeto, exonerado, exports, a USD FE at its TipoCambio.
    expect(got.gravado.map((l) => `${l.codigoTarifaIVA}/${l.tarifa}`)).toEqual(expect.arrayContaining(['08/13', '04/4', '02/1']));
    expect(dec0(got.exento.base)).toBe(false);
    expect(dec0(got.noSujeto.base)).toBe(false);
    expect(dec0(got.exonerado.montoExoneracion)).toBe(false);
    expect(dec0(got.exportaciones.base)).toBe(false);

    // Purchases: the accepted one and the partly accepted one, from their MensajeReceptor XML.
    let iva = new D(0);
    for (const c of [received.acepta, received.parcial]) iva = iva.plus(tag((await recibidoFile(env.ctx, accountId, c, 'MENSAJE_RECEPTOR'))!.toString('utf8'), 'MontoTotalImpuestoAcreditar')!);
    expect(rep.compras.documentos).toBe(2);
    expect(rep.compras.totales.ivaAcreditable).toBe(m5(iva));
    expect(rep.compras.excluidos.map((x) => [x.clave, x.motivo]).sort()).toEqual(
      [
        [received.rechaza, 'rechazado_por_comprador'],
        [received.mrRechazado, 'respuesta_rechazada'],
      ].sort(),
    );
    // The difference and the sales left out.
    const saldo = new D(want.ivaDebito).plus(want.ivaAutoliquidado).minus(iva);
    expect(rep.diferencia).toEqual({ ivaDebito: want.ivaDebito, ivaAutoliquidado: want.ivaAutoliquidado, ivaAcreditable: m5(iva), saldo: m5(saldo), resultado: saldo.isPositive() ? 'por_pagar' : 'a_favor' });
    expect(rep.excluidos).toEqual([expect.objectContaining({ clave: pendingClave, tipo: 'FE', estado: 'pendiente' })]);
    expect(rep.d150).toBeNull();
    expect(rep.nota).toMatch(/mapping not sourced/);
  });

  it('POST /api/reportes/iva (in /openapi.json): the same report; another account sees none of it; bad input a 400 naming the field', async () => {
    const app = buildApiApp(env.ctx, { authenticate: async (h) => ({ base: h === 'Bearer otra' ? 'otra' : 'contador' }) });
    await createAccount(env.ctx, { base: 'otra', password: 'una clave larga 456' });
    const post = (payload: unknown, token = 'x') => app.inject({ method: 'POST', url: '/api/reportes/iva', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    try {
      const remote = new RemoteReports(async <T,>(path: string, body: unknown) => {
        const res = await app.inject({ method: 'POST', url: path, headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, payload: JSON.stringify(body) });
        expect(res.statusCode).toBe(200);
        return res.json() as T;
      });
      expect(await remote.iva(mes, t.issuer.identificacion)).toEqual(await ivaReport(env.ctx, accountId, mes, t.issuer.identificacion));
      // Issue 36: without emisor, one report per issuer of the account (an array); an account without issuers: none.
      const each = await post({ mes });
      expect(each.statusCode).toBe(200);
      expect(each.json().data).toEqual([await ivaReport(env.ctx, accountId, mes, t.issuer.identificacion)]);
      expect(await remote.ivaEach(mes)).toEqual(each.json().data);
      const other = await post({ mes }, 'otra');
      expect(other.statusCode).toBe(200);
      expect(other.json().data).toEqual([]);
      expect((await post({ mes, emisor: t.issuer.identificacion }, 'otra')).statusCode).toBe(400);
      for (const [body, field] of [[{ mes: '2026-13' }, 'mes'], [{}, 'mes'], [{ mes, emisor: 'abc' }, 'emisor']] as const) {
        const r = await post(body);
        expect(r.statusCode).toBe(400);
        expect(JSON.stringify(r.json())).toContain(field);
      }
      const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
      expect(spec.paths['/api/reportes/iva']).toBeDefined();
    } finally {
      await app.close();
    }
  });

  it('a bad month or an unknown issuer: a validation error naming the field', async () => {
    await expect(ivaReport(env.ctx, accountId, '2026-13', t.issuer.identificacion)).rejects.toMatchObject({ details: [{ path: 'mes' }] });
    await expect(ivaReports(env.ctx, accountId, '2026-13')).rejects.toMatchObject({ details: [{ path: 'mes' }] });
    await expect(ivaReport(env.ctx, accountId, mes, '999999999')).rejects.toMatchObject({ details: [{ path: 'emisor' }] });
  });
});

const dec0 = (s: string) => new D(s).isZero();

describe('fecr report iva, spawned: the demo month', () => {
  it('--json equals the figures computed from the demo files; the table prints 2 decimals and the left-out list', async () => {
    const home = tempDir('fecr-report-iva-');
    const work = join(home, 'work');
    const demo = await runCli(['demo', '--json'], { env: { HOME: home, FECR_NO_KEYCHAIN: '1' }, cwd: work });
    expect(demo.code, demo.stderr).toBe(0);
    const result = JSON.parse(demo.stdout) as { out: string; documents: { estado: string }[] };
    expect(result.documents.every((d) => d.estado === 'aceptado')).toBe(true);
    // Every signed comprobante the demo wrote (not the respuestas).
    const out = join(work, result.out);
    const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.xml')).map((f) => readFileSync(join(out, f), 'utf8'));
    const xmls = files.filter((x) => !x.includes('<MensajeHacienda'));
    expect(xmls.length).toBe(9);
    const month = formatCr(new Date()).slice(0, 7);
    const spawnCli = (args: string[]) =>
      spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), new URL('./helpers/fecr-dev.ts', import.meta.url).pathname, ...args], {
        env: childEnv({ HOME: home, FECR_NO_KEYCHAIN: '1' }),
        cwd: work,
        encoding: 'utf8',
        timeout: 60_000,
      });
    const r = spawnCli(['report', 'iva', month, '--profile', 'demo', '--issuer', '3101123456', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const rep = JSON.parse(r.stdout) as Awaited<ReturnType<typeof ivaReport>>;
    const want = expectedSales(xmls);
    const { pagosRecibidos, documentos: _d, documentosFec: _f, ...got } = rep.ventas;
    const { pagosRecibidos: wantRep, ...wantRest } = want;
    expect(got).toEqual(wantRest);
    expect({ base: pagosRecibidos.base, impuesto: pagosRecibidos.impuesto, documentos: pagosRecibidos.documentos }).toEqual(wantRep);
    expect(rep.d150).toBeNull();
    const table = runCli(['report', 'iva', month, '--profile', 'demo'], { env: { HOME: home, FECR_NO_KEYCHAIN: '1' }, cwd: work });
    const t2 = await table;
    expect(t2.code, t2.stderr).toBe(0);
    expect(t2.stdout).toContain(`ventas\tIVA débito\t\t\t\t${new D(want.ivaDebito).toFixed(2, Decimal.ROUND_HALF_UP)}\t`);
    expect(t2.stdout).toContain('D-150\tmapping not sourced');
    // Without --issuer, one issuer: one section, its heading naming the cédula (issue 36).
    expect(t2.stdout.split('\n')[0]).toMatch(/^emisor 3101123456 \S/);
    // Every document left out (the demo's purchases include one it rejected) is listed with its reason.
    const left = t2.stdout.split('left out:')[1]!.trim().split('\n');
    expect(left).toHaveLength(rep.excluidos.length + rep.compras.excluidos.length);
    for (const x of rep.compras.excluidos) expect(left).toContainEqual(expect.stringMatching(new RegExp(`^compra ${x.clave} .*: ${x.motivo}$`)));
    const bad = await runCli(['report', 'iva', '2026-13', '--profile', 'demo'], { env: { HOME: home, FECR_NO_KEYCHAIN: '1' }, cwd: work });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/^error: MES must be a month YYYY-MM/);
  }, 120_000);
});
