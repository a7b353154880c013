/** What the `fecr hacienda` verbs share: the emulator's test suppliers issuing comprobantes to a receptor. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { resolvePath } from '../../cli/io.js';
import type { SupplierIssued, SupplierIssueRequest } from '../../client/emulator-suppliers.js';

/** The tipo de identificación a bare number has by its length: 9 física, 10 jurídica, 11–12 DIMEX. */
export function tipoOfIdentificacion(numero: string): '01' | '02' | '03' | undefined {
  if (/^[1-9]\d{8}$/.test(numero)) return '01';
  if (/^\d{10}$/.test(numero)) return '02';
  if (/^[1-9]\d{10,11}$/.test(numero)) return '03';
  return undefined;
}

/** The receptor of the suppliers' documents, from its bare identificación (`flag` names it in the usage error). */
export function supplierReceptor(flag: string, numero: string): { tipo: string; numero: string } {
  const tipo = tipoOfIdentificacion(numero);
  if (!tipo) throw new UsageError(`${flag} must be an identificación: 9 digits (física), 10 (jurídica) or 11-12 (DIMEX)`);
  return { tipo, numero };
}

/** Asks the running emulator at `url` for the documents (client/emulator-suppliers.ts); its refusal is one CLI error. */
export async function issueAt(url: string, req: SupplierIssueRequest): Promise<SupplierIssued[]> {
  const { issueSupplierDocuments, SupplierIssueError } = await import('../../client/emulator-suppliers.js');
  try {
    return await issueSupplierDocuments(url, req);
  } catch (e) {
    if (e instanceof SupplierIssueError) throw new UserError([e.message, ...e.issues.map((x) => `  ${x}`)].join('\n'));
    throw e;
  }
}

/** Writes each document as `<clave>.xml` in `outDir` (made if missing); returns the paths, in order. */
export function writeSupplierFiles(ctx: Ctx, outDir: string, docs: SupplierIssued[]): string[] {
  const dir = resolvePath(ctx.io, outDir);
  try {
    mkdirSync(dir, { recursive: true });
    return docs.map((d) => {
      const file = path.join(dir, `${d.clave}.xml`);
      writeFileSync(file, d.bytes);
      return file;
    });
  } catch (e) {
    throw new UserError(`${outDir}: cannot write the files (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** `fecr hacienda serve --supplier-invoices`: `count` invoices to `receptor` at start; written to `outDir` when given. */
export async function issueSupplierInvoices(ctx: Ctx, url: string, receptor: string, count: number, outDir?: string): Promise<{ clave: string; proveedor: string; file?: string }[]> {
  const docs = await issueAt(url, { receptor: supplierReceptor('--supplier-invoices', receptor), count });
  const files = outDir === undefined ? undefined : writeSupplierFiles(ctx, outDir, docs);
  return docs.map((d, i) => ({ clave: d.clave, proveedor: d.proveedor.nombre, ...(files ? { file: files[i]! } : {}) }));
}
