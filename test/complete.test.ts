// Issue 27, item 1: computed figures are optional in a body. The three-line, three-rate factura of
// fixtures/decisions/ (13 %, 4 %, 1 %; written with decisions only) is valid for `fecr validate`, aceptado by
// `fecr send --wait` (local profile, the embedded emulator; the CLI spawned from the sources with its own HOME), and
// its signed XML is the XML of the same document written with every figure by hand (factura-tres-tarifas.completa.json)
// but for the signature and the clave; `fecr complete` prints that full body. Every fixture of fixtures/documents,
// its figures taken out, gets its hand-worked figures back. A figure that is given is checked as ever; a line whose
// figures cannot be computed adds no "is required"; the client API wants the figures unless asked (?completar=1).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { completeBody, completedInput } from '../src/core/input/complete.js';
import { dec } from '../src/core/money.js';
import { placeholderIssuer } from '../src/core/placeholder-issuer.js';
import { buildApiApp } from '../src/server/api-app.js';
import { buildOpenApi } from '../src/server/openapi.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { runCli } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

type Body = Record<string, any>;
const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;
const DECISIONS = join(FIXTURES, 'decisions', 'factura-tres-tarifas.json');
const COMPLETA = join(FIXTURES, 'decisions', 'factura-tres-tarifas.completa.json');
const read = (file: string): Body => JSON.parse(readFileSync(file, 'utf8'));
const LINE_FIGURES = ['subTotal', 'montoTotal', 'impuestoNeto', 'montoTotalLinea'];

/** A body without the figures a person does not decide. */
function decisionsOf(full: Body): Body {
  const b = structuredClone(full);
  const rep = b.tipoDoc === '10';
  for (const l of b.detalleServicio) {
    for (const k of rep ? ['impuestoNeto', 'montoTotalLinea'] : LINE_FIGURES) delete l[k];
    delete l.numeroLinea;
    for (const t of l.impuesto) delete t.monto;
  }
  for (const k of Object.keys(b.resumenFactura)) if (k.startsWith('total')) delete b.resumenFactura[k];
  return b;
}

describe('completeBody', () => {
  const names = readdirSync(join(FIXTURES, 'documents')).filter((f) => /^\d\d-.+(?<!\.expected)\.json$/.test(f));

  it.each(names)('%s without its figures gets the hand-worked ones back, and is valid', (name) => {
    const full = read(join(FIXTURES, 'documents', name));
    const c = completeBody(decisionsOf(full));
    expect(c.incomplete).toEqual([]);
    const got = c.body as Body;
    full.detalleServicio.forEach((l: Body, i: number) => {
      const g = got.detalleServicio[i];
      expect(g.numeroLinea).toBe(l.numeroLinea);
      for (const k of LINE_FIGURES) expect(dec(g[k]).eq(dec(l[k])), `${name} line ${i} ${k}: ${g[k]} vs ${l[k]}`).toBe(true);
      l.impuesto.forEach((t: Body, j: number) => expect(dec(g.impuesto[j].monto).eq(dec(t.monto)), `${name} line ${i} monto`).toBe(true));
    });
    for (const [k, v] of Object.entries(full.resumenFactura)) {
      if (k.startsWith('total')) expect(dec(got.resumenFactura[k] ?? '0').eq(dec(v as string)), `${name} ${k}`).toBe(true);
    }
    expect(parseDocument(c.body, placeholderIssuer(c.body)).findings).toEqual([]);
  });

  it('the decisions fixture completes to the hand-written full body; a full body is left as it is', () => {
    expect(completeBody(read(DECISIONS))).toEqual({ body: read(COMPLETA), incomplete: [] });
    expect(completeBody(read(COMPLETA)).body).toEqual(read(COMPLETA));
  });

  it('a figure that is given is kept, and checked as ever', () => {
    const b = decisionsOf(validInvoice());
    b.detalleServicio[0].montoTotalLinea = 101800;
    const r = parseDocument(completedInput(b), ISSUER);
    expect(r.findings).toEqual([{ path: 'detalleServicio[0].montoTotalLinea', message: 'is 101800 but montoTotal + impuestoNeto is 101700.00000' }]);
  });

  it('a line whose input fails its schema: its finding alone, no "is required" for the figures it leaves out', () => {
    const b = decisionsOf(validInvoice());
    b.detalleServicio[1].cantidad = 'dos';
    b.detalleServicio[0].precioUnitaro = '1.00'; // an unknown key: the line's figures are computed all the same
    const c = completeBody(b);
    expect(c.incomplete).toEqual(['detalleServicio[1]', 'resumenFactura']);
    expect((c.body as Body).detalleServicio[1].subTotal).toBeUndefined(); // fecr complete prints no guess
    const r = parseDocument(completedInput(b), ISSUER);
    expect(r.findings.map((f) => f.path)).toEqual(['detalleServicio[0].precioUnitaro', 'detalleServicio[1].cantidad']);
  });

  it('a discount above the amount: the rule\'s finding alone (no negative figure, no "is required")', () => {
    const b = decisionsOf(validInvoice());
    b.detalleServicio[0].descuento = '200000.00';
    const r = parseDocument(completedInput(b), ISSUER);
    expect(r.findings.map((f) => `${f.path}: ${f.message}`)).toEqual([
      'detalleServicio[0].descuento: must not exceed cantidad × precioUnitario; the figures computed from it are checked once it is fixed',
    ]);
  });

  it('a tarifa that does not fit its codigoTarifa: one finding, at tarifa (the figures use the rate of codigoTarifa)', () => {
    const b = decisionsOf(validInvoice());
    b.detalleServicio[0].impuesto[0].tarifa = '4';
    const r = parseDocument(completedInput(b), ISSUER);
    expect(r.findings.map((f) => f.path)).toEqual(['detalleServicio[0].impuesto[0].tarifa']);
    // An IVA entry without tarifa takes the rate of its codigoTarifa.
    delete b.detalleServicio[0].impuesto[0].tarifa;
    expect((completeBody(b).body as Body).detalleServicio[0].impuesto[0].tarifa).toBe('13');
    expect(parseDocument(completedInput(b), ISSUER).findings).toEqual([]);
  });

  it('never throws, whatever the input', () => {
    for (const v of [null, 1, 'x', [], {}, { detalleServicio: 'x' }, { detalleServicio: [null, 1, { impuesto: [null] }] }, { detalleServicio: [{}], resumenFactura: 1, otrosCargos: {} }])
      expect(() => completeBody(v)).not.toThrow();
  });
});

/** `fecr …` as a child process from the sources, with its own HOME (and data dir) and nothing of the developer's environment. */
function fecr(args: string[], cwd: string, stdin?: string): { code: number | null; stdout: string; stderr: string } {
  const entry = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), entry, ...args], {
    cwd,
    encoding: 'utf8',
    input: stdin,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1', FECR_NO_KEYCHAIN: '1', FECR_DATA_DIR: join(cwd, 'data') },
    timeout: 90_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The XML without what differs between two signings of one document: the signature and the clave (its security code). */
const figuresAndStructure = (xml: string): string =>
  xml.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '').replace(/<Clave>\d{50}<\/Clave>/, '<Clave/>');

describe('the three-rate factura written with decisions only (spawned fecr, local profile)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-complete-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeAll(() => {
    writeFileSync(join(dir, 'factura.json'), readFileSync(DECISIONS));
    writeFileSync(join(dir, 'completa.json'), readFileSync(COMPLETA));
    writeFileSync(join(dir, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  });

  it('fecr validate: valid', () => {
    const r = fecr(['validate', 'factura.json'], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('valid FE 00100001010000000127 totalComprobante 361850.65050 CRC');
    // As the client API takes it, the figures are required.
    const strict = fecr(['validate', 'factura.json', '--no-complete'], dir);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('detalleServicio[0].subTotal: is required');
  });

  it('fecr complete prints the full body, as written by hand (JSON, 2-space indent), from a file or stdin', () => {
    const r = fecr(['complete', 'factura.json'], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(readFileSync(COMPLETA, 'utf8'));
    const s = fecr(['complete', '-'], dir, readFileSync(DECISIONS, 'utf8'));
    expect(s.stdout).toBe(r.stdout);
  });

  it('fecr complete of a body with a figure it cannot compute: the findings, exit 1, no body', () => {
    const b = read(DECISIONS);
    b.detalleServicio[2].cantidad = 'dos';
    writeFileSync(join(dir, 'mala.json'), JSON.stringify(b));
    const r = fecr(['complete', 'mala.json'], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: cannot compute the figures of detalleServicio[2], resumenFactura: invalid document: 1 finding\n  detalleServicio[2].cantidad: must be a number\n');
  });

  it('fecr send --wait: aceptado, and its signed XML is the hand-written body\'s (figures and structure)', () => {
    const reg = fecr(['emisor', 'register', 'issuer.json'], dir);
    expect(reg.code, reg.stderr).toBe(0);
    const sent = fecr(['send', 'factura.json', '--wait'], dir);
    expect(sent.code, sent.stderr).toBe(0);
    const [clave, estado] = sent.stdout.trim().split('\n');
    expect(estado).toBe('aceptado');
    const signed = fecr(['download', clave!, '--out', '-'], dir);
    expect(signed.code, signed.stderr).toBe(0);
    const byHand = fecr(['xml', 'completa.json', '--issuer', 'issuer.json'], dir);
    expect(byHand.code, byHand.stderr).toBe(0);
    expect(signed.stdout).toContain('<TotalComprobante>361850.65050</TotalComprobante>');
    expect(figuresAndStructure(signed.stdout.trim())).toBe(figuresAndStructure(byHand.stdout.trim()));
  }, 120_000);
});

describe('fecr batch (JSON, JSONL): bodies of decisions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-complete-batch-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['jsonl', 'json'])('--dry-run of a .%s of decision bodies: every document valido', async (ext) => {
    const a = read(DECISIONS);
    const b = { ...read(DECISIONS), numeroReferencia: 128 };
    writeFileSync(join(dir, `docs.${ext}`), ext === 'jsonl' ? `${JSON.stringify(a)}\n${JSON.stringify(b)}\n` : JSON.stringify([a, b]));
    const r = await runCli(['batch', `docs.${ext}`, '--dry-run'], { cwd: dir, env: { HOME: dir } });
    expect(r.code, r.stderr).toBe(0);
    const results = readFileSync(join(dir, `docs.${ext}.dry-run.results.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(results.map((x) => x.state)).toEqual(['valido', 'valido']);
  });
});

describe('the client API: the spec\'s required figures, unless ?completar=1', () => {
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
  });
  const post = async (url: string, payload: unknown) => {
    const res = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    return { status: res.statusCode, body: res.json() as any };
  };

  it('a body of decisions: 400 naming the missing figures; with ?completar=1 it is taken', async () => {
    expect((await post('/api/enviar/emisor', makeTestIssuer().issuer)).status).toBe(200);
    const bare = await post('/api/enviar/items', read(DECISIONS));
    expect(bare.status).toBe(400);
    const paths = bare.body.details.map((d: { path: string }) => d.path);
    expect(paths).toContain('detalleServicio[0].subTotal');
    expect(paths).toContain('detalleServicio[2].impuesto[0].monto');
    const completed = await post('/api/enviar/items?completar=1', read(DECISIONS));
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body.clave).toMatch(/^506\d{47}$/);
    // The hand-written body is the same document: the same clave back (idempotent).
    const byHand = await post('/api/enviar/items', read(COMPLETA));
    expect(byHand.body.clave).toBe(completed.body.clave);
  });

  it('the OpenAPI document names the parameter', () => {
    const op = (buildOpenApi().paths as any)['/api/enviar/items'].post;
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'completar', in: 'query', 'x-fecr-extension': true }));
  });
});
