// Issue 27 (4) "One language, one wording", through the CLI in process (local mode, its own HOME and data dir):
//  - `documents list` and `recibidos list` take the same --state/--since/--issuer; recibidos' old --estado/--desde/
//    --emisor still work (hidden aliases); `documents list --issuer` lists one issuer's documents;
//  - `recibidos show` piped prints tab-separated field/value rows (aligned on a terminal), as the other tables do;
//  - a JSON syntax error names FILE:LINE:COLUMN (fecr validate, fecr send, batch JSONL and JSON arrays);
//  - an unknown CSV column suggests the closest known one;
//  - a wrong PIN is worded once, whichever verb opens the .p12;
//  - no CLI message sends the user to the HTTP API (a service message naming a route names the fecr verb).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { startEmulator } from '../src/emulator/index.js';
import { fixtureBody, FIVE_KINDS } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const root = tempDir('fecr-wording-');
afterAll(() => rmSync(root, { recursive: true, force: true }));
const test = makeTestIssuer();
const OTHER_ID = '3101654321';
const env = { HOME: root, FECR_DATA_DIR: join(root, 'data'), FECR_NO_KEYCHAIN: '1' };
const work = join(root, 'work');
const fecr = (args: string[], opts: { stdin?: string; tty?: boolean } = {}) => runCli(args, { env, cwd: work, ...opts });

/** The first document body of a fixture, made issuer `id`'s, numbered `n`. */
function body(id: string, n: number): string {
  return JSON.stringify({ ...fixtureBody(FIVE_KINDS.FE), emisor: id, numeroReferencia: n });
}

describe('flags named alike: documents list and recibidos list', () => {
  const sent = new Map<string, string>();
  let supplier = '';

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    mkdirSync(env.FECR_DATA_DIR, { recursive: true });
    // Supplier invoices into the embedded emulator's state before the CLI opens it (as test/cli-recibidos does).
    const emu = await startEmulator({ dataFile: join(env.FECR_DATA_DIR, 'emulator.db'), processingDelayMs: 10, validationThreads: 0 });
    const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ receptor: { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre }, cantidad: 2 }),
    });
    const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string }[] };
    mkdirSync(join(work, 'entrada'), { recursive: true });
    for (const d of documentos) writeFileSync(join(work, 'entrada', `${d.clave}.xml`), Buffer.from(d.xml, 'base64'));
    await emu.state.whenIdle();
    await emu.close();
    supplier = String(Number(documentos[0]!.clave.slice(9, 21)));

    const other = createTestP12({ id: OTHER_ID, type: '02', pin: test.issuer.pinCertificado, name: 'OTRA EMPRESA SOCIEDAD ANONIMA' });
    writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
    writeFileSync(join(work, 'other.json'), JSON.stringify({ ...test.issuer, identificacion: OTHER_ID, nombre: 'OTRA EMPRESA SOCIEDAD ANONIMA', certificadoHacienda: other.toString('base64') }));
    for (const f of ['issuer.json', 'other.json']) {
      const r = await fecr(['emisor', 'register', f]);
      expect(r.code, r.stderr).toBe(0);
    }
    for (const id of [test.issuer.identificacion, OTHER_ID]) {
      writeFileSync(join(work, `${id}.json`), body(id, 7));
      const r = await fecr(['send', `${id}.json`]);
      expect(r.code, r.stderr).toBe(0);
      sent.set(id, r.stdout.trim());
    }
    const imp = await fecr(['recibidos', 'import', 'entrada']);
    expect(imp.code, imp.stderr).toBe(0);
  }, 90_000);

  it('documents list --issuer lists one issuer\'s documents', async () => {
    for (const id of [test.issuer.identificacion, OTHER_ID]) {
      const r = await fecr(['documents', 'list', '--issuer', id, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { clave: string }[]).map((d) => d.clave)).toEqual([sent.get(id)]);
    }
    const none = await fecr(['documents', 'list', '--issuer', '3101000000', '--json']);
    expect(JSON.parse(none.stdout)).toEqual([]);
    const bad = await fecr(['documents', 'list', '--issuer', 'x y']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --issuer must be an identificación/);
  });

  it('recibidos list takes --state, --since and --issuer; --estado, --desde and --emisor still work, hidden', async () => {
    const all = JSON.parse((await fecr(['recibidos', 'list', '--json'])).stdout) as { clave: string }[];
    expect(all).toHaveLength(2);
    const now = await fecr(['recibidos', 'list', '--state', 'pendiente', '--since', '2020-01-01', '--issuer', supplier, '--json']);
    expect(now.code, now.stderr).toBe(0);
    const old = await fecr(['recibidos', 'list', '--estado', 'pendiente', '--desde', '2020-01-01', '--emisor', supplier, '--json']);
    expect(old.code, old.stderr).toBe(0);
    expect(JSON.parse(now.stdout)).toEqual(JSON.parse(old.stdout));
    const mine = JSON.parse(now.stdout) as { emisor: { numero: string } }[];
    expect(mine.length).toBeGreaterThan(0);
    for (const x of mine) expect(x.emisor.numero).toBe(supplier);
    expect(JSON.parse((await fecr(['recibidos', 'list', '--state', 'aceptado', '--json'])).stdout)).toEqual([]);
    expect(JSON.parse((await fecr(['recibidos', 'list', '--issuer', '3101000000', '--json'])).stdout)).toEqual([]);
    const bad = await fecr(['recibidos', 'list', '--state', 'nada']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --state must be one of invalido, pendiente/);
    // The same names in both verbs' help; the old ones hidden.
    for (const noun of ['documents', 'recibidos']) {
      const help = await fecr([noun, 'list', '--help']);
      expect(help.stdout).toMatch(/--state <state>/);
      expect(help.stdout).toMatch(/--since <date>/);
      expect(help.stdout).toMatch(/--issuer <identificacion>/);
      expect(help.stdout).not.toMatch(/--estado|--desde|--emisor/);
    }
  });

  it('recibidos show: tab-separated field/value rows when piped, aligned on a terminal', async () => {
    const [first] = JSON.parse((await fecr(['recibidos', 'list', '--json'])).stdout) as { clave: string }[];
    const piped = await fecr(['recibidos', 'show', first!.clave]);
    expect(piped.code, piped.stderr).toBe(0);
    const lines = piped.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('field\tvalue');
    for (const l of lines) expect(l.split('\t'), l).toHaveLength(2);
    expect(lines).toContain(`clave\t${first!.clave}`);
    const tty = await fecr(['recibidos', 'show', first!.clave], { tty: true });
    expect(tty.stdout).not.toContain('\t');
    expect(tty.stdout).toMatch(new RegExp(`^clave +${first!.clave}$`, 'm'));
    const csv = await fecr(['recibidos', 'show', first!.clave, '--csv']);
    expect(csv.stdout.split('\r\n')[0]).toBe('field,value');
  });

  it('a service message that names an API route names the fecr verb instead', async () => {
    writeFileSync(join(work, 'unregistered.json'), body('3101999999', 1));
    const r = await fecr(['send', 'unregistered.json']);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/\/api\//);
    expect(r.stderr).toMatch(/^error: El emisor 3101999999 no está registrado en esta cuenta; regístrelo con fecr emisor register/);
  });
});

describe('JSON syntax errors name FILE:LINE:COLUMN', () => {
  const dir = join(root, 'json');
  const run = (args: string[]) => runCli(args, { env: { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' }, cwd: dir });

  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    // Line 3, column 18: the "}" where a value belongs.
    writeFileSync(join(dir, 'bad.json'), '{\n  "tipoDoc": "01",\n  "emisor":      }\n');
    // Line 2, column 4: a "," missing after "01".
    writeFileSync(join(dir, 'missing-comma.json'), '{"tipoDoc": "01"\n   "emisor": "x"}');
    writeFileSync(join(dir, 'cut.json'), '{\n  "tipoDoc": "01",\n');
  });

  it('fecr validate and fecr send', async () => {
    const v = await run(['validate', 'bad.json']);
    expect(v.code).toBe(1);
    expect(v.stderr).toBe("error: bad.json:3:18: Unexpected token '}'\n");
    const s = await run(['send', 'bad.json']);
    expect(s.stderr).toBe("error: bad.json:3:18: Unexpected token '}'\n");
    expect((await run(['validate', 'missing-comma.json'])).stderr).toBe("error: missing-comma.json:2:4: Expected ',' or '}' after property value\n");
    expect((await run(['validate', 'cut.json'])).stderr).toBe('error: cut.json:3:1: Expected double-quoted property name\n');
  });

  it('fecr batch: JSONL and JSON array rows name the file, line and column', async () => {
    const good = JSON.stringify({ ...fixtureBody(FIVE_KINDS.FE), numeroReferencia: 1 });
    writeFileSync(join(dir, 'b.jsonl'), `${good}\n  {"tipoDoc": "01", "emisor" 1}\n`);
    const l = await run(['batch', 'b.jsonl', '--dry-run']);
    expect(l.code).toBe(1);
    expect(l.stderr).toContain('  row 2: b.jsonl:2:30: Unexpected number\n');
    writeFileSync(join(dir, 'b.json'), `[\n${good},\n  {"tipoDoc": "01",\n   "emisor": }\n]\n`);
    const a = await run(['batch', 'b.json', '--dry-run']);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain("b.json:4:14: Unexpected token '}'");
  });
});

describe('an unknown CSV column', () => {
  it('suggests the closest known column', async () => {
    const dir = join(root, 'csv');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'typo.csv'),
      'emisor,numeroReferencia,tipoDoc,fechaEmision,codigoActividad,codigo,detalle,cantidad,unidadMedida,precioUnitaro,codigoTarifa,tarifa,receptorNombe\n' +
        '3101123456,1,01,2026-03-02T09:15:00-06:00,6201.0,8311200000000,x,1,h,10,08,13,x\n',
    );
    const r = await runCli(['batch', 'typo.csv', '--dry-run'], { env: { HOME: dir, FECR_NO_KEYCHAIN: '1' }, cwd: dir });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('unknown columns "precioUnitaro" (did you mean "precioUnitario"?), "receptorNombe" (did you mean "receptorNombre"?)');
  });
});

describe('a wrong PIN is worded once', () => {
  const dir = join(root, 'pin');
  const run = (args: string[], stdin = '') => runCli(args, { env: { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' }, cwd: dir, stdin });
  const LINE = 'wrong PIN for this certificate';

  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'issuer.p12'), test.p12);
    writeFileSync(join(dir, 'issuer.json'), JSON.stringify(test.issuer));
    writeFileSync(join(dir, 'wrong-pin.json'), JSON.stringify({ ...test.issuer, pinCertificado: '9999' }));
    writeFileSync(join(dir, 'fe.json'), body(test.issuer.identificacion, 1));
  });

  it('certs show, init --p12, xml and emisor register --p12 say the same line', async () => {
    const show = await run(['certs', 'show', 'issuer.p12', '--pin-stdin'], '9999\n');
    expect(show.stderr).toBe(`error: issuer.p12: ${LINE}\n`);
    const init = await run(['init', 'init-dir', '--p12', 'issuer.p12', '--pin-stdin'], '9999\n');
    expect(init.stderr).toBe(`error: issuer.p12: ${LINE}\n`);
    const xml = await run(['xml', 'fe.json', '--issuer', 'wrong-pin.json']);
    expect(xml.stderr).toBe(`error: wrong-pin.json: certificadoHacienda: ${LINE}\n`);
    const reg = await run(['emisor', 'register', 'issuer.json', '--p12', 'issuer.p12', '--pin-stdin'], '9999\n');
    expect(reg.stderr).toBe(`error: issuer.p12: ${LINE}\n`);
    for (const r of [show, init, xml, reg]) expect(r.code).toBe(1);
  });
});
