/**
 * Watches the state of many documents with one query per tick, for the local run's waits (local-run.ts: until
 * sent, until a verdict): a batch with hundreds of documents in flight costs one `SELECT id, state … WHERE id
 * IN (…)` every `intervalMs`, not one query per document per tick. The timer runs only while someone waits.
 */
import type { Kysely } from 'kysely';
import { documentStates } from '../store/documents.js';
import type { Database, DocumentState } from '../store/schema.js';

interface Waiter {
  /** Resolves with the state once it differs from `from`, or with undefined at the deadline. */
  from: DocumentState | undefined;
  deadline: number;
  resolve: (state: DocumentState | undefined) => void;
}

/** Rows per query (SQLite's default limit of host parameters is 32 766; stay far below it). */
const CHUNK = 500;

export class DocumentWatch {
  private readonly waiters = new Map<number, Set<Waiter>>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly intervalMs = 20,
  ) {}

  /**
   * Resolves with the document's state as soon as it is not `from` (at once when it already is not), or with
   * undefined after `timeoutMs`.
   */
  changeFrom(id: number, from: DocumentState | undefined, timeoutMs: number): Promise<DocumentState | undefined> {
    return new Promise((resolve) => {
      const w: Waiter = { from, deadline: Date.now() + Math.max(0, timeoutMs), resolve };
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      set.add(w);
      this.schedule(0);
    });
  }

  /** Resolves every wait now with undefined (the backend is closing). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const set of this.waiters.values()) for (const w of set) w.resolve(undefined);
    this.waiters.clear();
  }

  private schedule(delay: number): void {
    if (this.timer || this.ticking || this.waiters.size === 0) return;
    this.timer = setTimeout(() => void this.tick(), delay);
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.ticking = true;
    try {
      const ids = [...this.waiters.keys()];
      const states = new Map<number, DocumentState>();
      for (let i = 0; i < ids.length; i += CHUNK) {
        const rows = await documentStates(this.db, ids.slice(i, i + CHUNK));
        for (const r of rows) states.set(r.id, r.state);
      }
      const now = Date.now();
      for (const id of ids) {
        const set = this.waiters.get(id);
        if (!set) continue;
        const state = states.get(id);
        for (const w of set) {
          if (state !== undefined && state !== w.from) w.resolve(state);
          else if (now >= w.deadline) w.resolve(undefined);
          else continue;
          set.delete(w);
        }
        if (set.size === 0) this.waiters.delete(id);
      }
    } catch {
      // A failed query (database closing): the waits time out or are resolved by close().
    } finally {
      this.ticking = false;
      this.schedule(this.intervalMs);
    }
  }
}
