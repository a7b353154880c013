// Issue 37 point 2, as a user (a cron job, a script) runs it: every local-mode verb that can start the embedded
// emulator exits when its work is done, whatever path it took. `node bin/fecr.js` with its own HOME, each run under a
// deadline (killed and failed past it), its exit code asserted: `recibidos import` of a file that is not XML, a forged
// one, one over the size limit, stdin, a folder of refused files, and only already-answered documents; `send`,
// `status`, `download`, `contingency`, `doctor` and `report` with a refused or bad input. Before the fix each import
// below hung: the verb began the emulator's start, had nothing to send, and its backend's close() ran while the start
// was under way, so nothing closed the server that came up after it (service/local-run.ts close()).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { supplierComprobante, TEST_SUPPLIERS } from '../src/emulator/suppliers.js';
import { runBin, type BinRun } from './helpers/bin.js';
import { tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const home = tempDir('fecr-verbs-exit-');
const work = join(home, 'work');
// FECR_RECIBIDOS_MAX_BYTES at its floor (16 KiB): a 20 KB file is over the limit.
const env = { HOME: home, FECR_NO_KEYCHAIN: '1', NO_COLOR: '1', FECR_RECIBIDOS_MAX_BYTES: '16384' };
const issuer = makeTestIssuer().issuer;
/**
 * Each verb is done in a second or two on an idle machine (the emulator starts in ~0.3 s); 30 s is far beyond a
 * loaded one, and far below the 10 minutes the run waited.
 */
const DEADLINE_MS = 30_000;

async function fecr(args: string[], stdin?: string): Promise<BinRun> {
  const r = await runBin(args, { cwd: work, env, deadlineMs: DEADLINE_MS, ...(stdin !== undefined ? { stdin } : {}) });
  expect(r.timedOut, `fecr ${args.join(' ')} still running after ${DEADLINE_MS} ms: ${r.stderr}`).toBeUndefined();
  return r;
}

let answered = '';

beforeAll(async () => {
  mkdirSync(join(work, 'refused'), { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(issuer));
  expect((await fecr(['emisor', 'register', 'issuer.json'])).code).toBe(0);
  // A genuine supplier invoice, imported and answered (aceptado): importing it again is "already answered".
  const issued = await fecr(['hacienda', 'suppliers', 'issue', '--to', issuer.identificacion, '--count', '1', '--out', 'answered', '--json']);
  expect(issued.code, issued.stderr).toBe(0);
  answered = (JSON.parse(issued.stdout) as { clave: string }[])[0]!.clave;
  expect((await fecr(['recibidos', 'import', 'answered'])).code).toBe(0);
  const ok = await fecr(['recibidos', 'aceptar', answered, '--json']);
  expect(ok.code, ok.stderr).toBe(0);
  // Refused inputs.
  writeFileSync(join(work, 'notes.txt'), 'not a comprobante\n');
  const cafetal = TEST_SUPPLIERS[0]!;
  const creds = loadP12(createTestP12({ id: cafetal.identificacion, type: cafetal.tipoIdentificacion, pin: '1', name: cafetal.nombre, selfSigned: true }), '1', new Date());
  const { unsignedXml } = supplierComprobante({ receptor: { tipo: '02', numero: issuer.identificacion, nombre: issuer.nombre }, kind: 'FE' }, cafetal, 901, new Date());
  writeFileSync(join(work, 'forged.xml'), signCanonical(unsignedXml, creds, { signingTime: new Date(), newId: () => Math.random().toString(16).slice(2, 10) }));
  writeFileSync(join(work, 'big.xml'), `<FacturaElectronica>${'x'.repeat(20_000)}</FacturaElectronica>`);
  writeFileSync(join(work, 'refused', 'a.xml'), 'not xml');
  writeFileSync(join(work, 'refused', 'b.xml'), '<x/>');
  writeFileSync(join(work, 'bad-body.json'), JSON.stringify({ tipoDoc: '01', emisor: issuer.identificacion }));
}, 120_000);

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('fecr recibidos import exits after refusing, in local mode', () => {
  it.each([
    ['a file that is not XML', ['notes.txt'], /notes\.txt was refused/],
    ['a forged supplier invoice', ['forged.xml'], /certificate\.chain/],
    ['a file over the size limit', ['big.xml'], /over the limit of 16384 bytes/],
    ['a folder of refused files', ['refused'], /2 files were refused/],
  ])('%s: exit 1', async (_what, args, said) => {
    const r = await fecr(['recibidos', 'import', ...args]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(said);
  });

  it('stdin that is not XML: exit 1', async () => {
    const r = await fecr(['recibidos', 'import', '-'], 'not xml at all');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^error: - was refused/m);
  });

  it('only already-answered documents: exit 0', async () => {
    const r = await fecr(['recibidos', 'import', 'answered']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${answered} aceptado (already imported)`);
  });
});

describe('the other local verbs exit with a refused or bad input', () => {
  const unknown = '50601012600310112345600100001010000009999199999999';
  it.each([
    ['send of a refused body', ['send', 'bad-body.json', '--wait'], 1],
    ['status of an unknown clave', ['status', unknown], 1],
    ['download of an unknown clave', ['download', unknown], 1],
    ['contingency replace of an unknown provisional', ['contingency', 'replace', '999', 'bad-body.json'], 1],
    ['contingency send with nothing owed', ['contingency', 'send'], 0],
    ['doctor', ['doctor'], 0],
    ['report iva of a month that is not one', ['report', 'iva', '2026-13'], 2],
  ])('%s', async (_what, args, code) => {
    const r = await fecr(args as string[]);
    expect(r.code, r.stderr).toBe(code);
  });
});
