/**
 * The PDF's fonts (DejaVu Sans, for ₡), parsed once per process instead of once per PDF, and what pdfkit would
 * otherwise redo for every PDF.
 *
 * pdfkit parses a registered TrueType font (fontkit.create, ~100 ms for DejaVu Sans) the first time each document
 * uses it, and a PDF is rendered for every download and every receptor mail (1 000 mails: 100 s of font parsing).
 * The parsed font is read-only and each document keeps its own subset and layout cache, so the parse is shared:
 * the first document parses the font as usual and its pdfkit font object's class and fontkit font are kept; later
 * documents get their own font object (pdfkit's EmbeddedFont: its own subset, widths, id) over the same fontkit font,
 * put where pdfkit's `font(name)` looks first (`_fontFamilies[name]`). The bytes produced are the same as with a fresh
 * parse (test/pdf-fonts.test.ts). Relies on pdfkit 0.17 internals: if they are not there, fonts are registered the
 * plain way.
 *
 * Two more per-PDF costs go the same way (bench/email.ts, docs/benchmarks.md), with the same bytes out:
 *  - pdfkit opens Helvetica for every new document (reading and parsing its .afm metrics, ≈ 3 ms) though our PDFs
 *    never use it: documents are created with `PDF_DOCUMENT_FONT` (no default font), and `registerFonts` counts the
 *    font id Helvetica would have taken, so DejaVu Sans is still F2 and F3 as before;
 *  - the text layout (fontkit shaping of each word, ≈ 40 % of a PDF): pdfkit caches it per font object, i.e. per
 *    document; the shared fonts share that cache too (a word shapes the same in every document: glyph ids and
 *    advances come from the same fontkit font; pdfkit copies what it changes). It is started afresh every
 *    `LAYOUT_CACHE_DOCUMENTS` documents so that a long-running service does not keep every word it ever printed;
 *  - the embedded subset (fontkit's TTFSubset.encode: every glyph decoded and the tables written, ≈ 20 % of a PDF,
 *    issue 31): its bytes depend only on the font and the subset's glyphs in their order, so the bytes of the last
 *    `SUBSET_CACHE_SIZE` glyph lists per font are kept and a PDF with the same list gets them without encoding.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

type FontName = 'body' | 'bold';

interface PdfkitInternals {
  registerFont(name: string, src: Buffer): unknown;
  font(name: string): unknown;
  _font?: ({ constructor: new (doc: unknown, font: unknown, id: string) => unknown; font?: unknown } & LayoutCached) | null;
  _fontFamilies?: Record<string, unknown>;
  _fontCount?: number;
}

interface LayoutCached {
  layoutCache?: Record<string, unknown>;
}

/** The PDFDocument option that opens no default font (pdfkit's default, Helvetica, is never used by our PDFs). */
export const PDF_DOCUMENT_FONT = { font: null as unknown as string };

/** Documents that share one layout cache before it is started afresh. */
export const LAYOUT_CACHE_DOCUMENTS = 200;
/** Per font, pdfkit's layout cache (text → its shaped run), shared by the documents since the last fresh start. */
let layoutCaches: Partial<Record<FontName, Record<string, unknown>>> = {};
let layoutCacheUses = 0;

/** Subset glyph lists whose encoded bytes are kept, per font. */
export const SUBSET_CACHE_SIZE = 32;
const subsetBytes: Record<FontName, Map<string, Uint8Array>> = { body: new Map(), bold: new Map() };

interface Subsetted {
  subset?: { glyphs?: unknown; encode?: () => Uint8Array };
}

/** Makes `font`'s subset answer encode() from the kept bytes of the same glyph list (fontkit's output for it). */
function reuseSubsetBytes(font: Subsetted, name: FontName): void {
  const subset = font.subset;
  if (!subset || !Array.isArray(subset.glyphs) || typeof subset.encode !== 'function') return;
  const encode = subset.encode.bind(subset);
  const glyphs = subset.glyphs as number[];
  const kept = subsetBytes[name];
  subset.encode = () => {
    // Taken before encoding: encode() itself appends the components of compound glyphs.
    const key = glyphs.join(',');
    const hit = kept.get(key);
    if (hit) {
      kept.delete(key);
      kept.set(key, hit);
      return hit;
    }
    const out = encode();
    if (kept.size >= SUBSET_CACHE_SIZE) kept.delete(kept.keys().next().value!);
    kept.set(key, out);
    return out;
  };
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
  // Created without Helvetica (PDF_DOCUMENT_FONT): its id F1 stays taken, as when pdfkit opened it.
  if (pdf._font === null && pdf._fontCount === 0) pdf._fontCount = 1;
  if (parsed.size !== 2 || !pdf._fontFamilies || typeof pdf._fontCount !== 'number') return;
  if (++layoutCacheUses > LAYOUT_CACHE_DOCUMENTS) {
    layoutCaches = {};
    layoutCacheUses = 1;
  }
  // In the first document's order, so that every PDF numbers its fonts alike (same bytes as a fresh parse).
  for (const [name, shared] of [...parsed].sort((x, y) => x[1].id - y[1].id)) {
    const font = new shared.EmbeddedFont(pdf, shared.font, `F${++pdf._fontCount}`) as LayoutCached;
    // One cache per font (keyed by the text alone); none when the document turned pdfkit's cache off.
    if (font.layoutCache) font.layoutCache = layoutCaches[name] ??= Object.create(null) as Record<string, unknown>;
    reuseSubsetBytes(font as Subsetted, name);
    pdf._fontFamilies[name] = font;
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
