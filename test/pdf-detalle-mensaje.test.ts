// Issue 26, item 5: the PDF of a rejected document prints Hacienda's DetalleMensaje as text. Its list has CR LF line
// ends (NOTES §6.3) and pdfkit drew each CR as a missing-glyph box, the list run together; now each item is a line of
// its own (`-408 El Código …`), read back with pdftotext: no replacement character, no box, no control character.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEXTOS } from '../src/core/rules/hacienda-codes.js';
import { renderPdf } from '../src/service/pdf.js';
import { detalleLines } from '../src/service/pdf-content.js';
import { validInvoice } from './helpers/bodies.js';
import { issueSigned } from './helpers/issue.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = mkdtempSync(join(tmpdir(), 'fecr-pdf-detalle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OPENING = 'Este comprobante fue recibido en el ambiente de pruebas, por lo cual no tiene validez para fines tributarios.';
// The sandbox's rejected layout, word for word (NOTES §6.3): CR LF inside the list, doubled quotes.
const REJECTED =
  `${OPENING}\n\nEl comprobante electrónico tiene los siguientes errores: \r\n[\r\ncodigo, mensaje, fila, columna\r\n` +
  `-408, ""${TEXTOS.actividad408}"", 0, 0\r\n-37, ""${TEXTOS.ubicacion37}"", 0, 0\r\nLa firma del documento no es XAdES, se obtuvo [ERROR]\r\n\r\n]`;

/**
 * The glyphs the PDF draws that its font does not have: glyph 0 (.notdef, the box) in the hex strings of the TJ
 * operators of its content streams (pdfkit writes text as 4-digit glyph ids). pdftotext does not show a box, so
 * this looks at what is drawn.
 */
function missingGlyphs(file: string): number {
  const bytes = readFileSync(file);
  const s = bytes.toString('latin1');
  let n = 0;
  for (const m of s.matchAll(/stream\r?\n/g)) {
    const start = m.index + m[0].length;
    let content: string;
    try {
      content = inflateSync(bytes.subarray(start, s.indexOf('endstream', start))).toString('latin1');
    } catch {
      continue;
    }
    for (const tj of content.matchAll(/\[([^\]]*)\]\s*TJ/g)) for (const h of tj[1]!.matchAll(/<([0-9a-fA-F]*)>/g)) for (let i = 0; i + 4 <= h[1]!.length; i += 4) if (h[1]!.slice(i, i + 4) === '0000') n++;
  }
  return n;
}

/** The PDF of a document in `state` with `detalle`, as pdftotext reads it (raw order, lines as laid out). */
async function pdfText(state: 'rechazado' | 'error', detalle: string): Promise<string> {
  const t = makeTestIssuer();
  const r = issueSigned(validInvoice(), t);
  const file = join(dir, `${state}-${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, await renderPdf(undefined, { xml: r.xml, clave: r.doc.clave, state, detalle_mensaje: detalle }));
  const p = spawnSync('pdftotext', ['-raw', file, '-'], { encoding: 'utf8' });
  if (p.status !== 0) throw new Error(`pdftotext failed: ${p.stderr}`);
  expect(missingGlyphs(file), 'glyphs drawn as boxes').toBe(0);
  return p.stdout;
}

const BAD_GLYPHS = /[\ufffd\u25a1\u25af\u2610\u0000-\u0009\u000b\u000d-\u001f\u007f-\u009f]/u;

describe("the PDF prints Hacienda's text as text", () => {
  it('a rejection: one item a line, the code first, the warning marked; no box, no replacement character', async () => {
    const text = await pdfText('rechazado', REJECTED);
    expect(text).toContain('Detalle de Hacienda');
    expect(text).not.toMatch(BAD_GLYPHS);
    const lines = text.split('\n').map((l) => l.trim());
    // Each item starts a line of its own (a long one wraps onto the next lines).
    expect(lines.some((l) => l.startsWith('-408 El Código de la Actividad Económica'))).toBe(true);
    expect(lines.some((l) => l.startsWith('aviso: -37 Estimado obligado tributario'))).toBe(true);
    expect(lines).toContain('La firma del documento no es XAdES, se obtuvo [ERROR]');
    // The whole text is there, in order, whatever the wrapping.
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain(`-408 ${TEXTOS.actividad408}`);
    expect(flat.indexOf('-408')).toBeLessThan(flat.indexOf('aviso: -37'));
    // Hacienda's layout is not printed: no heading of its list, no doubled quotes.
    expect(flat).not.toContain('codigo, mensaje, fila, columna');
    expect(flat).not.toContain('""');
  }, 30_000);

  it("a DetalleMensaje without a list: its own lines, each a line; controls never reach the page", async () => {
    const text = await pdfText('error', 'Hacienda indicó ind-estado error\r\nsegunda\tlínea\u0007 aquí');
    expect(text).not.toMatch(BAD_GLYPHS);
    const lines = text.split('\n').map((l) => l.trim());
    expect(lines).toContain('Hacienda indicó ind-estado error');
    expect(lines).toContain('segunda línea aquí');
  }, 30_000);

  it('detalleLines: the lines, cut at 1500 characters with "…"', () => {
    expect(detalleLines(REJECTED, false)).toEqual([`-408 ${TEXTOS.actividad408}`, `aviso: -37 ${TEXTOS.ubicacion37}`, 'La firma del documento no es XAdES, se obtuvo [ERROR]']);
    expect(detalleLines(null, false)).toEqual([]);
    const long = detalleLines(`codigo, mensaje, fila, columna\r\n${Array.from({ length: 40 }, (_, i) => `-46, ""${TEXTOS.linea46(String(i + 1))}"", 0, 0`).join('\r\n')}`, false);
    expect(long.join('').length).toBeLessThanOrEqual(1501);
    expect(long.at(-1)!.endsWith('…')).toBe(true);
  });
});
