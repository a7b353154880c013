// End to end: `fecr serve` as a real child process (auth server, client API, worker, emulator), an account made with
// the CLI, a local webhook receiver verifying Standard Webhooks signatures, the five kinds of documents submitted
// through the client API; each webhook's MensajeHacienda, the signed XML (xmllint --schema, xmlsec1) and the PDF
// (pdftotext, pdftoppm) checked; SIGTERM stops the service with exit code 0.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMensajeHaciendaXml } from '../src/core/xml/parse-mensaje.js';
import { ALL_KINDS, fixtureBody } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { pngInk, postJson, startWebhookReceiver, waitUntil, type WebhookReceiver } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { serviceStoreEnv } from './helpers/stores.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

type Kind = keyof typeof ALL_KINDS;
const XSD: Record<Kind, string> = {
  FE: 'FacturaElectronica_V4.4.xsd',
  'FE exonerada': 'FacturaElectronica_V4.4.xsd',
  NC: 'NotaCreditoElectronica_V4.4.xsd',
  'TE sin receptor': 'TiqueteElectronico_V4.4.xsd',
  'TE extranjero': 'TiqueteElectronico_V4.4.xsd',
  ND: 'NotaDebitoElectronica_V4.4.xsd',
  FEC: 'FacturaElectronicaCompra_V4.4.xsd',
  FEE: 'FacturaElectronicaExportacion_V4.4.xsd',
  REP: 'ReciboElectronicoPago_V4.4.xsd',
};
const ROOT: Record<Kind, string> = {
  FE: 'FacturaElectronica',
  'FE exonerada': 'FacturaElectronica',
  NC: 'NotaCreditoElectronica',
  'TE sin receptor': 'TiqueteElectronico',
  'TE extranjero': 'TiqueteElectronico',
  ND: 'NotaDebitoElectronica',
  FEC: 'FacturaElectronicaCompra',
  FEE: 'FacturaElectronicaExportacion',
  REP: 'ReciboElectronicoPago',
};
const KINDS = Object.keys(ALL_KINDS) as Kind[];
const xsdPath = (file: string) => new URL(`../schemas/xsd/2026/v4.4/${file}`, import.meta.url).pathname;

const BASE = 'empresa-e2e';
const PASSWORD = 'clave-de-prueba-e2e-2026';

const dir = tempDir('fecr-e2e-');
const dataDir = join(dir, 'data');
const work = join(dir, 'work');
// SQLite in the data dir, or (postgres test project) a fresh PostgreSQL database for serve and the CLI alike.
const storeEnv = await serviceStoreEnv();
const env = { HOME: dir, FECR_DATA_DIR: dataDir, FECR_NO_KEYCHAIN: '1', ...storeEnv.env };

let serve: Spawned<{ authUrl: string; baseUrl: string; haciendaUrl?: string }> | undefined;
let receiver: WebhookReceiver;
let token: string;
const claves = new Map<Kind, string>();

function run(cmd: string, args: string[]): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** The tail of the service's log, for failure messages. */
const logTail = () => (serve ? serve.stderr().split('\n').slice(-30).join('\n') : '');

async function file(clave: string, fileType?: 'XML' | 'PDF' | 'RESPUESTA'): Promise<Buffer> {
  const r = await postJson(`${serve!.ready.baseUrl}/api/consultar/archivo`, fileType ? { claveHacienda: clave, fileType } : { claveHacienda: clave }, token);
  expect(r.status, r.text.slice(0, 500)).toBe(200);
  expect(r.body.status).toBe('success');
  const data = r.body.data as { claveHacienda: string; fileType: string; encodedFile: string };
  expect([data.claveHacienda, data.fileType, typeof data.encodedFile]).toEqual([clave, fileType ?? 'XML', 'string']);
  return Buffer.from(data.encodedFile, 'base64');
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  mkdirSync(work, { recursive: true });
  serve = await spawnFecr(['serve', '--data-dir', dataDir, '--emulator-delay', '50'], { env });
});

afterAll(async () => {
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) await serve.stop('SIGKILL');
  await receiver?.close();
  await storeEnv.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('fecr serve end to end (child process)', () => {
  it('prints one JSON line with the auth, API and Hacienda URLs on 127.0.0.1', () => {
    const { authUrl, baseUrl, haciendaUrl } = serve!.ready;
    for (const u of [authUrl, baseUrl, haciendaUrl]) expect(u).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new Set([authUrl, baseUrl, haciendaUrl]).size).toBe(3);
  });

  it('an account made with the CLI (while serve runs) logs in on the auth server', async () => {
    const created = await runCli(['accounts', 'create', BASE, '--password-stdin', '--webhook-url', receiver.url, '--data-dir', dataDir], { env, stdin: `${PASSWORD}\n` });
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    receiver.secret = secret;

    const login = await postJson(`${serve!.ready.authUrl}/login`, { base: BASE, password: PASSWORD });
    expect(login.status, login.text).toBe(200);
    expect(login.body).toEqual({ token: expect.any(String), expires_in: 28800, token_type: 'Bearer' });
    token = login.body.token;
    const wrong = await postJson(`${serve!.ready.authUrl}/login`, { base: BASE, password: 'otra-clave-cualquiera' });
    expect(wrong.status).toBe(401);
  });

  it('registers the issuer with a fresh test .p12', async () => {
    const { issuer } = makeTestIssuer();
    const r = await postJson(`${serve!.ready.baseUrl}/api/enviar/emisor`, issuer, token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('success');
  });

  it('submits each kind (the five of the spec, ND, FEC, FEE, REP) → 200 success with a 50-digit clave', async () => {
    for (const kind of KINDS) {
      const r = await postJson(`${serve!.ready.baseUrl}/api/enviar/items`, fixtureBody(ALL_KINDS[kind]), token);
      expect([kind, r.status], r.text).toEqual([kind, 200]);
      expect(r.body).toEqual({ status: 'success', message: expect.any(String), clave: expect.stringMatching(/^\d{50}$/) });
      claves.set(kind, r.body.clave);
    }
    expect(new Set(claves.values()).size).toBe(KINDS.length);
  });

  it('a signed webhook arrives for each: {folioId, folioType INVOICE, folioDetails XML} with MensajeHacienda 1 and the right Clave', async () => {
    const want = [...claves.values()];
    await waitUntil(() => want.every((c) => receiver.claves().has(c)), {
      timeoutMs: 40_000,
      label: 'a verified webhook per kind',
      describe: () => `got ${[...receiver.claves()].length}; rejected ${receiver.received.filter((r) => !r.verified).map((r) => r.error).join('; ')}\n${logTail()}`,
    });
    expect(receiver.received.filter((r) => !r.verified)).toEqual([]);
    for (const [kind, clave] of claves) {
      const got = receiver.received.filter((r) => r.clave === clave);
      expect(got.length, kind).toBeGreaterThanOrEqual(1);
      // One delivery per document: retries of it keep its webhook-id.
      expect(new Set(got.map((g) => g.headers['webhook-id'])).size, kind).toBe(1);
      const { payload, headers } = got[0]!;
      expect(headers['webhook-timestamp']).toMatch(/^\d+$/);
      expect(headers['webhook-signature']).toMatch(/^v1,/);
      expect(payload).toEqual({ folioId: clave, folioType: 'INVOICE', folioDetails: [{ fileType: 'XML', encodedFile: expect.any(String) }] });
      const mh = Buffer.from(payload.folioDetails[0].encodedFile, 'base64').toString('utf8');
      const m = parseMensajeHaciendaXml(mh);
      expect([kind, m.mensaje, m.clave]).toEqual([kind, 1, clave]);
      // The answer names the comprobante's Emisor: an FEC's is the seller (the issuer is its Receptor).
      expect(m.numeroCedulaEmisor).toBe(kind === 'FEC' ? '301230456' : '3101123456');
      // The same MensajeHacienda is what the API serves as RESPUESTA.
      expect((await file(clave, 'RESPUESTA')).toString('utf8')).toBe(mh);
      // And it is a valid MensajeHacienda v4.4.
      const f = join(work, `mh-${clave}.xml`);
      writeFileSync(f, mh);
      const v = run('xmllint', ['--noout', '--schema', xsdPath('MensajeHacienda_V4.4.xsd'), f]);
      expect(v.status, v.out).toBe(0);
    }
  });

  it('the downloaded XML of each passes xmllint --schema (official v4.4 XSD) and xmlsec1 --verify', async () => {
    for (const [kind, clave] of claves) {
      const xml = (await file(clave)).toString('utf8');
      expect(xml, kind).toContain(`<${ROOT[kind]} `);
      expect(xml).toContain(`<Clave>${clave}</Clave>`);
      const f = join(work, `${clave}.xml`);
      writeFileSync(f, xml);
      const v = run('xmllint', ['--noout', '--schema', xsdPath(XSD[kind]), f]);
      expect([kind, v.status], v.out).toEqual([kind, 0]);
      expect(v.out).toContain('validates');
      const s = xmlsecVerify(xml);
      expect([kind, s.ok], s.output).toEqual([kind, true]);
    }
  });

  it('the PDF of each renders a non-blank page (pdftoppm) and carries the clave and the state (pdftotext)', async () => {
    for (const [kind, clave] of claves) {
      const pdf = await file(clave, 'PDF');
      expect(pdf.subarray(0, 5).toString('latin1'), kind).toBe('%PDF-');
      const f = join(work, `${clave}.pdf`);
      writeFileSync(f, pdf);
      const text = run('pdftotext', ['-layout', f, '-']);
      expect(text.status, text.out).toBe(0);
      expect(text.out.replace(/\s+/g, ''), kind).toContain(clave);
      expect(text.out).toContain('Aceptado');
      const prefix = join(work, `${clave}-page`);
      const r = run('pdftoppm', ['-png', '-r', '40', '-f', '1', '-l', '1', '-singlefile', f, prefix]);
      expect(r.status, r.out).toBe(0);
      const { width, height, dark } = pngInk(readFileSync(`${prefix}.png`));
      expect(width).toBeGreaterThan(250); // A4/letter at 40 dpi: about 330 × 440
      expect(height).toBeGreaterThan(300);
      const ink = dark / (width * height);
      expect(ink, `${kind}: ink ${ink}`).toBeGreaterThan(0.01);
      expect(ink, `${kind}: ink ${ink}`).toBeLessThan(0.6);
    }
  });

  it('SIGTERM stops the service gracefully: exit code 0, and the ports are closed', async () => {
    const { authUrl, baseUrl } = serve!.ready;
    const exited = await Promise.race([serve!.stop('SIGTERM'), new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
    expect(exited, logTail()).toBe(0);
    for (const u of [authUrl, baseUrl]) await expect(postJson(`${u}/login`, {})).rejects.toThrow();
  });
});
