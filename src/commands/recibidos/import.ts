/**
 * `fecr recibidos import FILE.xml|DIR|-`: checks and stores suppliers' comprobantes. A folder is streamed: its *.xml
 * files are read and imported 50 at a time (and at most 16 MiB), with a progress bar on a terminal that can be redrawn
 * (a plain line now and then on one that cannot, nothing when stderr is not a terminal), then a summary. Every refused
 * file is named with its findings on stderr and the exit code is 1; all valid (or already imported): 0.
 *
 * Files are read without trusting them (client/recibidos-files.ts): regular files only (a symlink only to one inside
 * the folder), never more than the size limit + 1 bytes (FECR_RECIBIDOS_MAX_BYTES, default 4 MiB). An entry that is
 * not read is one refusal with its reason, and the others go on.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { resolvePath, writeLine } from '../../cli/io.js';
import { printJson, progressStyle } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import type { ImportResult, RecibidoSummary } from '../../client/recibidos.js';
import { notReadResult, readImportFile, readImportStream, receivedMaxBytes, type ReadOutcome } from '../../client/recibidos-files.js';
import { findingLines, withBuyer, type ImportFlags } from './shared.js';

const BATCH = 50;
const BATCH_BYTES = 16 * 1024 * 1024;

interface Sources {
  files: string[];
  stdin: boolean;
  /** A folder's real path: its entries' symlinks must resolve inside it. */
  folder?: string;
}

async function sources(ctx: Ctx, source: string): Promise<Sources> {
  if (source === '-') return { files: ['-'], stdin: true };
  const full = resolvePath(ctx.io, source);
  let st;
  try {
    st = await stat(full);
  } catch (e) {
    throw new UserError(`${source}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : (e as Error).message}`);
  }
  if (!st.isDirectory()) return { files: [full], stdin: false };
  let folder: string;
  let names: string[];
  try {
    folder = await realpath(full);
    names = (await readdir(folder)).filter((n) => n.toLowerCase().endsWith('.xml')).sort();
  } catch (e) {
    throw new UserError(`${source}: the folder cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (names.length === 0) throw new UserError(`${source}: no .xml files in this folder`);
  return { files: names.map((n) => path.join(folder, n)), stdin: false, folder };
}

function maxBytes(ctx: Ctx): number {
  try {
    return receivedMaxBytes(ctx.io.env);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

class Progress {
  private readonly style;
  private lastLine = 0;
  private drawn = false;
  constructor(
    private readonly ctx: Ctx,
    private readonly total: number,
  ) {
    this.style = total > 1 ? progressStyle(ctx, 'stderr') : 'none';
  }
  update(done: number, refused: number): void {
    if (this.style === 'none') return;
    const text = `importing ${done}/${this.total}${refused ? ` (${refused} refused)` : ''}`;
    if (this.style === 'redraw') {
      const width = 24;
      const fill = Math.round((done / this.total) * width);
      this.ctx.io.stderr.write(`\r[${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${text}\x1b[K`);
      this.drawn = true;
    } else if (Date.now() - this.lastLine > 2_000 || done === this.total) {
      this.lastLine = Date.now();
      writeLine(this.ctx.io.stderr, text);
    }
  }
  end(): void {
    if (this.drawn) this.ctx.io.stderr.write('\n');
  }
}

export async function run(ctx: Ctx, source: string, f: ImportFlags): Promise<void> {
  const limit = maxBytes(ctx);
  const { files, stdin, folder } = await sources(ctx, source);
  const slots: (ImportResult | undefined)[] = new Array(files.length);
  const progress = new Progress(ctx, files.length);
  const done = () => slots.filter((x) => x !== undefined);
  let pendientes: RecibidoSummary[] = [];
  await withBuyer(ctx, async (r) => {
    // Read one file at a time (each at most the limit + 1 bytes); import in batches of 50 files or 16 MiB.
    let batch: { i: number; file: Extract<ReadOutcome, { bytes: Uint8Array }> }[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const out = await r.import(batch.map((b) => b.file));
      batch.forEach((b, k) => (slots[b.i] = out[k]));
      batch = [];
      bytes = 0;
      const all = done();
      progress.update(all.length, all.filter((x) => x.estado === 'invalido').length);
    };
    for (const [i, file] of files.entries()) {
      const name = stdin ? '-' : path.relative(ctx.io.cwd, file) || file;
      const got = stdin ? await readImportStream(ctx.io.stdin, name, limit) : await readImportFile(file, name, { maxBytes: limit, ...(folder ? { folder } : {}) });
      if ('finding' in got) {
        slots[i] = notReadResult(name, got.finding);
        continue;
      }
      if (batch.length >= BATCH || (batch.length > 0 && bytes + got.bytes.length > BATCH_BYTES)) await flush();
      batch.push({ i, file: got });
      bytes += got.bytes.length;
    }
    await flush();
    // The documents not answered yet, for the warnings near the term (due.ts).
    if (done().some((x) => x.estado === 'pendiente')) pendientes = await r.list({ estado: 'pendiente' });
  }, { bulk: files.length > BATCH });
  progress.end();
  const results = done();
  const refused = results.filter((x) => x.estado === 'invalido');
  if (f.json) printJson(ctx, results);
  else if (results.length === 1 && refused.length === 0) {
    const x = results[0]!;
    // The clave, emisor and total are the supplier's words: through the sanitiser.
    writeLine(ctx.io.stdout, safeText(`${x.clave} ${x.estado}${x.creado ? '' : ' (already imported)'}: ${x.tipo} from ${x.emisor}, total ${x.totalComprobante}, Hacienda ${x.haciendaEstado ?? 'unknown'}`));
  } else if (results.length > 1) {
    // Of the valid files: new, or already imported; a refused one is neither (it was not read, or failed its checks).
    const nuevos = results.filter((x) => x.estado !== 'invalido' && x.creado).length;
    const earlier = results.filter((x) => x.estado !== 'invalido' && !x.creado).length;
    // id 0: an entry that was not read (not a regular file, …).
    const notRead = results.filter((x) => x.id === 0).length;
    const notAtHacienda = results.filter((x) => x.estado !== 'invalido' && x.haciendaEstado !== 'aceptado').length;
    writeLine(
      ctx.io.stdout,
      `imported ${results.length} files: ${results.length - refused.length} valid, ${refused.length} refused${notRead ? ` (${notRead} not read)` : ''}; ${nuevos} new, ${earlier} already imported${notAtHacienda ? `; ${notAtHacienda} not accepted by Hacienda yet (see the warnings)` : ''}`,
    );
  }
  if (!f.json) {
    for (const x of results) {
      if (x.estado === 'invalido') continue;
      // What Hacienda said at import, unless it has accepted the document since (asked again when answering it).
      const avisos = x.haciendaEstado === 'aceptado' ? x.avisos.filter((a) => a.path !== 'hacienda') : x.avisos;
      if (results.length === 1) findingLines(ctx, avisos, '', 'warning: ');
      else {
        // A folder: per file, when Hacienda has no record of the document (or has not accepted it) yet (issue 26).
        const h = avisos.find((a) => a.path === 'hacienda');
        if (h) writeLine(ctx.io.stderr, safeText(`warning: ${x.archivo}: ${h.message}`));
      }
    }
  }
  if (pendientes.length > 0) {
    const { dueRows, dueTerm, dueWarnings } = await import('./due.js');
    const claves = new Set(results.map((x) => x.clave));
    const term = await dueTerm(ctx);
    dueWarnings(ctx, dueRows(pendientes.filter((p) => claves.has(p.clave)), ctx.now(), term), term);
  }
  if (refused.length > 0) {
    if (!f.json) {
      // File names are outside text too (a folder's *.xml may be named anything): through the sanitiser.
      writeLine(ctx.io.stderr, `error: ${refused.length === 1 ? `${safeText(refused[0]!.archivo)} was refused` : `${refused.length} files were refused`}`);
      for (const x of refused) {
        if (refused.length > 1) writeLine(ctx.io.stderr, `${safeText(x.archivo)}:`);
        findingLines(ctx, x.hallazgos, refused.length > 1 ? '  ' : '');
      }
    }
    throw new SilentExit(EXIT.error);
  }
}
