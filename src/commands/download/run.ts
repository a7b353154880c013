import { writeFile } from 'node:fs/promises';
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { resolvePath } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import type { FileType } from '../../client/backend.js';
import { withBackend } from '../backend.js';
import { checkClave, DECIDED } from '../documents/shared.js';
import { codeTable } from '../../core/code-table.js';
import { documentFileName } from '../../core/file-names.js';

export interface DownloadFlags {
  type?: string;
  out?: string;
  json?: boolean;
}

const TYPES: Record<string, FileType> = codeTable({ xml: 'XML', pdf: 'PDF', respuesta: 'RESPUESTA' });

/** A received comprobante's answer files: our MensajeReceptor and Hacienda's answer to it (fecr recibidos). */
const RECEIVED_TYPES: Record<string, 'MENSAJE_RECEPTOR' | 'RESPUESTA_MENSAJE_RECEPTOR'> = codeTable({
  'mensaje-receptor': 'MENSAJE_RECEPTOR',
  'respuesta-receptor': 'RESPUESTA_MENSAJE_RECEPTOR',
});

async function downloadReceived(ctx: Ctx, clave: string, type: 'MENSAJE_RECEPTOR' | 'RESPUESTA_MENSAJE_RECEPTOR', opts: DownloadFlags): Promise<void> {
  const bytes = await withBackend(ctx, async (b) => b.recibidos?.().file(clave, type));
  if (!bytes) throw new UserError(`no ${type === 'MENSAJE_RECEPTOR' ? 'MensajeReceptor' : "answer of Hacienda to the MensajeReceptor"} for ${clave} (answer it with fecr recibidos aceptar|parcial|rechazar)`);
  await save(ctx, clave, bytes, opts.out ?? `${clave}_${type === 'MENSAJE_RECEPTOR' ? 'mensaje_receptor' : 'respuesta_mensaje_receptor'}.xml`, typeName(type), opts);
}

function typeName(t: string): string {
  return t.toLowerCase().replace(/_/g, '-');
}

/** ANEXOS v4.4 file names: clave.xml, clave.pdf, clave_respuesta.xml (the mail's attachments have the same). */
export function defaultFileName(clave: string, type: FileType): string {
  return documentFileName(clave, type);
}

export async function run(ctx: Ctx, claveArg: string, opts: DownloadFlags): Promise<void> {
  const clave = checkClave(claveArg);
  const typeName = (opts.type ?? 'xml').trim().toLowerCase();
  const mr = RECEIVED_TYPES[typeName];
  const type = TYPES[typeName] ?? 'XML';
  if (!TYPES[typeName] && !mr) throw new UsageError(`--type must be xml, pdf, respuesta, mensaje-receptor or respuesta-receptor (got "${opts.type}")`);
  if (opts.out === '-' && opts.json) throw new UsageError('--json cannot be used with --out - (the file goes to stdout)');
  if (mr) return downloadReceived(ctx, clave, mr, opts);
  const bytes = await withBackend(ctx, async (b) => {
    const got = await b.file(clave, type);
    if (got) return got;
    const s = await b.status(clave); // in local mode this also brings Hacienda's latest answer
    if (!s) {
      // Not one of ours: a supplier's comprobante we received (fecr recibidos import)?
      const received = type === 'PDF' ? null : await b.recibidos?.().file(clave, type === 'XML' ? 'XML' : 'RESPUESTA');
      if (received) return received;
      throw new UserError(`no document with clave ${clave}`);
    }
    if (type === 'RESPUESTA' && DECIDED.includes(s.estado)) {
      const again = await b.file(clave, type);
      if (again) return again;
    }
    if (type === 'RESPUESTA') throw new UserError(`no respuesta for ${clave}: Hacienda has not answered yet (${s.estado})`);
    throw new UserError(`no ${type} file for ${clave}`);
  });
  await save(ctx, clave, bytes, opts.out ?? defaultFileName(clave, type), type, opts);
}

async function save(ctx: Ctx, clave: string, bytes: Buffer, out: string, type: string, opts: DownloadFlags): Promise<void> {
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
