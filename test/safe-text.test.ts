// The one sanitiser of fecr's output (src/cli/safe-text.ts, issue 25 point 8): what it escapes and how, that the
// form is unambiguous (read back exactly, for any string), that a spreadsheet cell never starts a formula, and
// that --json's text is the same JSON value with nothing a terminal acts on.
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Ctx } from '../src/cli/context.js';
import { safeBlock, safeJson, safeText, spreadsheetCell, unescapeText } from '../src/cli/safe-text.js';
import { renderTable } from '../src/cli/table.js';

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('safeText', () => {
  it('escapes C0, DEL, C1 and the bidi overrides and isolates; leaves the rest', () => {
    expect(safeText('a\x1b]0;title\x07b')).toBe('a\\x1b]0;title\\x07b');
    expect(safeText('\x1b[31mrojo\x1b[0m')).toBe('\\x1b[31mrojo\\x1b[0m');
    expect(safeText('tab\there\r\nnext')).toBe('tab\\there\\r\\nnext');
    expect(safeText('\x00\x7f\x80\x9b\x9f')).toBe('\\x00\\x7f\\x80\\x9b\\x9f');
    expect(safeText('\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069')).toBe('\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069');
    expect(safeText('DISTRIBUIDORA ÑANDÚ, S.A. — café ☕ 😀 €')).toBe('DISTRIBUIDORA ÑANDÚ, S.A. — café ☕ 😀 €');
  });

  it('a backslash stays single unless it would read as an escape', () => {
    expect(safeText('C:\\Facturas\\prov.xml')).toBe('C:\\Facturas\\prov.xml');
    expect(safeText('/^\\d{9,12}$/')).toBe('/^\\d{9,12}$/');
    expect(safeText('literal \\x1b')).toBe('literal \\\\x1b');
    expect(safeText('C:\\new\\table')).toBe('C:\\\\new\\\\table');
    expect(safeText('\\\x1b')).toBe('\\\\\\x1b');
  });

  it('unambiguous: any string is read back exactly, and the output has no control or bidi character', () => {
    const tricky = fc.constantFrom('\\', 'x', 'u', 't', 'n', 'r', '1', 'b', '\x1b', '\x07', '\t', '\r', '\n', '\u202e', '\u2066', '\x9b', '\x7f', 'a', 'é');
    for (const arb of [fc.string({ unit: 'binary' }), fc.array(tricky).map((a) => a.join(''))]) {
      fc.assert(
        fc.property(arb, (s) => {
          const out = safeText(s);
          expect(out).not.toMatch(UNSAFE);
          expect(unescapeText(out)).toBe(s);
        }),
        { numRuns: 2000 },
      );
    }
  });

  it('safeBlock keeps the line breaks of a block (DetalleMensaje), escapes everything else', () => {
    expect(safeBlock('línea 1\r\nlínea 2 \x1b[2J\n\u202e3\r4')).toBe('línea 1\nlínea 2 \\x1b[2J\n\\u202e3\\r4');
  });
});

describe('spreadsheetCell', () => {
  it('neutralises what a spreadsheet runs as a formula with a leading apostrophe (OWASP)', () => {
    for (const cell of ['=HYPERLINK("http://x","y")', '+1+1', "-2+3+cmd|' /C calc'!A0", '@SUM(A1:A2)', '  =1+1', '＝1+1', '-1e5', '- 5']) {
      expect(spreadsheetCell(cell), cell).toBe(`'${cell}`);
    }
    // Numbers stay numbers (money columns: negative amounts readable), and fecr's "none" stays a dash.
    for (const cell of ['-', '-1', '-1500.00000', '1500.00000', '0']) expect(spreadsheetCell(cell), cell).toBe(cell);
    // TAB and CR lead no cell: escaped first, the cell then starts with a backslash.
    expect(spreadsheetCell('\t=1+1')).toBe('\\t=1+1');
    expect(spreadsheetCell('\r=1+1')).toBe('\\r=1+1');
    expect(spreadsheetCell('ACME = bueno')).toBe('ACME = bueno');
  });

  it('never a formula start, never a control character, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const out = spreadsheetCell(s);
        expect(out).not.toMatch(UNSAFE);
        if (!/^-?\d+(\.\d+)?$/.test(out) && out !== '-') expect(out).not.toMatch(/^ *[=+\-@\uff1d\uff0b\uff0d\uff20]/);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('renderTable', () => {
  const ctx = (tty: boolean) => ({ io: { stdoutIsTTY: tty } }) as unknown as Ctx;
  const rows = [
    ['a\tb\nc', '=1+1', '-5.00000'],
    ['x,"y"', '\x1b]0;t\x07', ''],
  ];

  it('TSV: one line per row, cells escaped and neutralised', () => {
    expect(renderTable(ctx(false), ['h1', 'h2', 'h3'], rows)).toBe("h1\th2\th3\na\\tb\\nc\t'=1+1\t-5.00000\nx,\"y\"\t\\x1b]0;t\\x07\t");
  });

  it('terminal: escaped, aligned on the escaped widths, formulas as they are (a terminal runs none)', () => {
    const out = renderTable(ctx(true), ['h1', 'h2', 'h3'], rows);
    expect(out.replace(/\n/g, '')).not.toMatch(UNSAFE);
    expect(out.split('\n')).toEqual(['h1       h2            h3', '-------  ------------  --------', 'a\\tb\\nc  =1+1          -5.00000', 'x,"y"    \\x1b]0;t\\x07']);
  });

  it('CSV (RFC 4180): CRLF records, quoting where needed, the same cells as the TSV', () => {
    const csv = renderTable(ctx(true), ['h1', 'h2', 'h3'], rows, { csv: true });
    expect(csv).toBe('h1,h2,h3\r\na\\tb\\nc,\'=1+1,-5.00000\r\n"x,""y""",\\x1b]0;t\\x07,\r\n');
    const tsv = renderTable(ctx(false), ['h1', 'h2', 'h3'], rows).split('\n').map((l) => l.split('\t'));
    expect(parse(csv)).toEqual(tsv);
  });
});

describe('safeJson', () => {
  it('the same JSON value, with DEL, C1 and bidi characters as \\u escapes', () => {
    const value = { nombre: 'a\x1b]0;t\x07\u202e\x9b\x7f\u2066z', n: 1, lista: ['\t', '\n'] };
    const text = safeJson(value);
    expect(text).not.toMatch(UNSAFE);
    expect(text).toContain('\\u202e\\u009b\\u007f\\u2066');
    expect(JSON.parse(text)).toEqual(value);
    expect(JSON.parse(safeJson(value, 2))).toEqual(value);
  });
});
