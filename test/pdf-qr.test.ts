// The PDF's QR code of the clave, drawn as vector squares (src/service/pdf.ts drawQr): rasterized by poppler
// (pdftoppm, 300 dpi, grey), every module's centre has the colour of the QR code that `qrcode` computes for the clave,
// and the quiet zone around it is white; so a reader that decodes that QR code reads the clave.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import QRCode from 'qrcode';
import { afterAll, describe, expect, it } from 'vitest';
import { issueSigned } from './helpers/issue.js';
import { renderPdf } from '../src/service/pdf.js';
import { fixtureBody } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = mkdtempSync(join(tmpdir(), 'fecr-pdf-qr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A binary PGM (P5, 8-bit) as width, height and pixels. */
function readPgm(buf: Buffer): { width: number; height: number; px: Buffer } {
  const header: string[] = [];
  let i = 0;
  while (header.length < 4) {
    while (/\s/.test(String.fromCharCode(buf[i]!))) i++;
    let tok = '';
    while (!/\s/.test(String.fromCharCode(buf[i]!))) tok += String.fromCharCode(buf[i++]!);
    header.push(tok);
  }
  expect(header[0]).toBe('P5');
  return { width: Number(header[1]), height: Number(header[2]), px: buf.subarray(i + 1) };
}

describe('the QR code in the PDF', () => {
  it('every module of the clave’s QR code, and the quiet zone, as qrcode computes them', async () => {
    const issuer = makeTestIssuer();
    const r = issueSigned({ ...fixtureBody('01-fe-servicios-13'), numeroReferencia: 4242 }, issuer, new Date('2026-11-24T10:00:00-06:00'));
    const pdf = await renderPdf(undefined, { xml: r.xml, state: 'aceptado', clave: r.doc.clave, decided_at: Date.parse('2026-11-24T10:05:00-06:00') });
    const file = join(dir, 'fe.pdf');
    writeFileSync(file, pdf);
    const dpi = 300;
    const out = spawnSync('pdftoppm', ['-gray', '-r', String(dpi), '-f', '1', '-l', '1', file, join(dir, 'page')], { encoding: 'utf8' });
    expect(out.status, out.stderr).toBe(0);
    const { width, px } = readPgm(readFileSync(join(dir, 'page-1.pgm')));

    const modules = QRCode.create(r.doc.clave, { errorCorrectionLevel: 'M' }).modules;
    const n = modules.size;
    // Where pdf.ts draws it: 96 pt square at the top right, inside the 36 pt margins of an A4 page; one module of quiet zone.
    const side = 96;
    const x0 = 595.28 - 36 - side;
    const y0 = 36;
    const cell = side / (n + 2);
    const k = dpi / 72;
    const at = (row: number, col: number) => {
      const x = Math.round((x0 + (col + 1.5) * cell) * k);
      const y = Math.round((y0 + (row + 1.5) * cell) * k);
      return px[y * width + x]!;
    };
    let dark = 0;
    for (let row = -1; row <= n; row++) {
      for (let col = -1; col <= n; col++) {
        const want = row >= 0 && col >= 0 && row < n && col < n && modules.get(row, col) ? 'dark' : 'light';
        const v = at(row, col);
        expect([row, col, v < 64 ? 'dark' : v > 192 ? 'light' : 'grey']).toEqual([row, col, want]);
        if (want === 'dark') dark++;
      }
    }
    expect(dark).toBeGreaterThan(n * n * 0.3);
  });
});
