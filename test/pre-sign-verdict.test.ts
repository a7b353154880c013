// Issue 36, item 5, one verdict before signing: what `fecr validate` finds that Hacienda rejects (a finding with a
// rejecting code of the rules table: -400 a CABYS code not in the catalogue) is refused by `fecr send`, `fecr batch`
// and POST /api/enviar/items before anything is signed or numbered; `--force` (the API's `?forzar=1`) sends it anyway,
// and the emulator rejects it -400. Warnings stay warnings. The send is the built binary (bin/fecr.js), spawned with
// its own HOME.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haciendaChecks } from '../src/core/rules/document-checks.js';
import { CODIGOS, TEXTOS } from '../src/core/rules/hacienda-codes.js';
import { parseDocument } from '../src/core/document.js';
import { RULES } from '../src/emulator/rules.js';
import { RemoteBackend } from '../src/client/remote-backend.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import { registerIssuer } from '../src/service/issuers.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { fixtureBody, makeServiceContext, type TestContext } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { runBin, type BinRun } from './helpers/bin.js';
import { makeTestIssuer } from './helpers/issuer.js';

const home = tempDir('fecr-pre-sign-');
const work = join(home, 'work');
const env = { HOME: home, FECR_NO_KEYCHAIN: '1', NO_COLOR: '1' };
const issuer = makeTestIssuer();
const CABYS_400 = `detalleServicio[0].codigo: -400 ${TEXTOS.cabys400('1')}`;

/** The FE fixture without numeroReferencia (fecr numbers it), its first line's CABYS code `codigo` when given. */
function body(codigo?: string): Record<string, any> {
  const b = fixtureBody('01-fe-servicios-13');
  delete b.numeroReferencia;
  if (codigo) b.detalleServicio[0].codigo = codigo;
  return b;
}

function fecr(args: string[]): Promise<BinRun> {
  return runBin(args, { cwd: work, env });
}

/** The consecutivo's number (the clave's last 10 digits of the consecutivo). */
const numero = (clave: string) => Number(clave.slice(31, 41));

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(issuer.issuer));
  writeFileSync(join(work, 'bad.json'), JSON.stringify(body('9999999999999')));
  writeFileSync(join(work, 'good.json'), JSON.stringify(body()));
  const r = await fecr(['emisor', 'register', 'issuer.json']);
  expect(r.code, r.stderr).toBe(0);
}, 60_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('fecr send (spawned bin/fecr.js): refused before signing, the number kept', () => {
  it('validate says -400; send exits 1 with the finding and signs nothing; the next document is …0001; --force sends it and Hacienda rejects it -400', async () => {
    const v = await fecr(['validate', 'bad.json', '--issuer', 'issuer.json']);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(CABYS_400);

    const bad = await fecr(['send', 'bad.json', '--wait']);
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(`error: invalid document: 1 finding\n  ${CABYS_400}\n`);

    const good = await fecr(['send', 'good.json', '--wait', '--json']);
    expect(good.code, good.stderr).toBe(0);
    const g = JSON.parse(good.stdout) as { clave: string; estado: string };
    expect(g.estado).toBe('aceptado');
    expect(g.clave.slice(21, 41)).toBe('00100001010000000001');

    const forced = await fecr(['send', 'bad.json', '--wait', '--force']);
    expect(forced.code, forced.stderr).toBe(3);
    const [clave, estado] = forced.stdout.trim().split('\n');
    expect(estado).toBe('rechazado');
    expect(numero(clave!)).toBe(2);
    expect(forced.stderr).toContain(`error: Hacienda rejected ${clave}\n  rechazado: -400 ${TEXTOS.cabys400('1')}\n`);
  }, 120_000);

  it('a warning only (an activity code fecr\'s incomplete catalogue lacks, -9010) does not refuse: sent and numbered', async () => {
    writeFileSync(join(work, 'aviso.json'), JSON.stringify({ ...body(), codigoActividad: '9609.9' }));
    // (validate judges a body as the API takes it: with its numeroReferencia)
    writeFileSync(join(work, 'aviso-1.json'), JSON.stringify({ ...body(), codigoActividad: '9609.9', numeroReferencia: 1 }));
    const v = await fecr(['validate', 'aviso-1.json', '--issuer', 'issuer.json', '--json']);
    expect(JSON.parse(v.stdout)).toMatchObject({ valid: true, warnings: [expect.objectContaining({ path: 'codigoActividad', message: expect.stringMatching(/^-9010 /) })] });
    const r = await fecr(['send', 'aviso.json']);
    expect(r.code, r.stderr).toBe(0);
    expect(numero(r.stdout.trim())).toBe(3);
  }, 60_000);
});

describe('fecr batch: the row is invalido and takes no number; --force sends it', () => {
  it('bad row refused with its finding, the good row after it gets the next number', async () => {
    writeFileSync(join(work, 'lote.jsonl'), `${JSON.stringify(body('9999999999999'))}\n${JSON.stringify(body())}\n`);
    const r = await runCli(['batch', 'lote.jsonl'], { env, cwd: work });
    expect(r.code, r.stderr).toBe(1);
    const rows = readFileSync(join(work, 'lote.jsonl.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const byRow = new Map(rows.map((x) => [x.row, x]));
    expect(byRow.get(1)).toMatchObject({ state: 'invalido', errors: expect.arrayContaining([{ path: 'detalleServicio[0].codigo', message: `-400 ${TEXTOS.cabys400('1')}` }]) });
    expect(byRow.get(1)!.clave).toBeUndefined();
    expect(byRow.get(2)).toMatchObject({ state: 'enviado', numeroReferencia: 4 });

    writeFileSync(join(work, 'forzado.jsonl'), `${JSON.stringify(body('9999999999999'))}\n`);
    const f = await runCli(['batch', 'forzado.jsonl', '--force'], { env, cwd: work });
    expect(f.code, f.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(work, 'forzado.jsonl.results.jsonl'), 'utf8').trim())).toMatchObject({ row: 1, state: 'enviado', numeroReferencia: 5 });

    const dry = await runCli(['batch', 'forzado.jsonl', '--dry-run', '--force'], { env, cwd: work });
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('--dry-run sends nothing: it cannot be combined with --force');
  }, 120_000);
});

describe('POST /api/enviar/items: the spec\'s 400 with the findings; ?forzar=1 signs it', () => {
  let t: TestContext;
  let app: ReturnType<typeof buildApiApp>;
  let baseUrl: string;
  let token: string;
  const AUTH_URL = 'http://auth.fecr.test';
  const post = async (path: string, b: unknown) => {
    const res = await request(`${baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(b) });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  };

  beforeAll(async () => {
    t = await makeServiceContext();
    await ensureSigningKey(t.ctx);
    const { account } = await createAccount(t.ctx, { base: 'empresa-v', password: 'contrasena-v-123' });
    await registerIssuer(t.ctx, account.id, { ...issuer.issuer });
    token = (await issueToken(t.ctx, { base: 'empresa-v' }, { issuer: AUTH_URL })).token;
    app = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: AUTH_URL, jwks: 'local' }) });
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('400 bad_request with one finding per path in Hacienda\'s words; nothing stored; forzar=1 → 200 and a clave', async () => {
    const r = await post('/api/enviar/items', { ...body('9999999999999'), numeroReferencia: 7 });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'bad_request', message: 'Campos requeridos faltantes', details: [{ path: 'detalleServicio[0].codigo', message: `-400 ${TEXTOS.cabys400('1')}` }] });
    expect(await t.ctx.store.db.selectFrom('documents').select('id').execute()).toEqual([]);

    // A body with another finding too: every finding in one 400, the -400 among them (as validate lists them).
    const two = await post('/api/enviar/items', { ...body('9999999999999'), numeroReferencia: 7, condicionVenta: '02' });
    expect(two.status).toBe(400);
    expect(two.body.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(['detalleServicio[0].codigo', 'plazoCredito']));

    const forced = await post('/api/enviar/items?forzar=1', { ...body('9999999999999'), numeroReferencia: 7 });
    expect(forced.status, JSON.stringify(forced.body)).toBe(200);
    expect(numero(forced.body.clave)).toBe(7);
  });

  it('the remote backend (fecr send --force against fecr serve) asks with ?forzar=1', async () => {
    const b = new RemoteBackend({ baseUrl, token });
    try {
      await expect(b.submit({ ...body('9999999999999'), numeroReferencia: 8 })).rejects.toMatchObject({ code: 'invalid', findings: [{ path: 'detalleServicio[0].codigo' }] });
      const r = await b.submit({ ...body('9999999999999'), numeroReferencia: 8 }, { force: true });
      expect(numero(r.clave)).toBe(8);
    } finally {
      await b.close?.();
    }
  });
});

describe('the refusing findings are the rules table\'s rejections', () => {
  it('each code haciendaChecks refuses with is a rechazo of RULES with Hacienda\'s evidence; each warning an aviso', () => {
    const b = { ...body('9999999999999'), numeroReferencia: 1, fechaEmision: '2099-01-15T10:30:00-06:00' };
    const parsed = parseDocument(b, issuer.issuer);
    expect(parsed.doc).toBeDefined();
    const r = haciendaChecks(parsed.doc!, { now: new Date(), hasCabys: () => false });
    const codes = [...new Set(r.findings.map((f) => Number(f.message.split(' ')[0])))];
    expect(codes.sort()).toEqual([CODIGOS.CABYS, CODIGOS.FECHA_EMISION].sort());
    for (const c of codes) {
      const rule = RULES.find((x) => x.codigo === c)!;
      expect(rule.verdict.startsWith('rechazo'), String(c)).toBe(true);
      expect(rule.source).toMatch(/NOTES §6\.3/);
    }
    const aviso = haciendaChecks({ ...parsed.doc!, fechaEmision: '2026-03-02T09:15:00-06:00', codigoActividadEmisor: '9609.9' }, { now: new Date(), hasCabys: () => true });
    expect(aviso.findings).toEqual([]);
    expect(RULES.find((x) => x.codigo === Number(aviso.warnings[0]!.message.split(' ')[0]))!.verdict).toBe('aviso');
  });
});
