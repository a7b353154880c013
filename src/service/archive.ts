/**
 * `fecr archive export` (issue 29): every file of a period, sales and purchases, as one .tar.gz with a manifest.
 *
 * Streams: the store is read in pages of PAGE rows (keyset on the row id), each file goes into the tar (tar-stream)
 * as it comes, with the tar's own backpressure (an entry's callback waits while gzip and the file lag behind), and
 * the manifest's lines go to a temporary file, added last as `manifest.jsonl`. What stays in memory is one page of
 * rows and one file at a time, whatever the period's size.
 *
 * Layout: `ventas/<clave>/comprobante.xml` (the signed comprobante), `respuesta-hacienda.xml` (Hacienda's
 * MensajeHacienda), `comprobante.pdf` (rendered from the row, as the API serves it; left out with `pdf: false`);
 * `compras/<clave>/comprobante.xml` (the supplier's), `respuesta-hacienda.xml` (Hacienda's answer to it, when we have
 * it), `mensaje-receptor.xml` (our MensajeReceptor) and `mensaje-receptor-respuesta-hacienda.xml` (Hacienda's answer
 * to it).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { sql } from 'kysely';
import tar from 'tar-stream';
import type { HaciendaEnvironment, ServiceContext } from './context.js';
import { ServiceError } from './service-error.js';

/** Rows read from the store per query. */
export const ARCHIVE_PAGE = 200;
export const MANIFEST_NAME = 'manifest.jsonl';
const SALE_KINDS = ['FE', 'ND', 'NC', 'TE', 'FEE', 'FEC', 'REP'];

export type ArchiveRole = 'comprobante' | 'respuesta_hacienda' | 'pdf' | 'mensaje_receptor' | 'mensaje_receptor_respuesta_hacienda';

/** One line of manifest.jsonl: one file of the archive. */
export interface ManifestLine {
  file: string;
  sha256: string;
  size: number;
  clave: string;
  kind: string;
  /** ventas: the issuer's own documents; compras: received ones and our answers to them. */
  side: 'ventas' | 'compras';
  role: ArchiveRole;
  fechaEmision: string;
  totalComprobante: string | null;
  totalImpuesto?: string | null;
  moneda: string | null;
  estado: string;
  /**
   * The environment the documents were sent in (issue 37.3): `archive verify` trusts the local emulator's seal (fecr's
   * test root) for Hacienda's answers only in an archive whose every line says `local`. Absent in archives of before.
   */
  env?: HaciendaEnvironment;
}

export interface ArchiveExportOptions {
  since: string;
  until: string;
  emisor?: string;
  pdf: boolean;
  /** False: the output stream is left open at the end (stdout). */
  endOutput?: boolean;
  /** Renders a sales row's PDF (service/pdf.ts renderPdf); given by the caller so this module stays light. */
  renderPdf?: (row: SaleRow) => Promise<Buffer>;
}

export interface ArchiveExportResult {
  documents: { ventas: number; compras: number };
  files: number;
  bytes: number;
}

export interface SaleRow {
  id: number;
  clave: string;
  kind: string;
  state: string;
  xml: string;
  response_xml: string | null;
  detalle_mensaje: string | null;
  fecha_emision: string;
  total_comprobante: string;
  moneda: string;
  created_at: number;
  decided_at: number | null;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The day after a YYYY-MM-DD date (the exclusive end of the period: fecha_emision is an ISO date-time). */
function nextDay(d: string): string {
  const t = new Date(`${d}T00:00:00Z`);
  t.setUTCDate(t.getUTCDate() + 1);
  return t.toISOString().slice(0, 10);
}

/**
 * The request's checks, before anything is written (the hosted route answers a 400 before it starts streaming): the
 * dates, and the issuer when one is named; its row id.
 */
export async function checkArchiveRequest(ctx: ServiceContext, accountId: number, opts: Pick<ArchiveExportOptions, 'since' | 'until' | 'emisor'>): Promise<number | undefined> {
  const findings = [];
  if (!DATE.test(opts.since) || Number.isNaN(Date.parse(opts.since))) findings.push({ path: 'since', message: 'must be a date YYYY-MM-DD' });
  if (!DATE.test(opts.until) || Number.isNaN(Date.parse(opts.until))) findings.push({ path: 'until', message: 'must be a date YYYY-MM-DD' });
  if (findings.length === 0 && opts.until < opts.since) findings.push({ path: 'until', message: `must not be before --since (${opts.since})` });
  if (findings.length) throw ServiceError.validation(findings);
  let issuerId: number | undefined;
  if (opts.emisor !== undefined) {
    const found = await ctx.store.db.selectFrom('issuers').select('id').where('account_id', '=', accountId).where('identificacion', '=', opts.emisor.trim()).executeTakeFirst();
    if (!found) throw ServiceError.validation([{ path: 'emisor', message: `no issuer ${opts.emisor.trim()} in this account` }]);
    issuerId = found.id;
  }
  return issuerId;
}

export async function exportArchive(ctx: ServiceContext, accountId: number, out: NodeJS.WritableStream, opts: ArchiveExportOptions): Promise<ArchiveExportResult> {
  const issuerId = await checkArchiveRequest(ctx, accountId, opts);
  const end = nextDay(opts.until);
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'fecr-archive-'));
  const manifestFile = path.join(tmp, MANIFEST_NAME);
  const manifest = createWriteStream(manifestFile, { mode: 0o600 });
  const pack = tar.pack();
  const written = pipeline(pack, createGzip(), out, { end: opts.endOutput ?? true });
  written.catch(() => undefined); // awaited below; a failure here must not be unhandled meanwhile
  const result: ArchiveExportResult = { documents: { ventas: 0, compras: 0 }, files: 0, bytes: 0 };
  const mtime = new Date(`${opts.until}T00:00:00Z`);
  const add = async (data: Buffer, line: Omit<ManifestLine, 'sha256' | 'size'>): Promise<void> => {
    await new Promise<void>((resolve, reject) => pack.entry({ name: line.file, size: data.length, mtime, mode: 0o644 }, data, (e) => (e ? reject(e) : resolve())));
    const full: ManifestLine = { ...line, env: ctx.hacienda.environment, sha256: createHash('sha256').update(data).digest('hex'), size: data.length };
    if (!manifest.write(JSON.stringify(full) + '\n')) await once(manifest, 'drain');
    result.files++;
    result.bytes += data.length;
  };
  try {
    // Sales: the issuer's comprobantes dated in the period.
    for (let after = 0; ; ) {
      let q = ctx.store.db
        .selectFrom('documents')
        .select(['id', 'clave', 'kind', 'state', 'xml', 'response_xml', 'detalle_mensaje', 'fecha_emision', 'total_comprobante', 'moneda', 'created_at', 'decided_at'])
        // `+account_id`: no index on it, so SQLite walks the primary key from `after` (an index on the account made
        // every page sort all of the account's rows, XML included: quadratic). PostgreSQL reads `+x` as `x`.
        .where(sql<number>`+account_id`, '=', accountId)
        .where('kind', 'in', SALE_KINDS)
        .where('fecha_emision', '>=', opts.since)
        .where('fecha_emision', '<', end)
        .where('id', '>', after);
      if (issuerId !== undefined) q = q.where(sql<number>`+issuer_id`, '=', issuerId);
      const rows = (await q.orderBy('id').limit(ARCHIVE_PAGE).execute()) as SaleRow[];
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.id;
      for (const r of rows) {
        const base = { clave: r.clave, kind: r.kind, side: 'ventas' as const, fechaEmision: r.fecha_emision, totalComprobante: r.total_comprobante, moneda: r.moneda, estado: r.state };
        const dir = `ventas/${r.clave}/`;
        await add(Buffer.from(r.xml, 'utf8'), { ...base, file: `${dir}comprobante.xml`, role: 'comprobante' });
        if (r.response_xml) await add(Buffer.from(r.response_xml, 'utf8'), { ...base, file: `${dir}respuesta-hacienda.xml`, role: 'respuesta_hacienda' });
        if (opts.pdf && opts.renderPdf) await add(await opts.renderPdf(r), { ...base, file: `${dir}comprobante.pdf`, role: 'pdf' });
        result.documents.ventas++;
      }
    }
    // Purchases: the received documents dated in the period, and our MensajeReceptor with Hacienda's answer to it.
    for (let after = 0; ; ) {
      let q = ctx.store.db
        .selectFrom('recibidos as r')
        .leftJoin('documents as d', 'd.id', 'r.mensaje_document_id')
        .select(['r.id', 'r.clave', 'r.kind', 'r.estado', 'r.xml', 'r.hacienda_xml', 'r.fecha_emision', 'r.total_comprobante', 'r.total_impuesto', 'r.moneda'])
        .select(['d.kind as mr_kind', 'd.state as mr_state', 'd.xml as mr_xml', 'd.response_xml as mr_response'])
        .where(sql<number>`+r.account_id`, '=', accountId)
        .where('r.clave', 'is not', null)
        .where('r.fecha_emision', '>=', opts.since)
        .where('r.fecha_emision', '<', end)
        .where('r.id', '>', after);
      if (issuerId !== undefined) q = q.where(sql<number>`+r.issuer_id`, '=', issuerId);
      const rows = await q.orderBy('r.id').limit(ARCHIVE_PAGE).execute();
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.id;
      for (const r of rows) {
        const clave = r.clave!;
        const base = { clave, kind: r.kind ?? '', side: 'compras' as const, fechaEmision: r.fecha_emision ?? '', totalComprobante: r.total_comprobante, totalImpuesto: r.total_impuesto, moneda: r.moneda, estado: r.estado };
        const dir = `compras/${clave}/`;
        await add(Buffer.from(r.xml, 'utf8'), { ...base, file: `${dir}comprobante.xml`, role: 'comprobante' });
        if (r.hacienda_xml) await add(Buffer.from(r.hacienda_xml, 'utf8'), { ...base, file: `${dir}respuesta-hacienda.xml`, role: 'respuesta_hacienda' });
        if (r.mr_xml) {
          const mr = { ...base, kind: r.mr_kind ?? 'MR', estado: r.mr_state ?? '' };
          await add(Buffer.from(r.mr_xml, 'utf8'), { ...mr, file: `${dir}mensaje-receptor.xml`, role: 'mensaje_receptor' });
          if (r.mr_response) await add(Buffer.from(r.mr_response, 'utf8'), { ...mr, file: `${dir}mensaje-receptor-respuesta-hacienda.xml`, role: 'mensaje_receptor_respuesta_hacienda' });
        }
        result.documents.compras++;
      }
    }
    manifest.end();
    await once(manifest, 'close');
    const { size } = await fsp.stat(manifestFile);
    await new Promise<void>((resolve, reject) => {
      const entry = pack.entry({ name: MANIFEST_NAME, size, mtime, mode: 0o644 }, (e) => (e ? reject(e) : resolve()));
      createReadStream(manifestFile).on('error', reject).pipe(entry);
    });
    pack.finalize();
    await written;
    return result;
  } catch (e) {
    pack.destroy(e as Error);
    manifest.destroy();
    throw e;
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}
