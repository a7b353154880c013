/**
 * Import of suppliers' comprobantes (issue 16): each file is checked before anything is stored (core/received/check.ts
 * for what the bytes say; here the XSD, whether the buyer is one of the account's issuers, and the state at Hacienda,
 * GET recepción/{clave} with the buyer's credentials, keeping the MensajeHacienda), then stored in ONE statement with
 * its webhook event: `pendiente` when every check passed, `invalido` with every finding otherwise (never half stored).
 * A refused file is stored as its sha256 and findings, not its bytes; a file over the size limit (core/received/limits.ts)
 * is refused unread.
 *
 * One row per document (issue 25): the same bytes imported again return the stored row (per account and sha256), and
 * so does the same document in other bytes (a BOM, a trailing newline, another valid signature: the same clave, or the
 * same issuer and consecutivo) once a valid row holds it: "already imported", not asked of Hacienda, nothing stored.
 * A copy that fails the checks of its bytes (altered, signed by another) is refused as any such file, with a finding
 * naming the row kept: never a second valid row. A refused copy does not hold the document: the genuine one can
 * still be imported after it. The store's unique indexes say the same (migration 0010), so two imports at once
 * cannot both store it.
 *
 * An importer keeps its XSD validator and Hacienda clients across batches (a folder is imported in batches).
 */
import { createXsdValidator, type XsdValidator } from '../../adapters/xsd/index.js';
import type { ReceivedAnalysis } from '../../core/received/check.js';
import { emisorConsecutivo, RECEIVED_MAX_BYTES } from '../../core/received/limits.js';
import type { Finding } from '../../core/model.js';
import type { SchemaName } from '../../core/xml/kinds.js';
import type { ReceptionClient, ReceptionStatus } from '../../hacienda/index.js';
import type { Issuer, RecibidoEstado } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import { isUniqueViolation } from '../issuers.js';
import { analyzeFile } from './analyze.js';
import { queueRecibidoEvent } from './events.js';
import { buyerReceptionClient, notAnswerableYet } from './hacienda-state.js';
import { recibidosTrust } from './trust.js';

export interface ImportFile {
  /** What the caller calls it (a file name, `-`, `body`): echoed in the result. */
  name: string;
  bytes: Uint8Array;
  /**
   * The file's size when `bytes` hold only its beginning (a bounded read stops at the limit + 1 byte): such a file is
   * refused as over the limit, and its sha256 is that of the bytes read.
   */
  size?: number;
}

export interface ImportResult {
  archivo: string;
  id: number;
  clave: string | null;
  estado: RecibidoEstado;
  /** False when the same bytes, or the same document, had been imported before (nothing stored this time). */
  creado: boolean;
  tipo: string | null;
  emisor: string | null;
  totalComprobante: string | null;
  haciendaEstado: string | null;
  hallazgos: Finding[];
  avisos: Finding[];
}

interface Checked {
  file: ImportFile;
  a: ReceivedAnalysis;
  issuer?: Issuer;
  hacienda?: ReceptionStatus;
}

const stripZeros = (s: string) => s.replace(/^0+/, '');

export class RecibidosImporter {
  private xsd: XsdValidator | undefined;
  private readonly clients = new Map<number, ReceptionClient>();
  private issuers: Map<string, Issuer> | undefined;

  /**
   * `beforeHacienda`: awaited before the first question to Hacienda (local mode starts its emulator meanwhile, while
   * the first files are read and checked).
   */
  constructor(
    private readonly ctx: ServiceContext,
    private readonly accountId: number,
    private readonly beforeHacienda?: () => Promise<void>,
  ) {}

  /** Checks and stores a batch; results in the order of `files`. */
  async importMany(files: ImportFile[]): Promise<ImportResult[]> {
    const now = new Date(this.ctx.now());
    const limit = this.ctx.recibidos?.maxBytes ?? RECEIVED_MAX_BYTES;
    const trust = recibidosTrust(this.ctx);
    // CPU-bound (a 0.9 MB document ≈ 0.25 s): on the client API's threads (ctx.heavyWork), else here.
    const analyses = this.ctx.heavyWork ? await this.ctx.heavyWork.analyzeReceived(files, limit, now, trust) : files.map((f) => analyzeFile(f, limit, now, trust));
    const checked: Checked[] = files.map((file, i) => ({ file, a: analyses[i]! }));
    const known = await this.existing(checked.map((c) => c.a.sha256));
    const unknown = checked.filter((c) => !known.has(c.a.sha256));
    const documents = await this.existingDocuments(unknown.map((c) => emisorConsecutivo(c.a.clave)));
    // A sound copy of a document a valid row holds is not checked further (nor asked of Hacienda).
    const fresh = unknown.filter((c) => !(documents.has(emisorConsecutivo(c.a.clave) ?? '') && c.a.findings.length === 0));
    await this.checkXsd(fresh);
    await this.checkBuyer(fresh);
    await this.checkHacienda(fresh);
    const out: ImportResult[] = [];
    const stored = new Map<string, ImportResult>();
    const storedDocuments = new Map<string, ImportResult & { sha256: string }>();
    for (const c of checked) {
      const prior = known.get(c.a.sha256) ?? stored.get(c.a.sha256);
      if (prior) {
        out.push({ ...prior, archivo: c.file.name, creado: false });
        continue;
      }
      const key = emisorConsecutivo(c.a.clave);
      const held = key ? (documents.get(key) ?? storedDocuments.get(key)) : undefined;
      if (held && c.a.findings.length === 0) {
        out.push(sameDocument(held, c));
        continue;
      }
      if (held) c.a.findings.push({ path: 'Clave', message: `already imported from other bytes (received row ${held.id}, ${held.estado}); this copy fails its checks: refused, the stored one is kept` });
      const r = await this.store(c);
      stored.set(c.a.sha256, r);
      if (key && r.estado !== 'invalido') storedDocuments.set(key, { ...r, sha256: c.a.sha256 });
      out.push(r);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.xsd?.close?.();
    await Promise.allSettled([...this.clients.values()].map((c) => c.close()));
  }

  // --- checks ----------------------------------------------------------------------------------------

  private async checkXsd(list: Checked[]): Promise<void> {
    const bySchema = new Map<SchemaName, Checked[]>();
    for (const c of list) {
      if (!c.a.xsd || c.a.text === undefined) continue;
      bySchema.set(c.a.xsd, [...(bySchema.get(c.a.xsd) ?? []), c]);
    }
    for (const [schema, group] of bySchema) {
      this.xsd ??= createXsdValidator({ persistentShell: true });
      const results = await this.xsd.validate(
        group.map((c) => c.a.text!),
        schema,
      );
      group.forEach((c, i) => {
        const r = results[i];
        // Hacienda lists the first schema error only; so does this finding.
        if (r && !r.valid) c.a.findings.unshift({ path: 'xsd', message: `not valid against ${schema} v4.4: ${r.errors[0]?.message ?? 'invalid'}` });
      });
    }
  }

  private async checkBuyer(list: Checked[]): Promise<void> {
    if (!this.issuers) {
      const rows = await this.ctx.store.db.selectFrom('issuers').selectAll().where('account_id', '=', this.accountId).execute();
      this.issuers = new Map(rows.map((r) => [stripZeros(r.identificacion), r]));
    }
    for (const c of list) {
      if (!c.a.clave) continue;
      const buyer = c.a.buyer;
      const issuer = buyer ? this.issuers.get(stripZeros(buyer.numero)) : undefined;
      if (issuer) c.issuer = issuer;
      else {
        const who = c.a.kind === 'FEC' ? 'Emisor' : 'Receptor';
        c.a.findings.push({
          path: `${who}/Identificacion/Numero`,
          message: buyer ? `${buyer.numero} is not an issuer of this account: the comprobante is not addressed to us` : `the comprobante has no ${who} identificación: it is not addressed to us`,
        });
      }
    }
  }

  /** GET recepción/{clave} for each document that passed every other check (8 at a time). */
  private async checkHacienda(list: Checked[]): Promise<void> {
    const todo = list.filter((c) => c.issuer && c.a.findings.length === 0);
    if (todo.length > 0) await this.beforeHacienda?.();
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < todo.length; i = next++) {
        const c = todo[i]!;
        try {
          c.hacienda = await this.clientFor(c.issuer!).getStatus(c.a.clave!);
        } catch (e) {
          c.a.warnings.push({ path: 'hacienda', message: `the state at Hacienda could not be asked: ${e instanceof Error ? e.message : String(e)}` });
          continue;
        }
        const st = c.hacienda;
        if (st.estado === 'rechazado') {
          c.a.findings.push({ path: 'hacienda', message: `Hacienda rejected this comprobante${st.mensaje?.detalleMensaje ? `: ${st.mensaje.detalleMensaje.split('\n')[0]}` : ''}` });
          continue;
        }
        // Answering it is refused (unless forced) until Hacienda has accepted it; asked again then (decide.ts).
        const why = notAnswerableYet(st, '(yet)');
        if (why) c.a.warnings.push({ path: 'hacienda', message: `${why}; an answer is refused until Hacienda has it (asked again when answering)` });
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, todo.length) }, worker));
  }

  private clientFor(issuer: Issuer): ReceptionClient {
    let client = this.clients.get(issuer.id);
    if (!client) {
      client = buyerReceptionClient(this.ctx, issuer);
      this.clients.set(issuer.id, client);
    }
    return client;
  }

  // --- store -----------------------------------------------------------------------------------------

  private async existing(shas: string[]): Promise<Map<string, ImportResult>> {
    const out = new Map<string, ImportResult>();
    if (shas.length === 0) return out;
    const rows = await this.ctx.store.db.selectFrom('recibidos').select(RESULT_COLUMNS).where('account_id', '=', this.accountId).where('sha256', 'in', [...new Set(shas)]).execute();
    for (const r of rows) out.set(r.sha256, resultOfRow(r, '', false));
    return out;
  }

  /** The valid rows holding these documents (by issuer + consecutivo, which the clave holds), by that key. */
  private async existingDocuments(keys: (string | null)[]): Promise<Map<string, ImportResult & { sha256: string }>> {
    const out = new Map<string, ImportResult & { sha256: string }>();
    const wanted = [...new Set(keys.filter((k): k is string => k !== null))];
    if (wanted.length === 0) return out;
    const rows = await this.ctx.store.db
      .selectFrom('recibidos')
      .select([...RESULT_COLUMNS, 'emisor_consecutivo'])
      .where('account_id', '=', this.accountId)
      .where('estado', '!=', 'invalido')
      .where('emisor_consecutivo', 'in', wanted)
      .execute();
    for (const r of rows) out.set(r.emisor_consecutivo!, { ...resultOfRow(r, '', false), sha256: r.sha256 });
    return out;
  }

  private async store(c: Checked): Promise<ImportResult> {
    const { a } = c;
    const now = this.ctx.now();
    const estado: RecibidoEstado = a.findings.length > 0 ? 'invalido' : 'pendiente';
    const row = {
      account_id: this.accountId,
      issuer_id: c.issuer?.id ?? null,
      sha256: a.sha256,
      clave: a.clave ?? null,
      emisor_consecutivo: emisorConsecutivo(a.clave),
      kind: a.kind ?? null,
      version: a.version ?? null,
      estado,
      emisor_tipo: a.emisor?.tipo ?? null,
      emisor_numero: a.emisor?.numero ?? null,
      emisor_nombre: a.emisor?.nombre ?? null,
      receptor_tipo: a.receptor?.tipo ?? null,
      receptor_numero: a.receptor?.numero ?? null,
      fecha_emision: a.fechaEmision ?? null,
      moneda: a.moneda ?? null,
      tipo_cambio: a.tipoCambio ?? null,
      total_comprobante: a.totalComprobante ?? null,
      total_impuesto: a.totalImpuesto ?? null,
      iva_json: JSON.stringify(a.iva),
      hallazgos_json: JSON.stringify(a.findings),
      avisos_json: JSON.stringify(a.warnings),
      // A refused file is kept as its sha256 and findings only (issue 25: refused files once filled the database).
      xml: estado === 'invalido' ? '' : (a.text ?? Buffer.from(c.file.bytes).toString('latin1')),
      hacienda_estado: c.hacienda?.estado ?? null,
      hacienda_xml: c.hacienda?.respuestaXml ? c.hacienda.respuestaXml.toString('utf8') : null,
      mensaje: null,
      detalle: null,
      condicion_impuesto: null,
      iva_acreditable: null,
      gasto_aplicable: null,
      mensaje_document_id: null,
      created_at: now,
      updated_at: now,
      decided_at: null,
    };
    try {
      const id = await this.ctx.store.db.transaction().execute(async (trx) => {
        const inserted = await trx.insertInto('recibidos').values(row).returning('id').executeTakeFirstOrThrow();
        await queueRecibidoEvent(trx, now, {
          accountId: this.accountId,
          recibidoId: inserted.id,
          folioId: a.clave ?? a.sha256,
          event: { type: 'recibido.importado', estado, emisor: a.emisor?.numero ?? null, totalComprobante: a.totalComprobante ?? null, hallazgos: a.findings, avisos: a.warnings },
        });
        return Number(inserted.id);
      });
      this.ctx.logger.info({ accountId: this.accountId, clave: a.clave, estado }, 'received document imported');
      return resultOfRow({ ...row, id }, c.file.name, true);
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      // Imported concurrently by another request: the same bytes, or the same document, the stored row.
      const prior = (await this.existing([a.sha256])).get(a.sha256);
      if (prior) return { ...prior, archivo: c.file.name, creado: false };
      const key = emisorConsecutivo(a.clave);
      const held = key ? (await this.existingDocuments([key])).get(key) : undefined;
      if (!held) throw e;
      return sameDocument(held, c);
    }
  }
}

const RESULT_COLUMNS = ['id', 'sha256', 'clave', 'estado', 'kind', 'emisor_numero', 'total_comprobante', 'hacienda_estado', 'hallazgos_json', 'avisos_json'] as const;

/** "Already imported": the row that holds this document, with a word on the bytes, which differ. */
function sameDocument(held: ImportResult & { sha256: string }, c: Checked): ImportResult {
  const { sha256, ...r } = held;
  const other = c.a.clave !== r.clave ? `, under the clave ${c.a.clave} (the same issuer and consecutivo)` : '';
  return {
    ...r,
    archivo: c.file.name,
    creado: false,
    avisos: [...r.avisos, { path: 'archivo', message: `already imported from other bytes (sha256 ${sha256.slice(0, 16)}…)${other}: the stored copy is kept, this one is not stored` }],
  };
}

export function resultOfRow(
  r: { id: number; clave: string | null; estado: RecibidoEstado; kind: string | null; emisor_numero: string | null; total_comprobante: string | null; hacienda_estado: string | null; hallazgos_json: string; avisos_json: string },
  archivo: string,
  creado: boolean,
): ImportResult {
  return {
    archivo,
    id: Number(r.id),
    clave: r.clave,
    estado: r.estado,
    creado,
    tipo: r.kind,
    emisor: r.emisor_numero,
    totalComprobante: r.total_comprobante,
    haciendaEstado: r.hacienda_estado,
    hallazgos: JSON.parse(r.hallazgos_json) as Finding[],
    avisos: JSON.parse(r.avisos_json) as Finding[],
  };
}

/** Imports one batch with a short-lived importer. */
export async function importRecibidos(ctx: ServiceContext, accountId: number, files: ImportFile[]): Promise<ImportResult[]> {
  const importer = new RecibidosImporter(ctx, accountId);
  try {
    return await importer.importMany(files);
  } finally {
    await importer.close();
  }
}
