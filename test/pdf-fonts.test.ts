// The PDF's fonts parsed once per process (src/service/pdf-fonts.ts): a PDF rendered with the shared parsed fonts is
// byte for byte the PDF a fresh parse gives (the first render in a process parses; later ones reuse), for documents
// of different kinds in any order (the fonts' subsets encoded or reused from an earlier PDF with the same glyphs),
// and the reuse makes a PDF several times cheaper.
import { describe, expect, it } from 'vitest';
import { issueSigned } from './helpers/issue.js';
import { renderPdf } from '../src/service/pdf.js';
import { fixtureBody } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';

const issuer = makeTestIssuer();
function row(fixture: string, n: number) {
  const r = issueSigned({ ...fixtureBody(fixture), numeroReferencia: n }, issuer, new Date('2026-11-24T10:00:00-06:00'));
  return { xml: r.xml, state: 'aceptado' as const, clave: r.doc.clave, kind: r.doc.kind, decided_at: Date.parse('2026-11-24T10:05:00-06:00') };
}

describe('shared parsed fonts', () => {
  it('the same bytes as the first (fresh-parse) render, whatever came between', async () => {
    const fe = row('01-fe-servicios-13', 11);
    const nc = row('09-nc-devolucion', 12);
    const first = await renderPdf(undefined, fe); // this process's first PDF: the fonts are parsed here
    const t0 = performance.now();
    const ncPdf = await renderPdf(undefined, nc);
    const again = await renderPdf(undefined, fe);
    const reused = (performance.now() - t0) / 2;
    expect(again.equals(first)).toBe(true);
    expect(ncPdf.equals(first)).toBe(false);
    expect((await renderPdf(undefined, nc)).equals(ncPdf)).toBe(true);
    // Rendered again, the fonts' subsets come from the kept bytes of the same glyph lists (SUBSET_CACHE_SIZE): the same PDF.
    expect((await renderPdf(undefined, fe)).equals(first)).toBe(true);
    expect((await renderPdf(undefined, nc)).equals(ncPdf)).toBe(true);
    expect(first.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(reused).toBeLessThan(1_000);
  });
});
