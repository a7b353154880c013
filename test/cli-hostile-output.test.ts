// Issue 25, point 8, the other verbs that print outside text: a backend (a hosted service, Hacienda's registry and
// DetalleMensaje behind it) answering names, messages and findings full of ESC sequences, BEL, bidi overrides and
// TAB/CR/LF. documents list and status (with DetalleMensaje and the mail line), emisor list/show, contribuyente,
// cabys, a refusal's findings, and `fecr validate`'s findings for a body's hostile keys: no raw control character
// reaches the output, a table row stays one line, piped cells never start a formula; --json keeps the raw data.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { BackendError, type Backend, type DocumentStatus } from '../src/client/backend.js';
import { runCli, tempDir } from './helpers/cli.js';

const dir = tempDir('fecr-hostile-out-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const EVIL = 'EVIL\x1b]0;pwned\x07\x1b[2J\u202eRTL\u2066\tT\rC\nerror: fake\x9b31m';
const EVIL_SHOWN = 'EVIL\\x1b]0;pwned\\x07\\x1b[2J\\u202eRTL\\u2066\\tT\\rC\\nerror: fake\\x9b31m';
const CLAVE = '50601012600310112345600100001010000000001100000001';

const doc: DocumentStatus = {
  clave: CLAVE,
  estado: 'rechazado',
  mensaje: 3,
  detalleMensaje: `Rechazado por ${EVIL}\r\nsegunda línea \x1b[8m`,
  kind: 'factura',
  numeroConsecutivo: '00100001010000000001',
  fechaEmision: '2026-01-01T10:00:00-06:00',
  totalComprobante: '-11300.00000',
  moneda: 'CRC',
  receptorNombre: `=HYPERLINK("http://evil.example","${EVIL}")`,
  createdAt: '2026-01-01T16:00:00.000Z',
  decidedAt: '2026-01-01T16:00:05.000Z',
  correo: { estado: 'fallido', destinatarios: [`a\x1b[2K@x.cr`], motivo: 'aceptado', intentos: 2, ultimaRespuesta: `550 ${EVIL}`, messageId: 'm', creadoAt: '2026-01-01T16:00:06.000Z', enviadoAt: null },
} as DocumentStatus;

const issuer = { identificacion: '3101123456', tipoIdentificacion: '02', nombre: `@SUM(1)${EVIL}`, nombreComercial: 'x', codigoActividad: '6201.0', sucursal: 1, ambiente: 2, correoElectronico: `+${EVIL}@x.cr` };

/** A backend whose every answer is hostile; what it does not know throws. */
const hostile: Partial<Backend> = {
  mode: 'remote',
  status: async () => doc,
  listDocuments: async () => [doc, doc],
  listIssuers: async () => [issuer as never],
  taxpayer: async () => ({
    nombre: EVIL,
    tipoIdentificacion: '02',
    identificacion: '3101123456',
    regimen: { codigo: 1, descripcion: `-${EVIL}` },
    situacion: { estado: 'Inscrito', moroso: 'NO', omiso: 'NO', administracionTributaria: 'x' },
    actividades: [{ codigo: '6201.0', descripcion: EVIL }],
  }),
  cabys: async () => [{ codigo: '4781400000000', descripcion: EVIL, impuesto: 13 } as never],
  submit: async () => {
    throw new BackendError('invalid', `refused: ${EVIL}`, [{ path: `receptor.${EVIL}`, message: `bad ${EVIL}` }]);
  },
  close: async () => undefined,
};
const backend = async () =>
  new Proxy(hostile, { get: (t, p) => (p in t ? t[p as keyof Backend] : p === 'then' ? undefined : () => Promise.reject(new Error(`no ${String(p)}`))) }) as Backend;
const fecr = (args: string[], opts: { tty?: boolean } = {}) => runCli(args, { env: { HOME: dir }, cwd: dir, backend, ...opts });

function tsv(out: string): string[][] {
  return out.replace(/\n$/, '').split('\n').map((l) => l.split('\t'));
}

describe('hostile text from the backend', () => {
  it('documents list: piped, on a terminal, as CSV: escaped, one line a row, formulas neutralised, negative totals as numbers', async () => {
    const piped = await fecr(['documents', 'list']);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).not.toMatch(RAW_CONTROL);
    const rows = tsv(piped.stdout);
    expect(rows).toHaveLength(3);
    expect(rows[1]![7]).toBe(`'=HYPERLINK("http://evil.example","${EVIL_SHOWN}")`);
    expect(rows[1]![5]).toBe('-11300.00000');
    const tty = await fecr(['documents', 'list'], { tty: true });
    expect(tty.stdout).not.toMatch(RAW_CONTROL);
    expect(tty.stdout.trimEnd().split('\n')).toHaveLength(4);
    const csv = await fecr(['documents', 'list', '--csv']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(parse(csv.stdout)).toEqual(rows);
    const json = JSON.parse((await fecr(['documents', 'list', '--json'])).stdout) as DocumentStatus[];
    expect(json[0]!.receptorNombre).toBe(doc.receptorNombre);
  });

  it('status: the table, DetalleMensaje (its lines kept, each escaped), the mail line and the exit line', async () => {
    const r = await fecr(['status', CLAVE]);
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).not.toMatch(RAW_CONTROL);
    // DetalleMensaje is Hacienda's text of several lines: its line breaks (LF, CRLF) kept, all else (a CR alone) escaped.
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.slice(2)).toEqual([
      'Rechazado por EVIL\\x1b]0;pwned\\x07\\x1b[2J\\u202eRTL\\u2066\\tT\\rC',
      'error: fake\\x9b31m',
      'segunda línea \\x1b[8m',
      `correo: fallido a a\\x1b[2K@x.cr (550 ${EVIL_SHOWN}, 2 intentos)`,
    ]);
    expect(r.stderr).toBe(`error: Hacienda rejected ${CLAVE}\n`);
  });

  it('emisor list and show, contribuyente, cabys: escaped, formulas neutralised when piped', async () => {
    const list = await fecr(['emisor', 'list']);
    expect(list.stdout).not.toMatch(RAW_CONTROL);
    expect(tsv(list.stdout)[1]).toEqual(['3101123456', '02', `'@SUM(1)${EVIL_SHOWN}`, '6201.0', '1', '2 testing', `'+${EVIL_SHOWN}@x.cr`, '']);
    const show = await fecr(['emisor', 'show', '3101123456', '--csv']);
    expect(show.stdout.replace(/\r\n/g, '\n')).not.toMatch(RAW_CONTROL);
    expect(parse(show.stdout)).toContainEqual(['nombre', `'@SUM(1)${EVIL_SHOWN}`]);
    const c = await fecr(['contribuyente', '3101123456'], { tty: true });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).not.toMatch(RAW_CONTROL);
    expect(c.stdout).toContain(EVIL_SHOWN);
    const piped = await fecr(['contribuyente', '3101123456']);
    expect(tsv(piped.stdout.split('\n\n')[0]!)[1]![3]).toBe(`'-${EVIL_SHOWN}`);
    const cabys = await fecr(['cabys', 'cafe']);
    expect(cabys.stdout).not.toMatch(RAW_CONTROL);
    expect(tsv(cabys.stdout)[1]).toEqual(['4781400000000', EVIL_SHOWN, '13 %']);
  });

  it("a refusal's headline and findings, and fecr validate's findings for a body's hostile key: one escaped line each", async () => {
    writeFileSync(join(dir, 'body.json'), JSON.stringify({ tipoDoc: '01', [`x${EVIL}`]: 1 }));
    const sent = await fecr(['send', 'body.json']);
    expect(sent.code).toBe(1);
    expect(sent.stderr).not.toMatch(RAW_CONTROL);
    expect(sent.stderr.trimEnd().split('\n')).toEqual([`error: refused: ${EVIL_SHOWN}`, `  receptor.${EVIL_SHOWN}: bad ${EVIL_SHOWN}`]);
    mkdirSync(join(dir, 'v'), { recursive: true });
    const v = await fecr(['validate', 'body.json', '--no-xsd']);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).not.toMatch(RAW_CONTROL);
    expect(v.stdout).toContain(`x${EVIL_SHOWN}`);
  });

  it('an error quoting a hostile file name: one escaped line', async () => {
    const r = await fecr(['send', `no\x1b]0;t\x07\u202e\nerror: x.json`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: no\\x1b]0;t\\x07\\u202e\\nerror: x.json: no such file\n');
  });
});
