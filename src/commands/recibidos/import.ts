/**
 * `fecr recibidos import FILE.xml|DIR|-`: checks and stores suppliers' comprobantes. A folder is streamed: its *.xml
 * files are read and imported 50 at a time, with a progress bar on a terminal that can be redrawn (a plain line now
 * and then on one that cannot, nothing when stderr is not a terminal), then a summary. Every refused file is named
 * with its findings on stderr and the exit code is 1; all valid (or already imported): 0.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UserError } from '../../cli/errors.js';
import { readAll, resolvePath, writeLine } from '../../cli/io.js';
import { printJson, progressStyle } from '../../cli/output.js';
import type { ImportResult } from '../../client/recibidos.js';
import { findingLines, withBuyer, type ImportFlags } from './shared.js';

const BATCH = 50;

async function sources(ctx: Ctx, source: string): Promise<{ files: string[]; stdin: boolean }> {
  if (source === '-') return { files: ['-'], stdin: true };
  const full = resolvePath(ctx.io, source);
  let st;
  try {
    st = await stat(full);
  } catch (e) {
    throw new UserError(`${source}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : (e as Error).message}`);
  }
  if (!st.isDirectory()) return { files: [full], stdin: false };
  const names = (await readdir(full)).filter((n) => n.toLowerCase().endsWith('.xml')).sort();
  if (names.length === 0) throw new UserError(`${source}: no .xml files in this folder`);
  return { files: names.map((n) => path.join(full, n)), stdin: false };
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
  const { files, stdin } = await sources(ctx, source);
  const results: ImportResult[] = [];
  const progress = new Progress(ctx, files.length);
  await withBuyer(ctx, async (r) => {
    for (let i = 0; i < files.length; i += BATCH) {
      const chunk = files.slice(i, i + BATCH);
      const batch = await Promise.all(
        chunk.map(async (file) => ({ name: stdin ? '-' : path.relative(ctx.io.cwd, file) || file, bytes: stdin ? await readAll(ctx.io.stdin) : await readFile(file) })),
      );
      results.push(...(await r.import(batch)));
      progress.update(results.length, results.filter((x) => x.estado === 'invalido').length);
    }
  }, { bulk: files.length > BATCH });
  progress.end();
  const refused = results.filter((x) => x.estado === 'invalido');
  if (f.json) printJson(ctx, results);
  else if (results.length === 1 && refused.length === 0) {
    const x = results[0]!;
    writeLine(ctx.io.stdout, `${x.clave} ${x.estado}${x.creado ? '' : ' (already imported)'}: ${x.tipo} from ${x.emisor}, total ${x.totalComprobante}, Hacienda ${x.haciendaEstado ?? 'unknown'}`);
  } else if (results.length > 1) {
    const nuevos = results.filter((x) => x.creado).length;
    writeLine(
      ctx.io.stdout,
      `imported ${results.length} files: ${results.length - refused.length} valid, ${refused.length} refused; ${nuevos} new, ${results.length - nuevos} already imported`,
    );
  }
  if (!f.json) for (const x of results) if (x.avisos.length > 0 && x.estado !== 'invalido' && results.length === 1) findingLines(ctx, x.avisos.map((a) => ({ ...a, path: `warning: ${a.path}` })), '');
  if (refused.length > 0) {
    if (!f.json) {
      writeLine(ctx.io.stderr, `error: ${refused.length === 1 ? `${refused[0]!.archivo} was refused` : `${refused.length} files were refused`}`);
      for (const x of refused) {
        if (refused.length > 1) writeLine(ctx.io.stderr, `${x.archivo}:`);
        findingLines(ctx, x.hallazgos, refused.length > 1 ? '  ' : '');
      }
    }
    throw new SilentExit(EXIT.error);
  }
}
