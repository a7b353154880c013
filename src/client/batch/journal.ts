/**
 * The batch journal beside the input (`<input>.journal`): append-only JSON lines, one written BEFORE a document is
 * submitted (`{row, key, bodyHash}`) and one after (`{row, key, clave, state}`), written and fsync'd in small groups
 * (every record waiting when a write starts goes in that write). `--resume` reads it and skips the documents whose
 * last record says "enviado" for the same key and body; everything else is submitted again, which the service
 * makes harmless (same issuer + kind + numbering + body → the same clave, nothing new stored). A row without
 * numeroReferencia (local mode numbers it) goes with a submission key made of the input, the row and the body
 * (submissionKeyOf): submitted again, it gets the document and number it already has, not a new number.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Finding } from '../../core/model.js';
import { KIND_OF_TIPO_DOC } from '../../core/lifecycle.js';

export type ResultState = 'enviado' | 'invalido' | 'error' | 'valido';

export interface StartRecord {
  row: number;
  key: string;
  bodyHash: string;
}

export interface DoneRecord {
  row: number;
  key: string;
  clave?: string;
  state: ResultState;
  numeroReferencia?: string | number;
  errors?: Finding[];
}

/** A document already finished in an earlier run. */
export interface Finished {
  row: number;
  clave: string;
  bodyHash: string;
  numeroReferencia?: string | number;
}

const TIPO: Readonly<Record<string, string>> = KIND_OF_TIPO_DOC;

/**
 * The numbering key of a body: emisor|tipoDoc|sucursal|terminal|numeroReferencia (what the service keys idempotency on).
 * A body without numeroReferencia (local mode numbers it) is keyed by its row instead: `…||row N`.
 */
export function documentKey(body: unknown, row?: number): string {
  const b = (body ?? {}) as Record<string, unknown>;
  const s = (v: unknown) => (v === undefined || v === null ? '' : String(v).trim());
  const tipo = s(b.tipoDoc);
  const key = [s(b.emisor), TIPO[tipo] ?? tipo, s(b.sucursal), s(b.terminal), s(b.numeroReferencia).replace(/^0+(?=\d)/, '')].join('|');
  return isUnnumbered(body) && row !== undefined ? `${key}|row ${row}` : key;
}

/** A body that leaves numeroReferencia out (local mode: the service takes the next free number for it). */
export function isUnnumbered(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && (body as { numeroReferencia?: unknown }).numeroReferencia === undefined;
}

/**
 * The submission key of a row without numeroReferencia: sha256 of the batch's input (the journal's absolute path), the
 * row and the body's hash. The same row of the same file with the same body always has the same key, so a resumed
 * (or restarted) batch gets the document that row already made, under its number, instead of a new number; a row
 * edited since is a new document.
 */
export function submissionKeyOf(journalFile: string, row: number, bodyHash: string): string {
  return `batch:${createHash('sha256').update(`${path.resolve(journalFile)}\n${row}\n${bodyHash}`).digest('hex')}`;
}

/** sha256 of the canonical JSON of a body (keys sorted at every level), as the service hashes it. */
export function bodyHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const o = value as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/**
 * Reads a journal: the documents whose last "done" record is enviado, by key (with the body hash of their
 * "start" record). A torn last line (a crash mid-write) is ignored.
 */
export async function readJournal(file: string): Promise<Map<string, Finished>> {
  const finished = new Map<string, Finished>();
  const started = new Map<string, string>();
  let input;
  try {
    input = createReadStream(file, { encoding: 'utf8' });
    await new Promise<void>((resolve, reject) => {
      input!.once('open', () => resolve());
      input!.once('error', reject);
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return finished;
    throw e;
  }
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    let rec: Partial<StartRecord & DoneRecord>;
    try {
      rec = JSON.parse(line) as Partial<StartRecord & DoneRecord>;
    } catch {
      continue;
    }
    if (typeof rec.key !== 'string') continue;
    if (typeof rec.bodyHash === 'string') {
      started.set(rec.key, rec.bodyHash);
    } else if (rec.state === 'enviado' && typeof rec.clave === 'string') {
      const hash = started.get(rec.key);
      if (hash) finished.set(rec.key, { row: rec.row ?? 0, clave: rec.clave, bodyHash: hash, ...(rec.numeroReferencia !== undefined ? { numeroReferencia: rec.numeroReferencia } : {}) });
    } else if (rec.state !== undefined) {
      finished.delete(rec.key);
    }
  }
  return finished;
}

/** Appends records; each `append` resolves once its group is written and fsync'd. */
export class JournalWriter {
  private pending: string[] = [];
  private waiters: Array<() => void> = [];
  private writing: Promise<void> | undefined;
  private failed: Error | undefined;

  private constructor(
    private readonly fh: FileHandle,
    /** The journal's path (rows without numeroReferencia are keyed by it: submissionKeyOf). */
    readonly file: string,
  ) {}

  static async open(file: string): Promise<JournalWriter> {
    return new JournalWriter(await open(file, 'a'), file);
  }

  append(rec: StartRecord | DoneRecord): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    this.pending.push(JSON.stringify(rec) + '\n');
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.kick();
    return done.then(() => {
      if (this.failed) throw this.failed;
    });
  }

  private kick(): void {
    if (this.writing) return;
    this.writing = (async () => {
      while (this.pending.length > 0) {
        const text = this.pending.join('');
        const waiters = this.waiters;
        this.pending = [];
        this.waiters = [];
        try {
          await this.fh.write(text);
          await this.fh.datasync();
        } catch (e) {
          this.failed ??= e as Error;
        }
        for (const w of waiters) w();
      }
    })().finally(() => {
      this.writing = undefined;
      if (this.pending.length > 0) this.kick();
    });
  }

  /** Writes what is pending and closes the file. */
  async close(): Promise<void> {
    while (this.writing) await this.writing;
    await this.fh.close();
  }
}
