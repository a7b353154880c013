// Issue 26, item 6: validation reports every independent finding in one run. A body with errors of different
// stages (the schema in one line, a rule in the resumen, a figure in another line, Hacienda's catalogue) gets them all
// at once, through the core, `fecr validate` (spawned, its own HOME), `fecr batch --dry-run` and the API's 400; and
// `fecr validate FILE.xml` gives an XSD error with Hacienda's catalogue finding. Never a finding that only
// follows from another (no figure of a line whose cantidad failed the schema, no resumen total that adds it up).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { runCli } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

type Body = Record<string, any>;

/** Three independent errors of three stages: schema (line 1), rule (medio de pago), figure (line 0). */
function threeErrors(): Body {
  const b = validInvoice();
  b.detalleServicio[1].cantidad = 'tres';
  b.resumenFactura.mediosPago[0].tipoMedioPago = '55';
  b.detalleServicio[0].montoTotalLinea = 101800;
  return b;
}
const THREE = ['detalleServicio[0].montoTotalLinea', 'detalleServicio[1].cantidad', 'resumenFactura.mediosPago[0].tipoMedioPago'];

describe('parseDocument: every stage in one run', () => {
  it('a schema error in one line, an unknown medio de pago and a wrong montoTotalLinea in another line: three findings', () => {
    const r = parseDocument(threeErrors(), ISSUER);
    expect(r.ok).toBe(false);
    expect(r.findings.map((f) => f.path)).toEqual(THREE);
    expect(r.findings[0]!.message).toBe('is 101800 but montoTotal + impuestoNeto is 101700.00000');
  });

  it('an unknown key and a bad type in the same line, with a figure off in the other: each once, in path order', () => {
    const b = validInvoice();
    b.detalleServicio[1].precioUnitaro = '1.00';
    b.detalleServicio[1].impuesto[0].monto = 487.695; // a number where the schema wants a string
    b.detalleServicio[0].impuesto[0].monto = '11800.00';
    const r = parseDocument(b, ISSUER);
    expect(r.findings.map((f) => f.path)).toEqual([
      'detalleServicio[0].impuesto[0].monto',
      // the line's own figures follow from the tax monto that did not parse: not judged
      'detalleServicio[1].impuesto[0].monto',
      'detalleServicio[1].precioUnitaro',
    ]);
  });

  it('no finding that only follows from a schema finding: a line whose cantidad failed leaves its figures and the resumen unjudged', () => {
    const b = validInvoice();
    b.detalleServicio[0].cantidad = 'dos';
    b.detalleServicio[0].montoTotalLinea = 1; // would be off, but computed from the cantidad that did not parse
    b.resumenFactura.totalComprobante = '1.00'; // adds up that line
    const r = parseDocument(b, ISSUER);
    expect(r.findings.map((f) => f.path)).toEqual(['detalleServicio[0].cantidad']);
  });

  it('a rule finding does not hide the figures: an impossible fechaEmision with a wrong tax monto', () => {
    const b = validInvoice();
    b.fechaEmision = '2026-02-30T10:00:00-06:00';
    b.detalleServicio[1].impuesto[0].monto = '500.00';
    const r = parseDocument(b, ISSUER);
    expect(r.findings.map((f) => f.path)).toEqual(['detalleServicio[1].impuesto[0].monto', 'fechaEmision']);
  });

  it('a condicionVenta that fails the schema holds back what reads it (plazoCredito, the payment methods), not the rest', () => {
    const b = validInvoice();
    b.condicionVenta = { codigo: '02' };
    delete b.resumenFactura.mediosPago;
    b.receptor.telefono = '12';
    const r = parseDocument(b, ISSUER);
    expect(r.findings.map((f) => f.path)).toEqual(['condicionVenta', 'receptor.telefono']);
  });

  it('repeated findings come once', () => {
    const r = parseDocument(threeErrors(), ISSUER);
    const keys = r.findings.map((f) => `${f.path} ${f.message}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

/** `fecr …` as a child process from the sources, with its own HOME and nothing of the developer's environment. */
function fecr(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const entry = new URL('./helpers/fecr-dev.ts', import.meta.url).pathname;
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), entry, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('fecr validate (spawned): every stage in one run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-one-run-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a JSON body: the three findings and Hacienda\'s -408 for the activity code, exit 1', () => {
    const b = threeErrors();
    b.codigoActividad = '999999';
    writeFileSync(join(dir, 'body.json'), JSON.stringify(b));
    const r = fecr(['validate', 'body.json', '--json'], dir);
    expect(r.code, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as { valid: boolean; findings: { path: string; message: string }[] };
    expect(out.valid).toBe(false);
    expect(out.findings.map((f) => f.path)).toEqual(['codigoActividad', ...THREE]);
    expect(out.findings[0]!.message).toMatch(/^-408 /);
  });

  it('an XML file with an XSD error and an unknown activity code: both, exit 1', () => {
    const body = validInvoice();
    body.codigoActividad = '999999';
    const parsed = parseDocument(body, ISSUER);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));
    // An element the v4.4 schema does not have, right after the Clave.
    const xml = buildComprobanteXml(parsed.doc, parsed.totals).replace('</Clave>', '</Clave><Sobrante>1</Sobrante>');
    writeFileSync(join(dir, 'fe.xml'), xml);
    const r = fecr(['validate', 'fe.xml', '--json'], dir);
    expect(r.code, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as { valid: boolean; findings: { path: string; message: string }[] };
    expect(out.findings.map((f) => f.path)).toEqual(['CodigoActividadEmisor', 'xml']);
    expect(out.findings[0]!.message).toMatch(/^-408 /);
    expect(out.findings[1]!.message).toMatch(/^-1 .*Sobrante/);
  });
});

describe('fecr batch --dry-run: every stage in one result', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fecr-one-run-batch-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the three findings and the -408 of the activity code in the row\'s errors', async () => {
    const b = threeErrors();
    b.codigoActividad = '999999';
    writeFileSync(join(dir, 'bodies.jsonl'), JSON.stringify(b) + '\n');
    const r = await runCli(['batch', 'bodies.jsonl', '--dry-run', '--json'], { cwd: dir, env: { HOME: dir } });
    expect(r.code, r.stderr).toBe(1);
    const [res] = readFileSync(join(dir, 'bodies.jsonl.dry-run.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(res.state).toBe('invalido');
    expect(res.errors.map((e: { path: string }) => e.path)).toEqual(['codigoActividad', ...THREE]);
  });
});

describe('the API: every stage in one 400', () => {
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

  it('POST /api/enviar/items: the three findings in the details of one 400', async () => {
    expect((await post('/api/enviar/emisor', makeTestIssuer().issuer)).status).toBe(200);
    const r = await post('/api/enviar/items', threeErrors());
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: { path: string }) => d.path)).toEqual(THREE);
  });
});
