// Issue 26, the input side: text input is UTF-8 (a BOM is fine) or read as told (--encoding windows-1252|latin1),
// anything else is refused with the file, the line and the byte; a U+FFFD never reaches a signed document; a batch
// run again without --resume or --restart changes no file (--restart moves the old journal and results aside); CSV
// dialects: ";" or "," (or tab) separators read from the header, decimal commas with --decimal-comma, never guessed.
// Run in-process with a temp HOME and the local backend (the service in-process, the embedded emulator).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from '../src/core/document.js';
import { placeholderIssuer } from '../src/core/placeholder-issuer.js';
import { readBatch, type BatchItem, type BatchReadOptions } from '../src/client/batch/reader.js';
import { decodeText } from '../src/client/text-input.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-batch-input-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => runCli(args, { env, cwd: work });
const EXAMPLE = new URL('../fixtures/batch/example.csv', import.meta.url).pathname;
const SEMICOLON = new URL('../fixtures/batch/example-semicolon.csv', import.meta.url).pathname;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/documents/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
const results = (file: string) =>
  readFileSync(join(work, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { row: number; numeroReferencia?: number; clave?: string; state: string; estado?: string; errors?: { path: string; message: string }[] })
    .sort((a, b) => a.row - b.row);
/** What `iconv -f utf-8 -t latin1` writes. */
const latin1 = (text: string) => Buffer.from(text, 'latin1');

async function items(file: string, format: 'csv' | 'json' | 'jsonl', opts: BatchReadOptions = {}): Promise<BatchItem[]> {
  const out: BatchItem[] = [];
  for await (const it of readBatch(file, format, opts)) out.push(it);
  return out;
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
  const r = await fecr(['emisor', 'register', 'issuer.json']);
  expect(r.code, r.stderr).toBe(0);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('text input encodings', () => {
  it('a Latin-1 CSV is refused without --encoding (file, line, byte), and nothing is written', async () => {
    writeFileSync(join(work, 'l1.csv'), latin1(readFileSync(EXAMPLE, 'utf8')));
    const r = await fecr(['batch', 'l1.csv', '--wait']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('error: l1.csv: line 2: byte 0xED is not UTF-8; save the file as UTF-8 or pass --encoding windows-1252');
    expect(existsSync(join(work, 'l1.csv.results.jsonl'))).toBe(false);
    expect(existsSync(join(work, 'l1.csv.journal'))).toBe(false);
    // --dry-run reads through the same reader.
    const dry = await fecr(['batch', 'l1.csv', '--dry-run']);
    expect(dry.code).toBe(1);
    expect(dry.stderr).toContain('line 2: byte 0xED is not UTF-8');
  });

  it('with --encoding windows-1252 it is aceptado, and the signed XML holds "Consultoría" in UTF-8', async () => {
    const r = await fecr(['batch', 'l1.csv', '--wait', '--json', '--encoding', 'windows-1252']);
    expect(r.code, r.stderr).toBe(1); // row 6 is bad on purpose (cantidad "tres")
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 3, sent: 2, invalid: 1, aceptado: 2 });
    const fe = results('l1.csv.results.jsonl').find((x) => x.numeroReferencia === 201)!;
    expect(fe.estado).toBe('aceptado');
    const d = await fecr(['download', fe.clave!, '--out', 'l1-fe.xml']);
    expect(d.code, d.stderr).toBe(0);
    const bytes = readFileSync(join(work, 'l1-fe.xml'));
    expect(bytes.includes(Buffer.from('<Detalle>Consultoría en gestión comercial</Detalle>', 'utf8'))).toBe(true);
    expect(bytes.includes(Buffer.from('\uFFFD', 'utf8'))).toBe(false);
    // latin1 is a name for the same decoder (WHATWG's labels): the same bodies.
    const a = await items(join(work, 'l1.csv'), 'csv', { encoding: 'windows-1252' });
    const b = await items(join(work, 'l1.csv'), 'csv', { encoding: 'latin1' });
    expect(b).toEqual(a);
    expect(a).toEqual(await items(EXAMPLE, 'csv'));
  }, 60_000);

  it('JSON and JSONL batches: refused at the line of the byte; --encoding reads them', async () => {
    const body = (n: number) => JSON.stringify({ ...fixture('01-fe-servicios-13'), numeroReferencia: n, receptor: { ...(fixture('01-fe-servicios-13').receptor as object), nombre: 'Cafetería Ñandú' } });
    writeFileSync(join(work, 'l1.jsonl'), latin1([701, 702].map(body).join('\n') + '\n'));
    const r = await fecr(['batch', 'l1.jsonl', '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^error: l1\.jsonl: line 1: byte 0xED is not UTF-8; save the file as UTF-8 or pass --encoding windows-1252$/);
    const ok = await items(join(work, 'l1.jsonl'), 'jsonl', { encoding: 'windows-1252' });
    expect(ok.map((i) => (i.body as { receptor: { nombre: string } }).receptor.nombre)).toEqual(['Cafetería Ñandú', 'Cafetería Ñandú']);
    writeFileSync(join(work, 'l1.json'), latin1(`[\n${body(703)},\n${body(704)}\n]\n`));
    const j = await fecr(['batch', 'l1.json', '--dry-run']);
    expect(j.code).toBe(1);
    expect(j.stderr).toContain('error: l1.json: line 2: byte 0xED is not UTF-8');
    const okj = await items(join(work, 'l1.json'), 'json', { encoding: 'latin1' });
    expect(okj.map((i) => (i.body as { numeroReferencia: number }).numeroReferencia)).toEqual([703, 704]);
  });

  it('send, validate and xml read a JSON body through the same decoder', async () => {
    const body: Record<string, unknown> = { ...fixture('01-fe-servicios-13'), numeroReferencia: 711 };
    (body.detalleServicio as Array<Record<string, unknown>>)[0]!.detalle = 'Asesoría técnica';
    writeFileSync(join(work, 'l1-body.json'), latin1(JSON.stringify(body, null, 2)));
    const lineOfByte = JSON.stringify(body, null, 2).split('\n').findIndex((l) => l.includes('Asesoría')) + 1;
    for (const args of [['send', 'l1-body.json'], ['validate', 'l1-body.json'], ['xml', 'l1-body.json', '--issuer', 'issuer.json']]) {
      const r = await fecr(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim()).toBe(`error: l1-body.json: line ${lineOfByte}: byte 0xED is not UTF-8; save the file as UTF-8 or pass --encoding windows-1252`);
    }
    const sent = await fecr(['send', 'l1-body.json', '--encoding', 'windows-1252', '--wait', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    const clave = (JSON.parse(sent.stdout) as { clave: string }).clave;
    expect((await fecr(['download', clave, '--out', 'l1-body.xml'])).code).toBe(0);
    expect(readFileSync(join(work, 'l1-body.xml')).includes(Buffer.from('<Detalle>Asesoría técnica</Detalle>', 'utf8'))).toBe(true);
    // From stdin, the name is "stdin".
    const piped = await runCli(['validate', '-'], { env, cwd: work, stdin: latin1(JSON.stringify(body)) });
    expect(piped.stderr.trim()).toBe('error: stdin: line 1: byte 0xED is not UTF-8; save the file as UTF-8 or pass --encoding windows-1252');
    // A bad --encoding is a usage error.
    const bad = await fecr(['send', 'l1-body.json', '--encoding', 'ebcdic']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --encoding must be utf-8, windows-1252 or latin1/);
  }, 60_000);

  it('a U+FFFD in a string field is a finding at its path: never signed', async () => {
    const body: Record<string, unknown> = { ...fixture('01-fe-servicios-13'), numeroReferencia: 712 };
    (body.detalleServicio as Array<Record<string, unknown>>)[0]!.detalle = 'Consultor\uFFFDa';
    writeFileSync(join(work, 'fffd.json'), JSON.stringify(body));
    // The core's parse: one finding at the field's path, beside any other (the body's other fields are fine).
    const parsed = parseDocument(body, placeholderIssuer(body));
    expect(parsed.ok).toBe(false);
    expect(parsed.findings).toContainEqual(expect.objectContaining({ path: 'detalleServicio[0].detalle', message: 'contains U+FFFD (a character lost in a wrong encoding)' }));
    const v = await fecr(['validate', 'fffd.json', '--no-xsd']);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain('detalleServicio[0].detalle: contains U+FFFD (a character lost in a wrong encoding)');
    const s = await fecr(['send', 'fffd.json']);
    expect(s.code).toBe(1);
    expect(s.stderr + s.stdout).toContain('contains U+FFFD (a character lost in a wrong encoding)');
  });

  it('decodeText: UTF-8 with or without BOM; the line and byte of the first bad sequence', () => {
    expect(decodeText(Buffer.from('\uFEFF{"a":"ñ"}', 'utf8'), 'x.json')).toBe('{"a":"ñ"}');
    expect(decodeText(Buffer.from('{"a":"ñ"}', 'utf8'), 'x.json')).toBe('{"a":"ñ"}');
    expect(() => decodeText(Buffer.from([0x61, 0x0a, 0x62, 0x0a, 0xc3, 0xb1, 0xe2, 0x28, 0xa1]), 'x.json')).toThrow('x.json: line 3: byte 0xE2 is not UTF-8');
    expect(() => decodeText(Buffer.from([0x61, 0xc3]), 'x.json')).toThrow('x.json: line 1: byte 0xC3 is not UTF-8');
    expect(() => decodeText(Buffer.from([0xed, 0xa0, 0x80]), 'x.json')).toThrow('line 1: byte 0xED is not UTF-8'); // a surrogate
    expect(decodeText(Buffer.from([0x43, 0xed, 0x61]), 'x.json', { encoding: 'windows-1252' })).toBe('Cía');
    // Windows-1252's own characters at 0x80-0x9F (Node 20.18.3+ alone would give C1 controls: nodejs/node#60888).
    expect(decodeText(Buffer.from([0x80, 0x20, 0x93, 0x61, 0x94, 0x96, 0x9f]), 'x.json', { encoding: 'windows-1252' })).toBe('€ \u201Ca\u201D\u2013\u0178');
    expect(decodeText(Buffer.from([0x80]), 'x.json', { encoding: 'latin1' })).toBe('€');
    // A UTF-8 BOM wins over the name given.
    expect(decodeText(Buffer.from('\uFEFFCía', 'utf8'), 'x.json', { encoding: 'windows-1252' })).toBe('Cía');
  });
});

describe('a batch never destroys results', () => {
  it('run again without --resume: exit 2, naming --resume and --restart, and no file changes', async () => {
    copyFileSync(EXAMPLE, join(work, 'small.csv'));
    const first = await fecr(['batch', 'small.csv']);
    expect(first.code, first.stderr).toBe(1); // row 6 is bad on purpose
    const resultsBefore = readFileSync(join(work, 'small.csv.results.jsonl'));
    const journalBefore = readFileSync(join(work, 'small.csv.journal'));
    expect(resultsBefore.toString().trim().split('\n')).toHaveLength(3);
    const second = await fecr(['batch', 'small.csv']);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/--resume/);
    expect(second.stderr).toMatch(/--restart/);
    expect(readFileSync(join(work, 'small.csv.results.jsonl')).equals(resultsBefore)).toBe(true);
    expect(readFileSync(join(work, 'small.csv.journal')).equals(journalBefore)).toBe(true);
    // --dry-run and --restart, --resume and --restart: usage errors, nothing touched.
    for (const args of [['--resume', '--restart'], ['--dry-run', '--restart']]) {
      const r = await fecr(['batch', 'small.csv', ...args]);
      expect(r.code).toBe(2);
    }
    expect(readFileSync(join(work, 'small.csv.results.jsonl')).equals(resultsBefore)).toBe(true);
    // A run refused for its input (--resume over a file whose header is now broken) changes nothing either.
    writeFileSync(join(work, 'small.csv'), 'emisor,numeroRef\n1,2\n');
    const broken = await fecr(['batch', 'small.csv', '--resume']);
    expect(broken.code).toBe(1);
    expect(readFileSync(join(work, 'small.csv.results.jsonl')).equals(resultsBefore)).toBe(true);
    expect(readFileSync(join(work, 'small.csv.journal')).equals(journalBefore)).toBe(true);
    copyFileSync(EXAMPLE, join(work, 'small.csv'));
    // --restart: the old journal and results moved aside with a timestamp, then a fresh run.
    const restart = await runCli(['batch', 'small.csv', '--restart', '--json'], { env, cwd: work, now: () => new Date('2026-03-02T15:16:17Z') });
    expect(restart.code, restart.stderr).toBe(1);
    expect(JSON.parse(restart.stdout)).toMatchObject({ total: 3, sent: 2, invalid: 1, skipped: 0 });
    expect(restart.stderr).toContain('moved the earlier run aside: small.csv.journal.20260302T151617Z, small.csv.results.jsonl.20260302T151617Z');
    expect(readFileSync(join(work, 'small.csv.results.jsonl.20260302T151617Z')).equals(resultsBefore)).toBe(true);
    expect(readFileSync(join(work, 'small.csv.journal.20260302T151617Z')).equals(journalBefore)).toBe(true);
    expect(results('small.csv.results.jsonl').map((x) => x.state)).toEqual(['enviado', 'enviado', 'invalido']);
    // A second restart in the same second does not overwrite the first one's copies.
    const again = await runCli(['batch', 'small.csv', '--restart'], { env, cwd: work, now: () => new Date('2026-03-02T15:16:17Z') });
    expect(again.code).toBe(1);
    expect(readdirSync(work).filter((f) => f.startsWith('small.csv.journal.')).sort()).toEqual(['small.csv.journal.20260302T151617Z', 'small.csv.journal.20260302T151617Z-2']);
    expect(readFileSync(join(work, 'small.csv.results.jsonl.20260302T151617Z')).equals(resultsBefore)).toBe(true);
  }, 60_000);
});

describe('CSV dialects', () => {
  it('the semicolon copy of example.csv (decimal commas, BOM, CRLF: Excel in a Spanish locale) gives the same documents', async () => {
    const comma = await items(EXAMPLE, 'csv');
    const semi = await items(SEMICOLON, 'csv', { decimalComma: true });
    expect(comma.filter((i) => i.body)).toHaveLength(2);
    expect(semi).toEqual(comma);
    // Told the separator, the same.
    expect(await items(SEMICOLON, 'csv', { decimalComma: true, delimiter: ';' })).toEqual(comma);
    // Tab-separated: detected too.
    const rows = parse(readFileSync(EXAMPLE, 'utf8')) as string[][];
    writeFileSync(join(work, 'tab.csv'), rows.map((r) => r.join('\t')).join('\n') + '\n');
    expect(await items(join(work, 'tab.csv'), 'csv')).toEqual(comma);
  });

  it('fecr batch of the semicolon copy: --decimal-comma sends the same documents; without it, refused with the hint', async () => {
    copyFileSync(SEMICOLON, join(work, 'semi.csv'));
    const r = await fecr(['batch', 'semi.csv', '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'error: semi.csv: line 2: precioUnitario "50.000" is ambiguous in a file separated by ";" (Excel in a Spanish locale writes decimal commas and "." between thousands): pass --decimal-comma to read it as 50000',
    );
    expect(existsSync(join(work, 'semi.csv.dry-run.results.jsonl'))).toBe(false);
    const ok = await fecr(['batch', 'semi.csv', '--decimal-comma', '--dry-run', '--json']);
    expect(ok.code, ok.stderr).toBe(1);
    expect(JSON.parse(ok.stdout)).toMatchObject({ total: 3, sent: 2, invalid: 1 });
    // A comma decimal alone is named as such.
    writeFileSync(join(work, 'semi2.csv'), readFileSync(SEMICOLON, 'utf8').replace(/\.000;/g, '000;').replace(/8\.900/, '8900').replace(/1\.500/, '1500'));
    const r2 = await fecr(['batch', 'semi2.csv', '--dry-run']);
    expect(r2.code).toBe(1);
    expect(r2.stderr.trim()).toBe('error: semi2.csv: line 3: precioUnitario "1.250,50" has a decimal comma and the file is separated by ";": pass --decimal-comma to read it as 1250.50');
  });

  it('a header that does not parse says which separator it saw and what it expected', async () => {
    copyFileSync(SEMICOLON, join(work, 'semi3.csv'));
    const r = await fecr(['batch', 'semi3.csv', '--delimiter', ',', '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('error: semi3.csv: line 1: the header has 1 column "emisor;numeroReferencia;tipoDoc;…" — the separator looks like ";" (pass --delimiter ";")');
    writeFileSync(join(work, 'pipes.csv'), 'emisor|numeroReferencia|tipoDoc\n1|2|3\n');
    const p = await fecr(['batch', 'pipes.csv', '--dry-run']);
    expect(p.code).toBe(1);
    expect(p.stderr.trim()).toBe('error: pipes.csv: line 1: the header has 1 column "emisor|numeroReferencia|tipoDoc" — expected the columns of docs/batch-csv.md separated by ",", ";" or a tab');
    const bad = await fecr(['batch', 'semi3.csv', '--delimiter', '|']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --delimiter must be ",", ";" or tab/);
  });
});
