// Contingency (issue 30), local mode, real parts: a local profile whose Hacienda (`haciendaUrl`, env local) is a port
// where nothing listens, with `contingencia auto`: 5 sends are signed in situación 3 (the clave's 42nd character) and
// queued; a real `fecr hacienda serve` then starts on that port and `fecr contingency send` takes all 5 to aceptado,
// each POSTed once (the emulator's own count); two provisional (paper) comprobantes, an FE and an NC, are recorded
// and replaced by electronic ones in situación 2 with CodigoReferencia 05 / TipoDocIR 08, aceptado and valid against
// the 2026 XSDs (xmllint); `fecr contingency status` is empty at the end. And the pure rules (core/contingency.ts).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTHING_OWED } from '../src/commands/contingency/status.js';
import { parseProvisional, replacementBody, urgencyOf, type Provisional } from '../src/core/contingency.js';
import { validInvoice } from './helpers/bodies.js';
import { runCli, tempDir } from './helpers/cli.js';
import { getJson } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { freePort } from './helpers/bin.js';

const dir = tempDir('fecr-contingency-');
const env = { HOME: dir, FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => runCli([...args, '--profile', 'outage'], { env, cwd: dir });
const XSD = (file: string) => new URL(`../schemas/xsd/2026/v4.4/${file}`, import.meta.url).pathname;

let port: number;
let served: Spawned<{ url: string }> | undefined;

beforeAll(async () => {
  port = await freePort();
  writeFileSync(join(dir, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  for (let i = 1; i <= 5; i++) writeFileSync(join(dir, `b${i}.json`), JSON.stringify({ ...validInvoice(), numeroReferencia: i }));
  const set = await fecr(['config', 'set', 'mode=local', `dataDir=${join(dir, 'data')}`, `haciendaUrl=http://127.0.0.1:${port}`, 'contingencia=auto']);
  expect(set.code, set.stderr).toBe(0);
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await served?.stop();
});

describe('Hacienda unreachable, contingencia auto, then back (local mode, a real emulator on the same port)', () => {
  const claves: string[] = [];
  const batchClaves: string[] = [];

  it('5 sends while nothing answers: situación 3 in each clave, queued, listed as owed', async () => {
    for (let i = 1; i <= 5; i++) {
      const r = await fecr(['send', `b${i}.json`]);
      expect(r.code, r.stderr).toBe(0);
      const clave = r.stdout.trim();
      expect(clave).toMatch(/^\d{50}$/);
      // ANEXOS p.66-67: the 42nd character is the situación (core/clave.ts: after 3 + 6 + 12 + 20 characters).
      expect(clave.charAt(41)).toBe('3');
      expect(clave.slice(21, 41)).toBe(`001000010100000000${String(i).padStart(2, '0')}`);
      expect(r.stderr).toContain('signed in situación 3 (sin internet, contingencia auto)');
      expect(r.stderr).toContain(`connection refused by 127.0.0.1:${port}`);
      claves.push(clave);
    }
    // A batch too: the reachability answer is kept for 10 s, each row signed in situación 3.
    writeFileSync(join(dir, 'offline.jsonl'), [201, 202].map((n) => JSON.stringify({ ...validInvoice(), numeroReferencia: n })).join('\n') + '\n');
    const batch = await fecr(['batch', 'offline.jsonl']);
    expect(batch.code, batch.stderr).toBe(0);
    expect(batch.stderr.match(/signed in situación 3/g)).toHaveLength(1);
    const rows = readFileSync(join(dir, 'offline.jsonl.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { clave: string });
    expect(rows.map((x) => x.clave.charAt(41))).toEqual(['3', '3']);
    batchClaves.push(...rows.map((x) => x.clave));
    // The same body again is the same document (the situación auto chose is not part of its identity).
    const again = await fecr(['send', 'b1.json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(claves[0]);
    expect(again.stderr).toContain('already sent as');
    const s = await fecr(['status', claves[0]!, '--json']);
    expect(s.code).toBe(8);
    expect(JSON.parse(s.stdout).estado).toBe('pendiente');
    const owed = await fecr(['contingency', 'status', '--json']);
    expect(owed.code, owed.stderr).toBe(0);
    const j = JSON.parse(owed.stdout) as { plazoHoras: number; documentos: { clave: string; situacion: string; estado: string }[]; provisionales: unknown[] };
    expect(j.plazoHoras).toBe(48);
    expect(j.documentos.map((d) => [d.clave, d.situacion, d.estado])).toEqual([...claves, ...batchClaves].map((c) => [c, '3', 'pendiente']));
    expect(j.provisionales).toEqual([]);
  }, 120_000);

  it('2 provisional comprobantes recorded (FE and NC), one past the 48 h term: listed with a warning for it', async () => {
    const old = new Date(Date.now() - 72 * 3_600_000).toISOString();
    const recent = new Date(Date.now() - 3_600_000).toISOString();
    writeFileSync(
      join(dir, 'provisionales.json'),
      JSON.stringify([
        { numero: 'P-0001', fechaEmision: old, emisor: '3101123456', receptor: 'BANCO NACIONAL DE COSTA RICA', totalComprobante: '105939.195' },
        { numero: 'P-0002', fechaEmision: recent, emisor: '3101123456', totalComprobante: 697775, kind: 'NC' },
      ]),
    );
    const r = await fecr(['contingency', 'record', '--file', 'provisionales.json', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const recorded = JSON.parse(r.stdout) as { id: number; kind: string; totalComprobante: string; created: boolean }[];
    expect(recorded.map((p) => [p.kind, p.totalComprobante, p.created])).toEqual([['FE', '105939.19500', true], ['NC', '697775.00000', true]]);
    // The same file again records nothing new; another total under a recorded number is refused, naming it.
    const again = await fecr(['contingency', 'record', '--file', 'provisionales.json', '--json']);
    expect((JSON.parse(again.stdout) as { created: boolean }[]).map((p) => p.created)).toEqual([false, false]);
    const clash = await fecr(['contingency', 'record', '--numero', 'P-0001', '--fecha', old, '--emisor', '3101123456', '--total', '1']);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`numero: P-0001 is recorded already with other data (provisional ${recorded[0]!.id})`);
    const bad = await fecr(['contingency', 'record', '--numero', 'P-9', '--fecha', '2026-02-30', '--emisor', '3101123456', '--total', 'mil']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.split('\n').filter((l) => l.startsWith('  ')).sort()).toEqual([
      '  fechaEmision: must be an ISO 8601 date or date-time, e.g. "2026-10-14T09:30:00-06:00"',
      '  totalComprobante: must be a decimal amount, e.g. "11300.00"',
    ]);
    const table = await fecr(['contingency', 'status']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('P-0001');
    expect(table.stdout).toContain('P-0002');
    const warnings = table.stderr.split('\n').filter((l) => l.startsWith('warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: provisional \d+ \(P-0001\) owed since .*: passed 2\d(\.\d)? h ago of the 48 h term/);
  }, 60_000);

  it('Hacienda back: fecr contingency send takes all 5 (and the batch of 2) to aceptado, each received once', async () => {
    served = await spawnFecr<{ url: string }>(['hacienda', 'serve', '--port', String(port), '--delay', '50'], { env: { HOME: join(dir, 'serve-home') } });
    expect(served.ready.url).toBe(`http://127.0.0.1:${port}`);
    const r = await fecr(['contingency', 'send', '--timeout', '60', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const all = [...claves, ...batchClaves].sort();
    expect((JSON.parse(r.stdout) as { clave: string; estado: string }[]).sort((a, b) => a.clave.localeCompare(b.clave))).toEqual(all.map((clave) => ({ clave, estado: 'aceptado' })));
    expect(r.stderr).toContain('7 sent or followed: 7 aceptado, 0 rechazado, 0 error, 0 not decided yet');
    // The body sent again now (Hacienda answering, so situación 1 would be chosen) is still that document.
    const again = await fecr(['send', 'b2.json']);
    expect(again.stdout.trim()).toBe(claves[1]);
    const recs = ((await getJson(`${served.ready.url}/_emulator/receptions`)).body as { receptions: { clave: string; acceptedPosts: number; duplicatePosts: number }[] }).receptions;
    expect(recs.map((x) => [x.clave, x.acceptedPosts, x.duplicatePosts]).sort()).toEqual(all.map((c) => [c, 1, 0]));
  }, 120_000);

  it('each provisional comprobante replaced: situación 2, CodigoReferencia 05 / TipoDocIR 08, aceptado, XSD-valid; nothing owed then', async () => {
    const owed = JSON.parse((await fecr(['contingency', 'status', '--json'])).stdout) as { provisionales: { id: number; numero: string; fechaEmision: string; kind: string }[]; documentos: unknown[] };
    expect(owed.documentos).toEqual([]);
    const [fe, nc] = owed.provisionales;
    expect([fe!.kind, nc!.kind]).toEqual(['FE', 'NC']);
    const feBody: Record<string, unknown> = validInvoice();
    delete feBody.numeroReferencia;
    writeFileSync(join(dir, 'fe.json'), JSON.stringify(feBody));
    const ncBody = JSON.parse(readFileSync(new URL('../fixtures/documents/09-nc-devolucion.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    delete ncBody.numeroReferencia;
    writeFileSync(join(dir, 'nc.json'), JSON.stringify(ncBody));
    // A body of another kind than the provisional comprobante's is refused, with the field.
    const wrong = await fecr(['contingency', 'replace', String(nc!.id), 'fe.json']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('tipoDoc: must be the provisional comprobante\'s kind (NC)');
    for (const [p, file, xsd, root] of [
      [fe!, 'fe.json', 'FacturaElectronica_V4.4.xsd', 'FacturaElectronica'],
      [nc!, 'nc.json', 'NotaCreditoElectronica_V4.4.xsd', 'NotaCreditoElectronica'],
    ] as const) {
      const r = await fecr(['contingency', 'replace', String(p.id), file, '--wait', '--timeout', '60']);
      expect(r.code, r.stderr).toBe(0);
      const [clave, estado] = r.stdout.trim().split('\n');
      expect(estado).toBe('aceptado');
      expect(clave!.charAt(41)).toBe('2');
      const xmlFile = join(dir, `${p.numero}.xml`);
      const d = await fecr(['download', clave!, '--type', 'XML', '--out', xmlFile]);
      expect(d.code, d.stderr).toBe(0);
      const xml = readFileSync(xmlFile, 'utf8');
      expect(xml).toContain(`<${root} `);
      expect(xml).toContain(
        `<InformacionReferencia><TipoDocIR>08</TipoDocIR><Numero>${p.numero}</Numero><FechaEmisionIR>`,
      );
      expect(xml).toMatch(new RegExp(`<Numero>${p.numero}</Numero><FechaEmisionIR>[^<]+</FechaEmisionIR><Codigo>05</Codigo><Razon>Sustituye comprobante provisional por contingencia</Razon>`));
      const lint = spawnSync('xmllint', ['--noout', '--schema', XSD(xsd), xmlFile], { encoding: 'utf8' });
      expect(lint.status, lint.stderr).toBe(0);
      // Replaced already: a second replacement is refused, naming the document.
      const twice = await fecr(['contingency', 'replace', String(p.id), file]);
      expect(twice.code).toBe(1);
      expect(twice.stderr).toContain(`is replaced already by ${clave} (aceptado)`);
    }
    // The NC kept its own reference to the FE it corrects beside the provisional one.
    expect(readFileSync(join(dir, 'P-0002.xml'), 'utf8')).toContain('<TipoDocIR>01</TipoDocIR>');
    const end = await fecr(['contingency', 'status']);
    expect(end.code, end.stderr).toBe(0);
    expect(end.stdout.trim()).toBe(NOTHING_OWED);
    expect(end.stderr).toBe('');
    const recs = ((await getJson(`${served!.ready.url}/_emulator/receptions`)).body as { receptions: { acceptedPosts: number; duplicatePosts: number }[] }).receptions;
    expect(recs).toHaveLength(9);
    for (const x of recs) expect([x.acceptedPosts, x.duplicatePosts]).toEqual([1, 0]);
  }, 120_000);

  it('--situacion on send and batch: written into the clave (auto does not apply), a body that says another is refused', async () => {
    writeFileSync(join(dir, 'b6.json'), JSON.stringify({ ...validInvoice(), numeroReferencia: 106 }));
    const ok = await fecr(['send', 'b6.json', '--situacion', '3']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim().charAt(41)).toBe('3');
    writeFileSync(join(dir, 'b7.json'), JSON.stringify({ ...validInvoice(), numeroReferencia: 107, situacion: '2' }));
    const clash = await fecr(['send', 'b7.json', '--situacion', '3']);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain('situacion: is "2" but --situacion is "3"');
    const usage = await fecr(['send', 'b7.json', '--situacion', '4']);
    expect(usage.code).toBe(2);
    writeFileSync(join(dir, 'rows.jsonl'), [108, 109].map((n) => JSON.stringify({ ...validInvoice(), numeroReferencia: n })).join('\n') + '\n');
    const batch = await fecr(['batch', 'rows.jsonl', '--situacion', '3', '--wait']);
    expect(batch.code, batch.stderr).toBe(0);
    const results = readFileSync(join(dir, 'rows.jsonl.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { clave: string; estado: string });
    expect(results.map((x) => [x.clave.charAt(41), x.estado])).toEqual([['3', 'aceptado'], ['3', 'aceptado']]);
    // b6 (situación 3) is owed until accepted: send takes it there, and nothing is owed again.
    expect((await fecr(['contingency', 'send'])).code).toBe(0);
    expect((await fecr(['contingency', 'status'])).stdout).toContain('nothing owed');
  }, 120_000);
});

describe('a remote profile (a real fecr serve): the same verbs over /api/contingencia/…', () => {
  let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;
  const hosted = (args: string[], stdin?: string) => runCli([...args, '--profile', 'hosted'], { env, cwd: dir, ...(stdin !== undefined ? { stdin } : {}) });
  afterAll(async () => {
    await serve?.stop();
  });

  it('record, status, replace (situación 2, 05/08) aceptado, --situacion 3 aceptado, nothing owed', async () => {
    const serverEnv = { HOME: join(dir, 'server-home'), FECR_DATA_DIR: join(dir, 'server-data'), FECR_NO_KEYCHAIN: '1' };
    const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin'], { env: serverEnv, stdin: 'clave-remota-2026\n' });
    expect(acct.code, acct.stderr).toBe(0);
    serve = await spawnFecr(['serve', '--data-dir', serverEnv.FECR_DATA_DIR, '--emulator-delay', '50'], { env: serverEnv });
    expect((await hosted(['config', 'set', 'mode=remote', `authUrl=${serve.ready.authUrl}`, `baseUrl=${serve.ready.baseUrl}`])).code).toBe(0);
    const login = await hosted(['login', '--base', 'acme', '--password-stdin'], 'clave-remota-2026\n');
    expect(login.code, login.stderr).toBe(0);
    expect((await hosted(['emisor', 'register', 'issuer.json'])).code).toBe(0);
    const rec = await hosted(['contingency', 'record', '--numero', 'R-1', '--fecha', new Date().toISOString(), '--emisor', '3101123456', '--total', '105939.195']);
    expect(rec.code, rec.stderr).toBe(0);
    const id = rec.stdout.trim();
    const owed = JSON.parse((await hosted(['contingency', 'status', '--json'])).stdout) as { provisionales: { numero: string }[] };
    expect(owed.provisionales.map((p) => p.numero)).toEqual(['R-1']);
    // doctor of a remote profile says what is owed too (issue 36): a warning, the service's checks hold.
    const doc = await hosted(['doctor']);
    expect(doc.code, doc.stdout + doc.stderr).toBe(0);
    expect(doc.stdout).toMatch(/^warn {2}owed: 1 provisional comprobante not replaced by an accepted document; the oldest since \S+ \(\d+ min ago\); fix: fecr contingency replace ID BODY\.json --profile hosted replaces each provisional comprobante; fecr contingency status --profile hosted lists them$/m);
    writeFileSync(join(dir, 'remote-fe.json'), JSON.stringify({ ...validInvoice(), numeroReferencia: 301 }));
    const r = await hosted(['contingency', 'replace', id, 'remote-fe.json', '--wait', '--timeout', '60']);
    expect(r.code, r.stderr).toBe(0);
    const [clave, estado] = r.stdout.trim().split('\n');
    expect([clave!.charAt(41), estado]).toEqual(['2', 'aceptado']);
    // The same number again in another situación is another body: refused, naming the number (never a second document).
    const s = await hosted(['send', 'remote-fe.json', '--situacion', '3', '--wait']);
    expect(s.code).toBe(1);
    expect(s.stderr).toContain('numeroReferencia');
    writeFileSync(join(dir, 'remote-fe-2.json'), JSON.stringify({ ...validInvoice(), numeroReferencia: 302 }));
    const three = await hosted(['send', 'remote-fe-2.json', '--situacion', '3', '--wait']);
    expect(three.code, three.stderr).toBe(0);
    expect(three.stdout.trim().split('\n')[0]!.charAt(41)).toBe('3');
    const end = await hosted(['contingency', 'status']);
    expect(end.stdout.trim()).toBe(NOTHING_OWED);
  }, 120_000);
});

describe('core/contingency.ts', () => {
  const p: Provisional = { numero: 'P-7', fechaEmision: '2026-10-14T09:30:00-06:00', emisor: '3101123456', receptor: null, totalComprobante: '100.00000', codigoMoneda: 'CRC', kind: 'FE' };

  it('a provisional record: defaults (FE, CRC), tipoDoc codes for the kind, findings at their paths', () => {
    const ok = parseProvisional({ numero: ' 12 ', fechaEmision: '2026-10-14', emisor: 3101123456, totalComprobante: '11300.5', kind: '04' });
    expect(ok).toEqual({ ok: true, value: { numero: '12', fechaEmision: '2026-10-14T00:00:00-06:00', emisor: '3101123456', receptor: null, totalComprobante: '11300.50000', codigoMoneda: 'CRC', kind: 'TE' } });
    const bad = parseProvisional({ numero: 'x', fechaEmision: 'ayer', emisor: '31-01', totalComprobante: '-1', kind: 'REP' }, '[3]');
    expect(bad.ok ? [] : bad.findings.map((f) => f.path)).toEqual(['[3].fechaEmision', '[3].emisor', '[3].totalComprobante', '[3].kind']);
    const unknown = parseProvisional({ numero: 'x', fechaEmision: '2026-10-14', emisor: '1', totalComprobante: '1', clave: 'y' });
    expect(unknown.ok).toBe(false);
  });

  it('the replacing body: situación 2 and the 05/08 reference appended; another issuer, kind or situación refused', () => {
    const r = replacementBody({ tipoDoc: '1', emisor: '3101123456', informacionReferencia: [{ tipoDocIR: '01' }] }, p);
    expect(r).toEqual({
      ok: true,
      body: {
        tipoDoc: '1',
        emisor: '3101123456',
        situacion: '2',
        informacionReferencia: [{ tipoDocIR: '01' }, { tipoDocIR: '08', numero: 'P-7', fechaEmision: p.fechaEmision, codigo: '05', razon: 'Sustituye comprobante provisional por contingencia' }],
      },
    });
    const bare = replacementBody({}, { ...p, kind: 'TE' });
    expect(bare.ok && [bare.body.emisor, bare.body.tipoDoc, bare.body.situacion]).toEqual(['3101123456', '4', '2']);
    const bad = replacementBody({ tipoDoc: '3', emisor: '999', situacion: '1', informacionReferencia: Array(10).fill({}) }, p);
    expect(bad.ok ? [] : bad.findings.map((f) => f.path)).toEqual(['emisor', 'tipoDoc', 'situacion', 'informacionReferencia']);
  });

  it('urgency: ok, near in the last quarter of the term, passed after it', () => {
    const h = 3_600_000;
    expect(urgencyOf(0, 10 * h, 48)).toEqual({ urgency: 'ok', horasRestantes: 38 });
    expect(urgencyOf(0, 40 * h, 48)).toEqual({ urgency: 'near', horasRestantes: 8 });
    expect(urgencyOf(0, 50 * h, 48)).toEqual({ urgency: 'passed', horasRestantes: -2 });
  });
});
