import { writeFile } from 'node:fs/promises';
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { resolvePath } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import type { FileType } from '../../client/backend.js';
import { withBackend } from '../backend.js';
import { checkClave, DECIDED } from '../documents/shared.js';

export interface DownloadFlags {
  type?: string;
  out?: string;
  json?: boolean;
}

const TYPES: Record<string, FileType> = { xml: 'XML', pdf: 'PDF', respuesta: 'RESPUESTA' };

/** ANEXOS v4.4 file names: clave.xml, clave.pdf, clave_respuesta.xml. */
export function defaultFileName(clave: string, type: FileType): string {
  return type === 'PDF' ? `${clave}.pdf` : type === 'RESPUESTA' ? `${clave}_respuesta.xml` : `${clave}.xml`;
}

export async function run(ctx: Ctx, claveArg: string, opts: DownloadFlags): Promise<void> {
  const clave = checkClave(claveArg);
  const type = TYPES[(opts.type ?? 'xml').trim().toLowerCase()];
  if (!type) throw new UsageError(`--type must be xml, pdf or respuesta (got "${opts.type}")`);
  if (opts.out === '-' && opts.json) throw new UsageError('--json cannot be used with --out - (the file goes to stdout)');
  const bytes = await withBackend(ctx, async (b) => {
    const got = await b.file(clave, type);
    if (got) return got;
    const s = await b.status(clave); // in local mode this also brings Hacienda's latest answer
    if (!s) throw new UserError(`no document with clave ${clave}`);
    if (type === 'RESPUESTA' && DECIDED.includes(s.estado)) {
      const again = await b.file(clave, type);
      if (again) return again;
    }
    if (type === 'RESPUESTA') throw new UserError(`no respuesta for ${clave}: Hacienda has not answered yet (${s.estado})`);
    throw new UserError(`no ${type} file for ${clave}`);
  });
  const out = opts.out ?? defaultFileName(clave, type);
  if (out === '-') {
    await new Promise<void>((resolve, reject) => ctx.io.stdout.write(bytes, (e) => (e ? reject(e) : resolve())));
    return;
  }
  try {
    await writeFile(resolvePath(ctx.io, out), bytes);
  } catch (e) {
    throw new UserError(`${out}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (opts.json) printJson(ctx, { clave, type, file: out, bytes: bytes.length });
  else info(ctx, `wrote ${out} (${bytes.length} bytes)`);
}
