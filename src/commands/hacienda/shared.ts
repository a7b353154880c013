/** What the `fecr hacienda` verbs share: the emulator's test suppliers issuing invoices at start (`serve --supplier-invoices`). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { resolvePath } from '../../cli/io.js';

/** The tipo de identificación a bare number has by its length: 9 física, 10 jurídica, 11–12 DIMEX. */
export function tipoOfIdentificacion(numero: string): '01' | '02' | '03' | undefined {
  if (/^[1-9]\d{8}$/.test(numero)) return '01';
  if (/^\d{10}$/.test(numero)) return '02';
  if (/^[1-9]\d{10,11}$/.test(numero)) return '03';
  return undefined;
}

/** Asks the running emulator's test suppliers for `count` invoices to `receptor`; writes them to `outDir` when given. */
export async function issueSupplierInvoices(ctx: Ctx, url: string, receptor: string, count: number, outDir?: string): Promise<{ clave: string; proveedor: string; file?: string }[]> {
  const tipo = tipoOfIdentificacion(receptor);
  if (!tipo) throw new UsageError('--supplier-invoices must be an identificación: 9 digits (física), 10 (jurídica) or 11-12 (DIMEX)');
  const res = await fetch(`${url}/_emulator/suppliers/issue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ receptor: { tipo, numero: receptor }, cantidad: count }),
  });
  const body = (await res.json()) as { documentos?: { clave: string; proveedor: { nombre: string }; xml: string }[]; error?: string };
  if (!res.ok || !body.documentos) throw new UserError(`the emulator's suppliers could not issue: ${body.error ?? res.status}`);
  const dir = outDir === undefined ? undefined : resolvePath(ctx.io, outDir);
  if (dir) mkdirSync(dir, { recursive: true });
  return body.documentos.map((d) => {
    const file = dir ? path.join(dir, `${d.clave}.xml`) : undefined;
    if (file) writeFileSync(file, Buffer.from(d.xml, 'base64'));
    return { clave: d.clave, proveedor: d.proveedor.nombre, ...(file ? { file } : {}) };
  });
}
