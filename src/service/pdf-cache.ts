/**
 * Rendered PDFs of final documents (aceptado, rechazado, error), kept in memory by document row: such a PDF never
 * changes (pdf.ts renders the same bytes from the same row, and a final row no longer changes), so a document
 * downloaded again is not rendered again. Bounded by bytes (least recently used first out); renders of one key in
 * flight are shared (two downloads at once render once). A key is the row's id with its state, verdict time and last
 * update (what renderPdf reads is set with them: any later change to the row makes another key); the caller has
 * already checked that the row is the account's.
 */
import { FINAL_STATES } from '../core/lifecycle.js';
import type { DocumentRow } from '../store/schema.js';

/** Default budget: ≈ 1 000 PDFs of an ordinary invoice (≈ 30 KB), or 250 of 1 000 lines (≈ 125 KB). */
export const PDF_CACHE_BYTES = 32 * 1024 * 1024;

export class PdfCache {
  private readonly kept = new Map<string, Buffer>();
  private readonly rendering = new Map<string, Promise<Buffer>>();
  private bytes = 0;
  /** PDFs answered from memory (for the tests and the bench). */
  hits = 0;

  constructor(private readonly maxBytes = PDF_CACHE_BYTES) {}

  /** The key of a row whose PDF can be kept, or undefined (not final yet: its state and PDF may still change). */
  static keyOf(row: Pick<DocumentRow, 'state'> & Partial<Pick<DocumentRow, 'id' | 'decided_at' | 'updated_at'>>): string | undefined {
    if (!FINAL_STATES.includes(row.state) || row.id === undefined) return undefined;
    return `${row.id}:${row.state}:${row.decided_at ?? ''}:${row.updated_at ?? ''}`;
  }

  /** The kept PDF of `key`, else `render()`'s, kept when it fits. No key: rendered every time. */
  async get(key: string | undefined, render: () => Promise<Buffer>): Promise<Buffer> {
    if (key === undefined) return render();
    const kept = this.kept.get(key);
    if (kept) {
      this.hits++;
      this.kept.delete(key); // most recently used last
      this.kept.set(key, kept);
      return kept;
    }
    const pending = this.rendering.get(key);
    if (pending) return pending;
    const p = render().then(
      (pdf) => {
        this.rendering.delete(key);
        this.keep(key, pdf);
        return pdf;
      },
      (e: unknown) => {
        this.rendering.delete(key);
        throw e;
      },
    );
    this.rendering.set(key, p);
    return p;
  }

  get size(): number {
    return this.kept.size;
  }

  private keep(key: string, pdf: Buffer): void {
    // One PDF never takes more than an eighth of the budget.
    if (pdf.length > this.maxBytes / 8) return;
    this.kept.set(key, pdf);
    this.bytes += pdf.length;
    for (const [k, v] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(k);
      this.bytes -= v.length;
    }
  }
}
