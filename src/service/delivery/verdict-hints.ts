/**
 * Verdicts told by the embedded emulator (issue 31): in a local batch the emulator runs on a thread of this process
 * and tells each verdict as it stores it, as Hacienda's callback tells a hosted service. The worker then polls that
 * document at once, and its scheduled polls can wait longer: a batch made 2.8 status queries per document, 1.8 of
 * them too early (each a lease, two reads, a GET and a reschedule), where one is enough.
 *
 * Only a hint: a verdict told and lost (or never told) leaves the document to its scheduled poll. The maps are bounded,
 * so a run that is told of documents it never sent does not grow.
 */
export class VerdictHints {
  /** Claves sent and not told decided yet → their document ids. */
  private readonly sent = new Map<string, number>();
  /** Claves told decided before their send was recorded here (the answer raced the send's commit). */
  private readonly early = new Set<string>();

  constructor(
    /** Makes these documents' poll jobs due now. */
    private readonly want: (documentIds: number[]) => void,
    private readonly max = 50_000,
  ) {}

  /** The document was received by Hacienda (its send job is done and its poll job stored). */
  sentDocument(clave: string, documentId: number): void {
    if (this.early.delete(clave)) return this.want([documentId]);
    bounded(this.sent, this.max).set(clave, documentId);
  }

  /** Hacienda decided these keys (claves). */
  decided(keys: readonly string[]): void {
    const ids: number[] = [];
    for (const key of keys) {
      const id = this.sent.get(key);
      if (id === undefined) {
        bounded(this.early, this.max).add(key);
        continue;
      }
      this.sent.delete(key);
      ids.push(id);
    }
    if (ids.length > 0) this.want(ids);
  }

  /** The document's verdict is stored: nothing more to hear about it. */
  forget(clave: string): void {
    this.sent.delete(clave);
    this.early.delete(clave);
  }
}

/** The collection with room for one more: its oldest entry dropped when it is full (Map and Set keep insertion order). */
function bounded<T extends Map<string, unknown> | Set<string>>(c: T, max: number): T {
  if (c.size >= max) c.delete(c.keys().next().value!);
  return c;
}
