// fecr test, in-process with injected streams, a temp HOME and a temp working directory holding a copy of
// fixtures/test-suite (10 documents in 9 files: accepted, refused before signing with -53 and -400 (issue 36), accepted with the
// warning -407, refused by fecr's own checks, a JSONL with an `expect` member, a CSV, and one whose expectation is
// wrong on purpose): exit 3, exactly the wrong one named, a JUnit report read back by junit2json (a JUnit consumer
// from npm) with 10 cases and 1 failure, GitHub annotations under GITHUB_ACTIONS, the throwaway data dir removed (kept
// with --keep), the same files on a profile of the user's, and the refusals that stop a run before anything is sent.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseJunit, type TestCase as JunitCase } from 'junit2json';
import { afterAll, describe, expect, it } from 'vitest';
import { escapeData, escapeProperty, junitXml } from '../src/client/test-runner/report.js';
import type { CaseResult } from '../src/client/test-runner/run.js';
import { DEFAULT_EXPECTATION } from '../src/client/test-runner/expectations.js';
import { runCli, tempDir } from './helpers/cli.js';
import { rmSync } from 'node:fs';

const home = tempDir('fecr-cli-test-');
const work = join(home, 'work');
mkdirSync(work, { recursive: true });
cpSync(join(import.meta.dirname, '..', 'fixtures', 'test-suite'), join(work, 'invoices'), { recursive: true });
const env = { HOME: home, LANG: 'C.UTF-8' };
const fecr = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra }, cwd: work });

afterAll(() => rmSync(home, { recursive: true, force: true }));

const WRONG = 'invoices/09-expectativa-equivocada.json';

/** The data dir the run says it used. */
function dataDirOf(stderr: string): string {
  const m = /throwaway local profile \(data dir ([^,]+),/.exec(stderr);
  expect(m, stderr).not.toBeNull();
  return m![1]!;
}

describe('fecr test on the fixtures folder', () => {
  it('sends the 10 documents on a throwaway profile, exits 3 naming exactly the wrong one, and writes a JUnit report junit2json reads back', async () => {
    const r = await fecr(['test', 'invoices', '--junit', 'report.xml']);
    expect(r.code, r.stderr).toBe(3);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(10);
    const failed = lines.filter((l) => l.startsWith('✗'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(new RegExp(`^✗ ${WRONG} \\(.*wrong on purpose\\)  506\\d{47}  aceptado: expected rechazado -54, got aceptado$`));
    expect(lines.filter((l) => l.startsWith('✓'))).toHaveLength(9);
    // Each kind of expectation held, with the clave and the codes on its line.
    const line = (file: string) => lines.find((l) => l.includes(` ${file} `) || l.includes(` ${file}  `))!;
    expect(line('invoices/01-factura-servicios.json')).toMatch(/^✓ \S+  506\d{47}  aceptado$/);
    // What Hacienda is known to reject (-53 a later day, -400 an unknown CABYS code) is refused before signing (issue 36).
    expect(line('invoices/03-fecha-futura.json')).toBe('✓ invoices/03-fecha-futura.json  -  invalido fechaEmision');
    expect(line('invoices/04-cabys-inexistente.json')).toBe('✓ invoices/04-cabys-inexistente.json  -  invalido detalleServicio[1].codigo');
    expect(line('invoices/05-actividad-no-registrada.json')).toMatch(/  aceptado aviso -407$/);
    expect(line('invoices/06-total-equivocado.json')).toBe('✓ invoices/06-total-equivocado.json  -  invalido detalleServicio[0].montoTotalLinea');
    expect(line('invoices/07-tiquetes.jsonl:2')).toMatch(/  invalido detalleServicio\[0\]\.codigo$/);
    expect(line('invoices/08-ventas.csv:2')).toMatch(/  aceptado$/);
    expect(r.stderr).toContain('10 documents: 9 passed, 1 failed');
    expect(r.stderr).toContain(`error: 1 expectation did not hold: ${WRONG}\n`);
    expect(r.stderr).toContain('test issuers 3101123456, 114560789: registered with a generated test certificate');
    // No annotation outside GitHub Actions; the throwaway data dir is gone.
    expect(r.stdout).not.toContain('::error');
    expect(existsSync(dataDirOf(r.stderr))).toBe(false);

    const report = await parseJunit(readFileSync(join(work, 'report.xml'), 'utf8'));
    expect(report).toBeDefined();
    const cases: JunitCase[] = (report as { testsuite?: { testcase?: JunitCase[] }[] }).testsuite!.flatMap((s) => s.testcase ?? []);
    expect(cases).toHaveLength(10);
    expect((report as { tests?: number; failures?: number }).tests).toBe(10);
    expect((report as { failures?: number }).failures).toBe(1);
    const failing = cases.filter((c) => (c.failure ?? []).length > 0);
    expect(failing).toHaveLength(1);
    expect(failing[0]!.classname).toBe(WRONG);
    expect(failing[0]!.failure![0]!.message).toBe('expected rechazado -54, got aceptado');
    expect(failing[0]!.failure![0]!.inner).toMatch(/clave: 506\d{47}/);
    // Hacienda's words are in the report of the refused ones (refused before signing, issue 36).
    const future = cases.find((c) => c.classname === 'invoices/03-fecha-futura.json')!;
    expect(future['system-out']![0]).toContain('-53 La fecha de emisión del comprobante electrónico no puede ser superior al día de hoy.');
  });

  it('under GitHub Actions, each failure is also an ::error annotation on the body file; --keep keeps the data dir; without UTF-8, ASCII marks', async () => {
    const r = await fecr(['test', 'invoices/09-expectativa-equivocada.json', 'invoices/01-factura-servicios.json', '--keep'], { GITHUB_ACTIONS: 'true', LANG: 'C' });
    expect(r.code, r.stderr).toBe(3);
    const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::'));
    expect(annotations).toHaveLength(1);
    expect(annotations[0]).toMatch(
      /^::error file=invoices\/09-expectativa-equivocada\.json,line=1,title=fecr test%3A invoices\/09-expectativa-equivocada\.json::expected rechazado -54, got aceptado%0Aclave 506\d{47}$/,
    );
    expect(r.stdout).toMatch(/^FAIL invoices\/09-expectativa-equivocada\.json /m);
    expect(r.stdout).toMatch(/^ok   invoices\/01-factura-servicios\.json /m);
    const dir = dataDirOf(r.stderr);
    expect(existsSync(join(dir, 'master.key'))).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 0 when every expectation holds; --json gives each result', async () => {
    const r = await fecr(['test', 'invoices/07-tiquetes.jsonl', 'invoices/06-total-equivocado.json', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { total: number; passed: number; failed: number; results: { where: string; estado: string; ok: boolean; expect: { estado: string } }[] };
    expect(out).toMatchObject({ total: 3, passed: 3, failed: 0 });
    expect(out.results.map((x) => [x.where, x.estado, x.expect.estado])).toEqual([
      ['invoices/07-tiquetes.jsonl:1', 'aceptado', 'aceptado'],
      ['invoices/07-tiquetes.jsonl:2', 'invalido', 'invalido'],
      ['invoices/06-total-equivocado.json', 'invalido', 'invalido'],
    ]);
  });

  it('a body fecr refuses, or a line that is not JSON, where aceptado is expected: the line says what fecr found', async () => {
    const dir = join(work, 'refused');
    mkdirSync(dir, { recursive: true });
    const body = JSON.parse(readFileSync(join(work, 'invoices', '06-total-equivocado.json'), 'utf8')) as object;
    writeFileSync(join(dir, 'lote.jsonl'), `${JSON.stringify(body)}\n{"emisor": \n`);
    const r = await fecr(['test', 'refused']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain(
      '✗ refused/lote.jsonl:1  -  invalido detalleServicio[0].montoTotalLinea: expected aceptado, got invalido detalleServicio[0].montoTotalLinea (detalleServicio[0].montoTotalLinea: is 999999 but montoTotal + impuestoNeto is 322050.00000)',
    );
    expect(r.stdout).toMatch(/^✗ refused\/lote\.jsonl:2  -  invalido refused\/lote\.jsonl:2:\d+: expected aceptado, got invalido refused\/lote\.jsonl:2:\d+ \(refused\/lote\.jsonl:2:\d+: Unexpected end of JSON input\)$/m);
  });

  it('runs the same files on a profile of the user\'s (--profile), registering the issuers there once', async () => {
    const data = join(home, 'ci-data');
    for (const [k, v] of [['mode', 'local'], ['env', 'local'], ['dataDir', data]]) expect((await fecr(['config', 'set', k!, v!, '--profile', 'ci'])).code).toBe(0);
    const first = await fecr(['test', 'invoices/01-factura-servicios.json', 'invoices/02-tiquete-persona.json', '--profile', 'ci'], { FECR_NO_KEYCHAIN: '1' });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('on profile "ci"');
    expect(first.stderr).toContain('test issuers 3101123456, 114560789: registered');
    const again = await fecr(['test', 'invoices/01-factura-servicios.json', '--profile', 'ci'], { FECR_NO_KEYCHAIN: '1' });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('registered');
    // The documents stay in the profile: the first run's two and the second run's one.
    const list = await fecr(['documents', 'list', '--profile', 'ci', '--json'], { FECR_NO_KEYCHAIN: '1' });
    expect(JSON.parse(list.stdout)).toHaveLength(3);
    expect((await fecr(['test', 'invoices', '--profile', 'ci', '--faults', 'f.json'])).code).toBe(2);
  });
});

describe('fecr test refuses before sending anything', () => {
  it('a malformed expectation, with its file and field', async () => {
    const dir = join(work, 'bad-expect');
    mkdirSync(dir, { recursive: true });
    cpSync(join(work, 'invoices', '01-factura-servicios.json'), join(dir, 'a.json'));
    writeFileSync(join(dir, 'a.expect.json'), '{"estado": "aprobado", "codigos": ["x"], "otro": 1}');
    writeFileSync(join(dir, 'b.jsonl'), '{"expect": {"findings": ["x"]}, "emisor": "3101123456"}\n');
    const r = await fecr(['test', 'bad-expect']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: cannot run the tests: 4 problems in the files');
    expect(r.stderr).toContain('  bad-expect/a.expect.json estado: must be one of aceptado, rechazado, error, invalido');
    expect(r.stderr).toContain('  bad-expect/a.expect.json codigos[0]: must be a code like "-52"');
    expect(r.stderr).toContain('  bad-expect/a.expect.json: Unrecognized key: "otro"');
    expect(r.stderr).toContain('  bad-expect/b.jsonl:1 expect.findings: is for estado "invalido"');
    expect(r.stderr).not.toContain('throwaway');
  });

  it('a path that is not there, a folder without bodies, a file that is not a body', async () => {
    mkdirSync(join(work, 'empty'), { recursive: true });
    writeFileSync(join(work, 'notes.txt'), 'x');
    const r = await fecr(['test', 'nowhere', 'empty', 'notes.txt']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('  nowhere: no such file or folder');
    expect(r.stderr).toContain('  empty: holds no body file (.json, .jsonl or .csv)');
    expect(r.stderr).toContain('  notes.txt: is not a body file (.json, .jsonl or .csv)');
    expect((await fecr(['test'])).code).toBe(2);
    expect((await fecr(['test', 'invoices', '--concurrency', '0'])).code).toBe(2);
  });
});

describe('fecr test reports', () => {
  const result = (name: string, problems: string[], message: string): CaseResult => ({
    case: { seq: 1, file: name, line: 3, where: `${name}:3`, name: `${name}:3`, expect: DEFAULT_EXPECTATION, expectFrom: null },
    outcome: { estado: 'rechazado', clave: '5'.repeat(50), errores: [{ codigo: -54, mensaje: message, fila: null, columna: null, aviso: false }], findings: [] },
    problems,
    seconds: 0.25,
  });

  it('the JUnit XML escapes names and messages, and drops what XML cannot carry; junit2json reads them back as written', async () => {
    const name = 'a<b>&"c\'d,e:f.jsonl';
    const message = 'Total <impuesto> & "desglose"\u0007 fin';
    const xml = junitXml({ total: 1, passed: 0, failed: 1, seconds: 0.25, results: [result(name, ['expected aceptado, got rechazado <-54>'], message)] });
    const back = (await parseJunit(xml)) as { testsuite: { name: string; testcase: JunitCase[] }[] };
    expect(back.testsuite[0]!.name).toBe(name);
    const c = back.testsuite[0]!.testcase[0]!;
    expect(c.classname).toBe(name);
    expect(c.failure![0]!.message).toBe('expected aceptado, got rechazado <-54>');
    expect(c.failure![0]!.inner).toContain('rechazado: -54 Total <impuesto> & "desglose"\uFFFD fin');
  });

  it("GitHub's workflow command escapes: %, CR, LF in the message; also : and , in a property", () => {
    expect(escapeData('50% done\r\nnext')).toBe('50%25 done%0D%0Anext');
    expect(escapeProperty('a:b,c%\n')).toBe('a%3Ab%2Cc%25%0A');
  });
});
