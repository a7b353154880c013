/**
 * The PDF's fonts (DejaVu Sans, for ₡), parsed once per process instead of once per PDF.
 *
 * pdfkit parses a registered TrueType font (fontkit.create, ~100 ms for DejaVu Sans) the first time each document
 * uses it, and a PDF is rendered for every download and every receptor mail (1 000 mails: 100 s of font parsing).
 * The parsed font is read-only and each document keeps its own subset and layout cache, so the parse is shared:
 * the first document parses the font as usual and its pdfkit font object's class and fontkit font are kept; later
 * documents get their own font object (pdfkit's EmbeddedFont: its own subset, widths, id) over the same fontkit font,
 * put where pdfkit's `font(name)` looks first (`_fontFamilies[name]`). The bytes produced are the same as with a fresh
 * parse (test/pdf-fonts.test.ts). Relies on pdfkit 0.17 internals: if they are not there, fonts are registered the
 * plain way.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

type FontName = 'body' | 'bold';

interface PdfkitInternals {
  registerFont(name: string, src: Buffer): unknown;
  font(name: string): unknown;
  _font?: { constructor: new (doc: unknown, font: unknown, id: string) => unknown; font?: unknown };
  _fontFamilies?: Record<string, unknown>;
  _fontCount?: number;
}

let bytes: Record<FontName, Buffer> | undefined;
/** The first document's parsed fonts, in the order it opened them (pdfkit numbers fonts F2, F3… in that order). */
const parsed = new Map<FontName, { EmbeddedFont: new (doc: unknown, font: unknown, id: string) => unknown; font: unknown; id: number }>();

function fontBytes(): Record<FontName, Buffer> {
  return (bytes ??= {
    body: readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
    bold: readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')),
  });
}

/** Registers `body` and `bold` on a new pdfkit document, reusing the fonts parsed by an earlier document. */
export function registerFonts(doc: object): void {
  const pdf = doc as PdfkitInternals;
  const b = fontBytes();
  for (const name of ['body', 'bold'] as const) pdf.registerFont(name, b[name]);
  if (parsed.size !== 2 || !pdf._fontFamilies || typeof pdf._fontCount !== 'number') return;
  // In the first document's order, so that every PDF numbers its fonts alike (same bytes as a fresh parse).
  for (const [name, shared] of [...parsed].sort((x, y) => x[1].id - y[1].id)) {
    pdf._fontFamilies[name] = new shared.EmbeddedFont(pdf, shared.font, `F${++pdf._fontCount}`);
  }
}

/**
 * After the document used its fonts: keeps the first document's parsed fonts (and their order) for the next ones.
 */
export function keepParsedFonts(doc: object): void {
  const pdf = doc as PdfkitInternals;
  if (parsed.size === 2) return;
  const found = (['body', 'bold'] as const).map((name) => [name, pdf._fontFamilies?.[name] as (PdfkitInternals['_font'] & { id?: string }) | undefined] as const);
  const ids = found.map(([, f]) => Number(/^F(\d+)$/.exec(f?.id ?? '')?.[1]));
  // Both fonts opened, with pdfkit's ids: keep them (else this document teaches nothing; the next one may).
  if (!found.every(([, f], i) => f && typeof f.constructor === 'function' && f.font && Number.isInteger(ids[i]))) return;
  found.forEach(([name, f], i) => parsed.set(name, { EmbeddedFont: f!.constructor, font: f!.font, id: ids[i]! }));
}
